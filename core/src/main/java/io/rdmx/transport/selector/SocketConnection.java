package io.rdmx.transport.selector;

import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.Post;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.Status;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.internal.InputFollower;
import io.rdmx.transport.internal.OutstandingRing;
import io.rdmx.transport.internal.RegionImpl;
import io.rdmx.transport.wire.FrameBuffers;
import io.rdmx.transport.wire.FrameDescriptor;
import io.rdmx.transport.wire.Placer;
import io.rdmx.transport.wire.RegionViews;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

/**
 * A connection of a stream-socket provider ({@code shm} on a Unix-domain socket, {@code tcp}) on the selector
 * engine, and the stream providers' one send side: requests get consecutive sequence numbers and wait in the
 * outstanding ring (bounded by the send-queue depth, primitive arrays: nothing allocated per request) until a
 * cumulative ACK completes them in order. With a {@link Placer} (shm), WRITE data is copied by the posting thread
 * straight into the peer's mapped region and a WRITE_WITH_IMM then sends a data-less notification frame; without
 * one (tcp) WRITE data travels in its frame. The posting thread writes its frame to the socket itself, under
 * {@link #sendLock} (one gathering write of a reused header and the region's memory); only what the socket does
 * not take at once goes to the node's I/O thread ({@link SocketIo#write}), and every later frame queues behind it,
 * so frames leave in posting order and are never split by another. The receive side lives in
 * {@link SocketHandler}. Providers add what they offer beside it in a subclass (shm: bells and the connection's
 * scope).
 */
public class SocketConnection extends AbstractConnection {
    private final SocketIo io;
    private final SocketHandler handler;
    private final Placer placer;
    private final Object sendLock = new Object();
    private long nextSeq;
    private final SelectorNode selectorNode;

    /** The outstanding requests, guarded by sendLock. */
    private final OutstandingRing pending;

    // frame building, guarded by sendLock
    private final ByteBuffer header = ByteBuffer.allocateDirect(FrameDescriptor.HEADER_LENGTH
        + FrameDescriptor.WRITE_HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
    /**
     * The ACK a thread that read the socket itself owes the peer (0: none; see {@link #oweAck}); written under
     * sendLock, read without it to skip the lock.
     */
    private volatile long ackOwed;
    private final RegionViews views = new RegionViews();
    /** Frames a corked connection holds at most ({@link #cork}); one more writes those held first. */
    private static final int CORK_FRAMES = 16;
    /** Cork depth ({@link #cork}), and what the cork holds: headers copied into slots, payload views per slot. */
    private int corked;
    private int corkFrames;
    private int corkBuffers;
    private int corkCopyMask;
    private final ByteBuffer[] corkIov = new ByteBuffer[2 * CORK_FRAMES];
    private final ByteBuffer[] corkHeaders = new ByteBuffer[CORK_FRAMES];
    private final RegionViews[] corkViews = new RegionViews[CORK_FRAMES];
    /** Frames written so far (the I/O thread's keep-alive reads it under sendLock). */
    private long framesOut;

    /**
     * @param node the node
     * @param peerName the peer's node name
     * @param peerAddress the peer's address
     * @param regions the regions the peer listed
     * @param io the socket
     * @param handler the receive side
     * @param placer how WRITE data reaches the peer's memory directly (shm), or null to send it in frames
     */
    protected SocketConnection(SelectorNode node, String peerName, String peerAddress, List<RemoteRegion> regions,
                               SocketIo io, SocketHandler handler, Placer placer) {
        super(node, peerName, peerAddress, regions);
        this.selectorNode = node;
        this.io = io;
        this.handler = handler;
        this.placer = placer;
        this.pending = new OutstandingRing(node.options().sendQueueDepth());
    }

    /** @return the lock that orders this connection's frames (the handler writes READY under it) */
    Object sendLock() {
        return sendLock;
    }

    /** @return read system calls on this connection's socket so far (tests, diagnostics) */
    public long socketReads() {
        return handler.reads();
    }

    /** Closes the socket at once, as a dying process would: no ERROR frame. */
    @Override
    public void abort() {
        io.close();
    }

    @Override
    public boolean canMapRemote() {
        return placer != null;
    }

    /**
     * The peer's region file, mapped after the same checks as a placed WRITE (only under the directory that was
     * dialed, owner and mode checked, symbolic links refused).
     */
    @Override
    public ByteBuffer mapRemote(RemoteRegion region) throws RdmxException {
        if (placer == null) {
            return null;
        }
        checkOpen();
        synchronized (sendLock) {
            try {
                return placer.map(region.remoteKey(), region.length());
            } catch (RdmxException e) {
                throw new RdmxException("peer '" + peerName() + "': " + e.getMessage(), e);
            }
        }
    }

    /**
     * Frames posted until {@link #uncork} go out in one gathering write (a channel writer's WRITE and the
     * notification SEND behind it: one system call, not two); frames of other threads meanwhile join them, in
     * order. Nests; every cork needs its uncork.
     */
    @Override
    public void cork() {
        synchronized (sendLock) {
            corked++;
        }
    }

    @Override
    public void uncork() {
        synchronized (sendLock) {
            if (corked > 0 && --corked == 0) {
                flushCork();
            }
        }
    }

    /** Under sendLock: writes what the cork holds, in one gathering write. */
    private void flushCork() {
        if (corkBuffers == 0) {
            return;
        }
        ByteBuffer[] iov = corkIov;
        // a failed write is the I/O thread's to report (it meets the same closed socket and fails the connection)
        io.write(iov, corkBuffers, corkCopyMask);
        for (int i = 0; i < corkBuffers; i++) {
            iov[i] = null;
        }
        corkBuffers = 0;
        corkFrames = 0;
        corkCopyMask = 0;
    }

    @Override
    protected int postSendQueue(Opcode op, long wrId, RegionImpl local, int localOffset, int length,
                                RemoteRegion remote, long remoteOffset, int imm, boolean signaled)
        throws ConnectionClosedException {
        Throwable failure = null;
        synchronized (sendLock) {
            checkOpen();
            if (pending.isFull()) {
                return Post.SEND_QUEUE_FULL;
            }
            boolean write = op != Opcode.SEND;
            if (write && placer != null) {
                String err = placer.place(remote.remoteKey(), remoteOffset, local, localOffset, length);
                if (err != null) {
                    emit(op, wrId, Status.REMOTE_ACCESS_ERROR, 0, 0, false, err);
                    failure = new ConnectionClosedException(peerName(), "remote access error: " + err, null);
                } else if (op == Opcode.WRITE) {
                    // placed already; completes in order behind whatever is still outstanding
                    if (pending.count() == 0) {
                        if (signaled) {
                            emit(op, wrId, Status.SUCCESS, length, 0, false, null);
                        }
                    } else {
                        pending.add(nextSeq, op, wrId, length, signaled);
                    }
                    return Post.OK;
                }
            }
            if (failure == null) {
                long seq = ++nextSeq;
                pending.add(seq, op, wrId, length, signaled);
                int flags = FrameDescriptor.requestFlags(op, signaled, placer != null, pending.count(),
                    pending.capacity());
                if (write) {
                    writeFrame(FrameDescriptor.TYPE_WRITE, flags, seq, remote.remoteKey(), imm, remoteOffset, length,
                        local, localOffset, placer == null ? length : 0);
                } else {
                    writeFrame(FrameDescriptor.TYPE_SEND, flags, seq, 0, 0, 0, length, local, localOffset, length);
                }
            }
        }
        if (failure != null) {
            fail(failure);
        }
        return Post.OK;
    }

    /** Under sendLock: builds the header in the reused buffer and writes it with the carried data. */
    private void writeFrame(int type, int flags, long seq, int rkey, int imm, long remoteOffset, int dataLength,
                            RegionImpl local, int localOffset, int carried) {
        int hl = type == FrameDescriptor.TYPE_WRITE ? FrameDescriptor.WRITE_HEADER_LENGTH
            : FrameDescriptor.HEADER_LENGTH;
        if (corked > 0) {
            writeCorked(type, flags, seq, rkey, imm, remoteOffset, dataLength, local, localOffset, carried, hl);
            return;
        }
        ByteBuffer h = header;
        h.clear();
        putOwedAck(h);
        FrameBuffers.header(h, type, flags, hl + carried, seq);
        if (type == FrameDescriptor.TYPE_WRITE) {
            h.putInt(rkey).putInt(imm).putLong(remoteOffset).putInt(dataLength).putInt(0);
        }
        h.flip();
        ByteBuffer payload = null;
        if (carried > 0) {
            payload = views.view(local);
            payload.position(localOffset).limit(localOffset + carried);
        }
        framesOut++;
        // a failed write is the I/O thread's to report (it meets the same closed socket and fails the connection)
        io.write(h, payload);
    }

    /** Under sendLock, corked: adds the frame to what the cork holds. */
    private void writeCorked(int type, int flags, long seq, int rkey, int imm, long remoteOffset, int dataLength,
                             RegionImpl local, int localOffset, int carried, int hl) {
        if (corkFrames == CORK_FRAMES) {
            flushCork();
        }
        int slot = corkFrames++;
        ByteBuffer h = corkHeaders[slot];
        if (h == null) {
            h = ByteBuffer.allocateDirect(header.capacity()).order(ByteOrder.LITTLE_ENDIAN);
            corkHeaders[slot] = h;
            corkViews[slot] = new RegionViews();
        }
        h.clear();
        putOwedAck(h);
        FrameBuffers.header(h, type, flags, hl + carried, seq);
        if (type == FrameDescriptor.TYPE_WRITE) {
            h.putInt(rkey).putInt(imm).putLong(remoteOffset).putInt(dataLength).putInt(0);
        }
        corkCopyMask |= 1 << corkBuffers;
        corkIov[corkBuffers++] = h.flip();
        if (carried > 0) {
            ByteBuffer payload = corkViews[slot].view(local);
            payload.position(localOffset).limit(localOffset + carried);
            corkIov[corkBuffers++] = payload;
        }
        framesOut++;
    }

    /**
     * Sends a control frame of the established connection (ACK, PING) in order with the requests. Any thread;
     * nothing once the connection is down.
     *
     * @param type {@link FrameDescriptor#TYPE_ACK} or {@link FrameDescriptor#TYPE_PING}
     * @param seq the sequence number (the highest handled, for an ACK)
     */
    void sendControl(int type, long seq) {
        synchronized (sendLock) {
            if (!isOpen()) {
                return;
            }
            flushCork(); // in order behind the frames a cork holds
            ByteBuffer h = header;
            h.clear();
            if (type == FrameDescriptor.TYPE_ACK && seq >= ackOwed) {
                ackOwed = 0; // this one covers it
            }
            putOwedAck(h);
            FrameBuffers.header(h, type, 0, FrameDescriptor.HEADER_LENGTH, seq);
            framesOut++;
            io.write(h.flip(), null);
        }
    }

    /**
     * A thread that read the socket itself (leader/follower input) handled requests the peer wants acknowledged:
     * the ACK goes out ahead of the next frame this side writes (the reply the application is about to send, in
     * the same system call), or by {@link #payAck} when that thread comes back to read, or when the I/O thread
     * takes the input back; not at once, which would cost the peer a wake-up for the ACK alone just before the
     * reply. Any thread.
     *
     * @param seq the highest request handled
     */
    void oweAck(long seq) {
        synchronized (sendLock) {
            if (seq > ackOwed) {
                ackOwed = seq;
            }
        }
    }

    /** Sends the owed ACK now, if any ({@link #oweAck}). Any thread. */
    void payAck() {
        if (ackOwed == 0) {
            return;
        }
        synchronized (sendLock) {
            if (ackOwed == 0 || !isOpen()) {
                return;
            }
            flushCork();
            ByteBuffer h = header;
            h.clear();
            putOwedAck(h);
            io.write(h.flip(), null);
        }
    }

    /** Under sendLock: puts the owed ACK frame, if any, where the next frame's header starts. */
    private void putOwedAck(ByteBuffer h) {
        long owed = ackOwed;
        if (owed != 0) {
            FrameBuffers.header(h, FrameDescriptor.TYPE_ACK, 0, FrameDescriptor.HEADER_LENGTH, owed);
            ackOwed = 0;
            framesOut++;
        }
    }

    /**
     * Writes a complete frame (NAK) behind everything written before. Any thread.
     *
     * @param frame the frame
     */
    void sendFrame(ByteBuffer frame) {
        synchronized (sendLock) {
            flushCork();
            payAck();
            framesOut++;
            io.write(frame, null);
        }
    }

    /** @return frames written so far (keep-alive: a connection that wrote nothing for a while sends a PING) */
    long framesOut() {
        synchronized (sendLock) {
            return framesOut;
        }
    }

    /**
     * Completes every request up to a sequence number (cumulative ACK), in order, each completion delivered
     * outside the send lock. I/O thread.
     *
     * @param acked the highest sequence number the peer has handled
     */
    void onAck(long acked) {
        while (true) {
            long wrId;
            Opcode op;
            int length;
            synchronized (sendLock) {
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
            }
            emit(op, wrId, Status.SUCCESS, length, 0, false, null);
        }
    }

    /**
     * Fails one request (NAK): earlier ones completed, this one with the status; the connection goes down.
     * I/O thread.
     *
     * @param seq the failed request
     * @param status its status
     * @param message the peer's explanation
     */
    void onNak(long seq, Status status, String message) {
        onAck(seq - 1);
        long wrId = 0;
        Opcode op = null;
        synchronized (sendLock) {
            int i = pending.takeSeq(seq);
            if (i >= 0) {
                wrId = pending.wrId(i);
                op = pending.op(i);
            }
        }
        if (op != null) {
            emit(op, wrId, status, 0, 0, false, message);
        }
        failRefused(seq, status, message);
    }

    @Override
    public int awaitInput(long nanos) {
        return io.follow(nanos, false);
    }

    /** The completion-queue waiter's entry ({@link #followableInput}): the same socket, its own switch. */
    private final InputFollower.Input queueInput = new InputFollower.Input() {
        @Override
        public int awaitInput(long nanos) {
            return io.follow(nanos, true);
        }

        @Override
        public void wakeInput() {
            io.wakeFollower();
        }
    };

    /**
     * The node's completion-queue waiter reads this connection's socket itself while it is the node's only one
     * (shm and tcp alike; the node decides whether it is on: {@code rdmx.cq.followerReads}).
     */
    @Override
    protected InputFollower.Input followableInput() {
        return queueInput;
    }

    /** @return write system calls on this connection's socket so far, by any thread (tests, diagnostics) */
    public long socketWrites() {
        return io.socketWrites();
    }

    /** @return reads of this connection's socket that a waiting thread made itself (leader/follower input) */
    public long followerReads() {
        return io.followerReads();
    }

    /**
     * @return reads of this connection's socket by waiting or spinning threads, those that found nothing included
     *         (tests, diagnostics)
     */
    public long followerLooks() {
        return io.followerLooks();
    }

    /**
     * @return how often a waiting thread that gave this connection's input back woke the node's I/O thread (tests,
     *         diagnostics): once per grace at most while waiters keep coming back ({@link SelectorNode#FOLLOW_GRACE_PROP})
     */
    public long followerReleaseWakes() {
        return io.followerReleaseWakes();
    }

    /** @return passes of the node's I/O thread through its loop so far, each a wake-up or a look (tests) */
    public long ioThreadLoops() {
        return selectorNode.ioLoops();
    }

    @Override
    public int releaseInput() {
        return io.releaseInput();
    }

    @Override
    public void wakeInput() {
        io.wakeFollower();
    }

    /**
     * Without a placer (tcp) no completion is emitted under the send lock, and every completion of the receive
     * side is emitted by the I/O thread outside it: an inline handler may post.
     */
    @Override
    protected boolean supportsInlineCompletions() {
        return placer == null;
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
            synchronized (sendLock) {
                int i = pending.take();
                if (i < 0) {
                    return;
                }
                wrId = pending.wrId(i);
                op = pending.op(i);
            }
            emit(op, wrId, Status.FLUSHED, 0, 0, false, detail);
        }
    }

    @Override
    protected void closeTransport(Throwable cause) {
        if (placer != null) {
            synchronized (sendLock) {
                placer.close();
            }
        }
        handler.closing();
        String why = cause == null ? "closed" : cause.getMessage();
        synchronized (sendLock) {
            // behind any frame a posting thread wrote (never in the middle of one); then the socket closes
            if (io.write(FrameBuffers.error(why == null ? "closed" : why), null)) {
                io.closeAfterFlush();
            } else {
                io.close();
            }
        }
    }
}
