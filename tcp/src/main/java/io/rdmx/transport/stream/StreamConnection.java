package io.rdmx.transport.stream;

import io.rdmx.transport.wire.FrameDescriptor;
import io.rdmx.transport.wire.Placer;
import io.rdmx.transport.wire.RegionViews;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.unix.FileDescriptor;
import io.netty.channel.unix.UnixChannel;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.Post;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.Status;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.internal.OutstandingRing;
import io.rdmx.transport.internal.RegionImpl;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A connection of a stream provider. The send side: requests get consecutive sequence numbers and wait in the
 * outstanding ring (bounded by the send-queue depth, primitive arrays: nothing allocated per request) until a
 * cumulative ACK completes them in order. Data is sent straight from the registered region (no copy in user
 * space); with a {@link Placer} (shm), WRITE data is copied into the peer's mapped memory by the posting thread
 * instead, and only WRITE_WITH_IMM sends a (data-less) frame. The receive side lives in {@link StreamHandler}.
 *
 * <p>Direct I/O ({@link StreamNode#directIo()}, tcp on epoll): the posting thread writes its frame to the socket
 * itself, under {@link #sendLock}, with one {@code writev} of a reused header and the region's memory, when
 * nothing handed to the event loop is still unwritten; what the socket does not take at once (it would block)
 * is handed to the event loop, and so is every frame after it until the event loop has written it all. So
 * frames leave in posting order (a WRITE's data before the notification posted after it) whoever writes them,
 * and a frame is never split by another. The event loop's ACKs go the same way. Completions are delivered
 * outside {@link #sendLock}, so an {@link io.rdmx.transport.InlineCompletionHandler} may post.
 */
public final class StreamConnection extends AbstractConnection {
    private final Channel channel;
    private final StreamHandler handler;
    private final Placer placer;
    /** Completions to an inline handler: never emitted under {@link #sendLock} (the placer path emits there). */
    private final boolean inlineCompletions;
    /** Guards the send side; the event loop's ACKs never wait for it (a holder carries them: {@link SendLock}). */
    private final SendLock sendLock = new SendLock(this::writeOwedAck);
    private long nextSeq;

    /**
     * Guards the outstanding ring (and nothing else: never held across a system call), so that the event loop
     * completing requests never waits for a posting thread in its {@code writev}. Taken inside sendLock.
     */
    private final java.util.concurrent.locks.ReentrantLock ringLock = new java.util.concurrent.locks.ReentrantLock();
    /** The outstanding requests, guarded by ringLock. */
    private final OutstandingRing pending;

    // direct I/O, guarded by sendLock
    private final FileDescriptor fd;
    private final ByteBuffer header;
    private final ByteBuffer[] iov = new ByteBuffer[2];
    private final RegionViews views = new RegionViews();
    /** Set (under sendLock) before the socket is closed: no direct write after it. */
    private boolean socketClosing;
    /** Frames handed to the event loop and not yet written; starts at 1 until the handshake's frames are out. */
    private final AtomicInteger handedOff = new AtomicInteger(1);
    private final ChannelFutureListener handOffDone = f -> {
        handedOff.decrementAndGet();
        if (!f.isSuccess() && f.channel().isOpen()) {
            f.channel().pipeline().fireExceptionCaught(f.cause());
        }
    };
    private long directFrames;
    private long handedOffFrames;
    /** ACKs written in front of a request frame, in its {@code writev}, and ACKs written as a frame of their own. */
    private long carriedAcks;
    private long ackFrames;
    /** Frames handed off and not yet given to Netty, with the listener of each; guarded by sendLock. */
    private final ArrayDeque<ByteBuf> outbox = new ArrayDeque<>();
    private final ArrayDeque<ChannelFutureListener> outboxListeners = new ArrayDeque<>();
    private final Runnable drain = () -> {
        sendLock.lock();
        try {
            drainOutbox();
        } finally {
            sendLock.unlock();
        }
    };

    StreamConnection(StreamNode node, String peerName, String peerAddress, List<RemoteRegion> regions,
                     Channel channel, StreamHandler handler, Placer placer) {
        super(node, peerName, peerAddress, regions);
        this.channel = channel;
        this.handler = handler;
        this.placer = placer;
        this.pending = new OutstandingRing(node.options().sendQueueDepth());
        this.inlineCompletions = placer == null && node.directIo();
        boolean direct = inlineCompletions && channel instanceof UnixChannel;
        this.fd = direct ? ((UnixChannel) channel).fd() : null;
        // room for an ACK carried in front of the frame's own header
        this.header = direct ? ByteBuffer.allocateDirect(FrameDescriptor.HEADER_LENGTH
            + FrameDescriptor.WRITE_HEADER_LENGTH)
            .order(ByteOrder.LITTLE_ENDIAN) : null;
    }

    /** @return the Netty channel (tests, diagnostics) */
    public Channel channel() {
        return channel;
    }

    /** Closes the channel at once, as a dying process would: no ERROR frame; waits until it is closed. */
    @Override
    public void abort() {
        channel.close().awaitUninterruptibly();
    }

    /** @return read system calls on this connection's socket so far (tests, diagnostics) */
    public long socketReads() {
        return handler.reads();
    }

    /** @return frames written to the socket by the thread that posted them (direct I/O) */
    public long directFrames() {
        sendLock.lock();
        try {
            return directFrames;
        } finally {
            sendLock.unlock();
        }
    }

    /** @return frames handed to the event loop to write (direct I/O off, the socket full, or behind those) */
    public long handedOffFrames() {
        sendLock.lock();
        try {
            return handedOffFrames;
        } finally {
            sendLock.unlock();
        }
    }

    /** @return the send lock (tests) */
    SendLock sendLock() {
        return sendLock;
    }

    /** @return ACKs written in front of a request frame (in the same system call), and ACKs sent alone */
    public long[] ackCounts() {
        sendLock.lock();
        try {
            return new long[] {carriedAcks, ackFrames};
        } finally {
            sendLock.unlock();
        }
    }

    /**
     * Event loop: acknowledges every request up to {@code seq} (cumulative). Never waits for the send lock: if a
     * posting thread holds it, that thread writes the ACK in front of its next frame or when it lets go.
     *
     * @param seq the highest sequence number handled
     */
    void ack(long seq) {
        sendLock.owe(seq);
    }

    /** Under sendLock: an owed ACK whose holder had no frame to carry it on goes alone. */
    private void writeOwedAck(long seq) {
        if (!isOpen()) {
            return;
        }
        ackFrames++;
        if (!writeDirect(FrameDescriptor.TYPE_ACK, 0, seq, 0, 0, 0, 0, null, 0, 0)) {
            handOff(FrameCodec.simple(channel.alloc(), FrameDescriptor.TYPE_ACK, seq));
        }
    }

    /**
     * Event loop: everything the handshake wrote before is on the socket; direct writes may start (once nothing
     * else handed off is pending).
     */
    void handshakeFlushed() {
        handedOff.decrementAndGet();
    }

    /** Event loop or any thread, before the socket is closed: no direct write may start after this returns. */
    void socketClosing() {
        sendLock.lock();
        try {
            socketClosing = true;
        } finally {
            sendLock.unlock();
        }
    }

    @Override
    protected boolean supportsInlineCompletions() {
        return inlineCompletions;
    }

    @Override
    public boolean canMapRemote() {
        return placer != null;
    }

    /**
     * With a {@link Placer} (shm): the peer's region file, mapped after the same checks as a placed WRITE (only
     * under the directory that was dialed, owner and mode checked, symbolic links refused).
     */
    @Override
    public ByteBuffer mapRemote(RemoteRegion region) throws RdmxException {
        if (placer == null) {
            return null;
        }
        checkOpen();
        sendLock.lock();
        try {
            try {
                return placer.map(region.remoteKey(), region.length());
            } catch (RdmxException e) {
                throw new RdmxException("peer '" + peerName() + "': " + e.getMessage(), e);
            }
        } finally {
            sendLock.unlock();
        }
    }

    private int pendingCount() {
        ringLock.lock();
        try {
            return pending.count();
        } finally {
            ringLock.unlock();
        }
    }

    private int addPendingUnlessIdle(long seq, Opcode op, long wrId, int length, boolean signaled) {
        return addPendingUnlessIdle(seq, op, wrId, length, signaled, false);
    }

    /**
     * Under sendLock: adds a request to the outstanding ring, unless nothing is outstanding and {@code always}
     * is false (a placed WRITE then completes at once).
     *
     * @return requests outstanding now (0: not added)
     */
    private int addPendingUnlessIdle(long seq, Opcode op, long wrId, int length, boolean signaled,
                                     boolean always) {
        ringLock.lock();
        try {
            if (!always && pending.count() == 0) {
                return 0;
            }
            pending.add(seq, op, wrId, length, signaled);
            return pending.count();
        } finally {
            ringLock.unlock();
        }
    }

    @Override
    protected int postSendQueue(Opcode op, long wrId, RegionImpl local, int localOffset, int length,
                                RemoteRegion remote, long remoteOffset, int imm, boolean signaled)
        throws ConnectionClosedException {
        Throwable failure = null;
        sendLock.lock();
        try {
            checkOpen();
            if (pendingCount() >= pending.capacity()) {
                return Post.SEND_QUEUE_FULL;
            }
            boolean write = op != Opcode.SEND;
            if (write && placer != null) {
                String err = placer.place(remote.remoteKey(), remoteOffset, local, localOffset, length);
                if (err != null) {
                    emit(op, wrId, Status.REMOTE_ACCESS_ERROR, 0, 0, false, err);
                    failure = new ConnectionClosedException(peerName(), "remote access error: " + err, null);
                } else if (op == Opcode.WRITE) {
                    // Placed already; completes in order behind whatever is still outstanding.
                    if (addPendingUnlessIdle(nextSeq, op, wrId, length, signaled) == 0 && signaled) {
                        emit(op, wrId, Status.SUCCESS, length, 0, false, null);
                    }
                    return Post.OK;
                }
            }
            if (failure == null) {
                long seq = ++nextSeq;
                int count = addPendingUnlessIdle(seq, op, wrId, length, signaled, true);
                int flags = FrameDescriptor.requestFlags(op, signaled, placer != null, count, pending.capacity());
                if (write) {
                    int data = placer == null ? length : 0;
                    if (!writeDirect(FrameDescriptor.TYPE_WRITE, flags, seq, remote.remoteKey(), imm, remoteOffset,
                        length, local, localOffset, data)) {
                        ByteBuf frame = FrameCodec.writeHeader(channel.alloc(), flags, seq, remote.remoteKey(), imm,
                            remoteOffset, length);
                        handOff(data > 0 ? withPayload(frame, local, localOffset, data) : frame);
                    }
                } else if (!writeDirect(FrameDescriptor.TYPE_SEND, flags, seq, 0, 0, 0, length, local,
                    localOffset, length)) {
                    ByteBuf frame = FrameCodec.sendHeader(channel.alloc(), flags, seq, length);
                    handOff(length > 0 ? withPayload(frame, local, localOffset, length) : frame);
                }
            }
        } finally {
            sendLock.unlock();
        }
        if (failure != null) {
            fail(failure);
        }
        return Post.OK;
    }

    /**
     * Sends a control frame of the established connection (ACK, PING) in order with the requests: written
     * directly when possible, else handed to the event loop. Any thread; nothing once the connection is down.
     *
     * @param type {@link FrameDescriptor#TYPE_PING}
     * @param seq the sequence number
     */
    void sendControl(int type, long seq) {
        sendLock.lock();
        try {
            if (!isOpen()) {
                return;
            }
            if (!writeDirect(type, 0, seq, 0, 0, 0, 0, null, 0, 0)) {
                handOff(FrameCodec.simple(channel.alloc(), type, seq));
            }
        } finally {
            sendLock.unlock();
        }
    }

    /**
     * Hands a complete frame (NAK) to the event loop, behind everything written or handed off before. Any thread.
     *
     * @param frame the frame (released by Netty)
     */
    void sendFrame(ByteBuf frame) {
        sendLock.lock();
        try {
            // an ACK owed before this frame goes before it
            long ack = sendLock.takeOwed();
            if (ack != 0) {
                writeOwedAck(ack);
            }
            handOff(frame);
        } finally {
            sendLock.unlock();
        }
    }

    /**
     * Under sendLock: hands a frame to the event loop, counted until written. Frames wait in {@link #outbox}
     * (FIFO) until the event loop moves them to Netty: a frame handed off on the event loop itself must not
     * overtake one a posting thread handed off before (Netty writes a frame from its own loop at once, ahead
     * of the tasks queued by other threads).
     */
    private void handOff(ByteBuf frame) {
        handOff(frame, null);
    }

    private void handOff(ByteBuf frame, ChannelFutureListener then) {
        handedOffFrames++;
        if (fd == null) {
            if (then == null) {
                channel.writeAndFlush(frame, channel.voidPromise());
            } else {
                channel.writeAndFlush(frame).addListener(then);
            }
            return;
        }
        handedOff.incrementAndGet();
        boolean first = outbox.isEmpty();
        outbox.addLast(frame);
        outboxListeners.addLast(then == null ? handOffDone : then);
        if (channel.eventLoop().inEventLoop()) {
            drainOutbox();
        } else if (first) {
            try {
                channel.eventLoop().execute(drain);
            } catch (RejectedExecutionException e) {
                // the event loop is gone (node closed): nothing will be written any more
                ByteBuf f;
                while ((f = outbox.pollFirst()) != null) {
                    outboxListeners.pollFirst();
                    f.release();
                    handedOff.decrementAndGet();
                }
            }
        }
    }

    /** Event loop, under sendLock: moves the handed-off frames to Netty, in order, and flushes. */
    private void drainOutbox() {
        ByteBuf f;
        boolean any = false;
        while ((f = outbox.pollFirst()) != null) {
            ChannelFutureListener l = outboxListeners.pollFirst();
            io.netty.channel.ChannelPromise p = channel.newPromise().addListener(handOffDone);
            if (l != handOffDone) {
                p.addListener(l);
            }
            channel.write(f, p);
            any = true;
        }
        if (any) {
            channel.flush();
        }
    }

    /**
     * Under sendLock: writes a frame to the socket on this thread, if direct I/O is on, nothing handed off is
     * unwritten and the socket is open; what the socket does not take is handed off.
     *
     * @return false if nothing was written (the caller hands the whole frame off)
     */
    private boolean writeDirect(int type, int flags, long seq, int rkey, int imm, long remoteOffset, int dataLength,
                                RegionImpl local, int localOffset, int carried) {
        if (fd == null || handedOff.get() != 0 || socketClosing || !fd.isOpen()) {
            return false;
        }
        int fl = type == FrameDescriptor.TYPE_WRITE ? FrameDescriptor.WRITE_HEADER_LENGTH
            : FrameDescriptor.HEADER_LENGTH;
        ByteBuffer h = header;
        h.clear();
        // an ACK the event loop owes goes in front of this frame, in the same system call (and, most often, the
        // same segment): no frame, writev and read of its own
        long ack = type == FrameDescriptor.TYPE_ACK ? 0 : sendLock.takeOwed();
        int b = 0;
        if (ack != 0) {
            putHeader(h, 0, FrameDescriptor.TYPE_ACK, 0, FrameDescriptor.HEADER_LENGTH, ack);
            b = FrameDescriptor.HEADER_LENGTH;
        }
        putHeader(h, b, type, flags, fl + carried, seq);
        if (type == FrameDescriptor.TYPE_WRITE) {
            h.putInt(b + FrameDescriptor.WRITE_KEY_OFFSET, rkey);
            h.putInt(b + FrameDescriptor.WRITE_IMM_OFFSET, imm);
            h.putLong(b + FrameDescriptor.WRITE_REMOTE_OFFSET_OFFSET, remoteOffset);
            h.putInt(b + FrameDescriptor.WRITE_DATA_LENGTH_OFFSET, dataLength);
            h.putInt(b + FrameDescriptor.WRITE_DATA_LENGTH_OFFSET + 4, 0);
        }
        int hl = b + fl;
        h.limit(hl);
        iov[0] = h;
        int n = 1;
        if (carried > 0) {
            ByteBuffer v = views.view(local);
            v.clear();
            v.position(localOffset).limit(localOffset + carried);
            iov[1] = v;
            n = 2;
        }
        long written;
        try {
            written = fd.writev(iov, 0, n, Long.MAX_VALUE);
        } catch (IOException e) {
            // the event loop meets the same error on its write and takes the connection down
            sendLock.restoreOwed(ack);
            return false;
        }
        if (written == 0) {
            sendLock.restoreOwed(ack);
            return false;
        }
        directFrames++;
        if (ack != 0) {
            carriedAcks++;
        }
        long total = hl + (long) carried;
        if (written < total) {
            ByteBuf rest;
            if (written < hl) {
                rest = channel.alloc().directBuffer(hl - (int) written);
                h.position((int) written);
                rest.writeBytes(h);
                if (carried > 0) {
                    rest = withPayload(rest, local, localOffset, carried);
                }
            } else {
                int done = (int) (written - hl);
                rest = Unpooled.wrappedBuffer(local.memory().slice(localOffset + done, carried - done));
            }
            handedOffFrames--; // counted as a direct frame
            handOff(rest);
        }
        return true;
    }


    private static void putHeader(ByteBuffer h, int at, int type, int flags, int length, long seq) {
        h.put(at + FrameDescriptor.VERSION_OFFSET, (byte) FrameDescriptor.VERSION);
        h.put(at + FrameDescriptor.TYPE_OFFSET, (byte) type);
        h.putShort(at + FrameDescriptor.FLAGS_OFFSET, (short) flags);
        h.putInt(at + FrameDescriptor.LENGTH_OFFSET, length);
        h.putLong(at + FrameDescriptor.SEQ_OFFSET, seq);
    }

    private ByteBuf withPayload(ByteBuf header, RegionImpl local, int offset, int length) {
        return channel.alloc().compositeDirectBuffer(2).addComponents(true, header,
            Unpooled.wrappedBuffer(local.memory().slice(offset, length)));
    }

    /**
     * Completes every request up to a sequence number (cumulative ACK), in order, each completion delivered
     * outside the send lock. Event loop.
     *
     * @param acked the highest sequence number the peer has handled
     */
    void onAck(long acked) {
        while (true) {
            long wrId;
            Opcode op;
            int length;
            ringLock.lock();
            try {
                int i = pending.takeAcked(acked);
                if (i < 0) {
                    return;
                }
                if (!pending.signaled(i)) {
                    continue;
                }
                wrId = pending.wrId(i);
                op = pending.op(i);
                length = pending.length(i);
            } finally {
                ringLock.unlock();
            }
            emit(op, wrId, Status.SUCCESS, length, 0, false, null);
        }
    }

    /**
     * Fails one request (NAK): earlier ones completed, this one with the status; the connection goes down.
     * Event loop.
     *
     * @param seq the failed request
     * @param status its status
     * @param message the peer's explanation
     */
    void onNak(long seq, Status status, String message) {
        onAck(seq - 1);
        long wrId = 0;
        Opcode op = null;
        ringLock.lock();
        try {
            int i = pending.takeSeq(seq);
            if (i >= 0) {
                wrId = pending.wrId(i);
                op = pending.op(i);
            }
        } finally {
            ringLock.unlock();
        }
        if (op != null) {
            emit(op, wrId, status, 0, 0, false, message);
        }
        failRefused(seq, status, message);
    }

    @Override
    protected void onRecvPosted() {
        handler.recvPosted();
    }

    @Override
    protected void flushSendQueue() {
        String detail = flushDetail();
        while (true) {
            long wrId;
            Opcode op;
            ringLock.lock();
            try {
                int i = pending.take();
                if (i < 0) {
                    return;
                }
                wrId = pending.wrId(i);
                op = pending.op(i);
            } finally {
                ringLock.unlock();
            }
            emit(op, wrId, Status.FLUSHED, 0, 0, false, detail);
        }
    }

    @Override
    protected void closeTransport(Throwable cause) {
        if (placer != null) {
            placer.close();
        }
        handler.closing();
        if (channel.isActive()) {
            String why = cause == null ? "closed" : cause.getMessage();
            // behind any frame a posting thread wrote or handed off (never in the middle of one)
            sendLock.lock();
            try {
                handOff(FrameCodec.error(channel.alloc(), why), f -> f.channel().eventLoop().schedule(() -> {
                    f.channel().close();
                }, 500, TimeUnit.MILLISECONDS));
            } finally {
                sendLock.unlock();
            }
        } else {
            channel.close();
        }
    }
}
