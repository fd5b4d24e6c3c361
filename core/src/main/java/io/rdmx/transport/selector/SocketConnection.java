package io.rdmx.transport.selector;

import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.Post;
import io.rdmx.transport.ProtocolException;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.Status;
import io.rdmx.transport.capability.Capability;
import io.rdmx.transport.capability.Corking;
import io.rdmx.transport.capability.InputFollowing;
import io.rdmx.transport.capability.RemoteMapping;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.internal.OutstandingRing;
import io.rdmx.transport.internal.RegionImpl;
import io.rdmx.transport.wire.FrameBuffers;
import io.rdmx.transport.wire.FrameDescriptor;
import io.rdmx.transport.wire.Placer;
import io.rdmx.transport.wire.RegionViews;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * A connection of a stream-socket provider ({@code shm} on a Unix-domain socket, {@code tcp}) on the selector
 * engine, and the stream providers' one send side: requests get consecutive sequence numbers and wait in the
 * outstanding ring (bounded by the send-queue depth, primitive arrays: nothing allocated per request) until a
 * cumulative ACK completes them in order. With a {@link Placer} (shm), WRITE data is copied by the posting thread
 * straight into the peer's mapped region and a WRITE_WITH_IMM then sends a data-less notification frame; without
 * one (tcp) WRITE data travels in its frame. A READ is a request frame in the same sequence; the peer's I/O thread
 * answers it from the region, and its ACK completes it ({@link io.rdmx.transport.wire.FrameDescriptor}). The
 * posting thread writes its frame to the socket itself, under
 * {@link #sendLock} (one gathering write of a reused header and the region's memory); only what the socket does
 * not take at once goes to the node's I/O thread ({@link SocketIo#write}), and every later frame queues behind it,
 * so frames leave in posting order and are never split by another. The receive side lives in
 * {@link SocketHandler}. Providers add what they offer beside it in a subclass (shm: bells and the connection's
 * scope).
 */
public class SocketConnection extends AbstractConnection implements Corking, InputFollowing, RemoteMapping {
    private final SocketIo io;
    private final SocketHandler handler;
    private final Placer placer;
    private final Object sendLock = new Object();
    private long nextSeq;
    private final SelectorNode selectorNode;

    /** The outstanding requests, guarded by sendLock. */
    private final OutstandingRing pending;

    /** Builds and writes this connection's frames; guarded by sendLock. */
    private final FrameWriter out;

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
        this.out = new FrameWriter(io);
    }

    /** @return the lock that orders this connection's frames (the handler writes READY under it) */
    Object sendLock() {
        return sendLock;
    }

    /**
     * @return buffers of frames waiting for the socket to take them (tests, diagnostics): bounded however many READs
     *     the peer sends without reading their answers
     */
    public int queuedBuffers() {
        return io.queuedBuffers();
    }

    /** @return read system calls on this connection's socket so far (tests, diagnostics) */
    public long socketReads() {
        return handler.reads();
    }

    /**
     * @return WRITE and SEND payload bytes this connection received through its read buffer, copied from there into
     *         their regions (tests, diagnostics)
     */
    public long payloadBytesStaged() {
        return handler.stagedBytes();
    }

    /**
     * @return WRITE and SEND payload bytes this connection read from its socket straight into their regions, no
     *         copy (tests, diagnostics)
     */
    public long payloadBytesDirect() {
        return handler.directBytes();
    }

    /** Closes the socket at once, as a dying process would: no ERROR frame. */
    @Override
    public void abort() {
        io.close();
    }

    /** {@link RemoteMapping} only with a placer (shm); inline completions only without one (tcp). */
    @Override
    protected boolean offers(Class<? extends Capability> type) {
        return type == RemoteMapping.class ? placer != null : super.offers(type);
    }

    /**
     * The peer's region file, mapped after the same checks as a placed WRITE (only under the directory that was
     * dialed, owner and mode checked, symbolic links refused).
     */
    @Override
    public ByteBuffer mapRemote(RemoteRegion region) throws RdmxException {
        if (placer == null) {
            throw new RdmxException("peer '" + peerName() + "': this provider maps no peer memory");
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
            out.cork();
        }
    }

    @Override
    public void uncork() {
        synchronized (sendLock) {
            out.uncork();
        }
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
            if (op == Opcode.READ && placer != null && pending.unanswered() == 0
                && placer.read(remote.remoteKey(), remoteOffset, local, localOffset, length)) {
                // shm: copied by this thread from the peer's mapped region, after every WRITE posted before it
                // (placed by this thread, under this lock), so it sees them; completes in order behind whatever is
                // outstanding, as a placed WRITE does. Not while a READ sent as a request is unanswered: its
                // answer must not land after this one's bytes
                completeDone(op, wrId, length, signaled);
                return Post.OK;
            }
            if (op == Opcode.READ) {
                // a request frame in the sequence: the peer's I/O thread answers it when it reaches it, after every
                // WRITE posted before it here (one ordered stream), so the READ sees them; the ACK that covers it
                // follows the answer and completes it, in posting order with the other requests
                long seq = ++nextSeq;
                pending.addRead(seq, wrId, local, localOffset, length, signaled);
                out.request(FrameDescriptor.TYPE_READ, 0, seq, remote.remoteKey(), 0, remoteOffset, length, local,
                    localOffset, 0);
                return Post.OK;
            }
            boolean write = op != Opcode.SEND;
            if (write && placer != null) {
                String err = placer.place(remote.remoteKey(), remoteOffset, local, localOffset, length);
                if (err != null) {
                    emit(op, wrId, Status.REMOTE_ACCESS_ERROR, 0, 0, false, err);
                    failure = new ConnectionClosedException(peerName(), "remote access error: " + err, null);
                } else if (op == Opcode.WRITE) {
                    // placed already; completes in order behind whatever is still outstanding
                    completeDone(op, wrId, length, signaled);
                    return Post.OK;
                }
            }
            if (failure == null) {
                long seq = ++nextSeq;
                pending.add(seq, op, wrId, length, signaled);
                int flags = FrameDescriptor.requestFlags(op, signaled, placer != null, pending.count(),
                    pending.capacity());
                if (write) {
                    out.request(FrameDescriptor.TYPE_WRITE, flags, seq, remote.remoteKey(), imm, remoteOffset, length,
                        local, localOffset, placer == null ? length : 0);
                } else {
                    out.request(FrameDescriptor.TYPE_SEND, flags, seq, 0, 0, 0, length, local, localOffset, length);
                }
            }
        }
        if (failure != null) {
            fail(failure);
        }
        return Post.OK;
    }

    /**
     * A request this thread already carried out (a WRITE placed, a READ copied, shm): completes in order behind
     * whatever is still outstanding, as the peer's ACKs would. Under the send lock.
     */
    private void completeDone(Opcode op, long wrId, int length, boolean signaled) {
        if (pending.count() == 0) {
            if (signaled) {
                emit(op, wrId, Status.SUCCESS, length, 0, false, null);
            }
        } else {
            pending.add(nextSeq, op, wrId, length, signaled);
        }
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
            if (isOpen()) {
                out.control(type, seq);
            }
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
            out.oweAck(seq);
        }
    }

    /** Sends the owed ACK now, if any ({@link #oweAck}). Any thread. */
    void payAck() {
        if (!out.owesAck()) {
            return;
        }
        synchronized (sendLock) {
            if (isOpen()) {
                out.payAck();
            }
        }
    }

    /**
     * Writes a complete frame (NAK) behind everything written before. Any thread.
     *
     * @param frame the frame
     */
    void sendFrame(ByteBuffer frame) {
        synchronized (sendLock) {
            out.flushCork();
            if (isOpen()) {
                out.payAck();
            }
            out.frame(frame);
        }
    }

    /** @return frames written so far (keep-alive: a connection that wrote nothing for a while sends a PING) */
    long framesOut() {
        synchronized (sendLock) {
            return out.framesOut();
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
            String refusal;
            synchronized (sendLock) {
                int i = pending.takeAcked(acked);
                if (i < 0) {
                    return;
                }
                if (!pending.answered(i)) {
                    wrId = pending.wrId(i);
                    refusal = "peer '" + peerName() + "' acknowledged READ wrId=" + wrId + " without answering it";
                    op = null;
                    length = 0;
                } else {
                    refusal = pending.refusal(i);
                    if (refusal == null && !pending.signaled(i)) {
                        continue;
                    }
                    wrId = pending.wrId(i);
                    op = pending.op(i);
                    length = pending.length(i);
                }
            }
            if (op == null) {
                emit(Opcode.READ, wrId, Status.REMOTE_ACCESS_ERROR, 0, 0, false, refusal);
                fail(new ProtocolException(refusal));
                return;
            }
            if (refusal != null) { // a refused READ completes with its error, signaled or not; the connection stays
                emit(op, wrId, Status.REMOTE_ACCESS_ERROR, 0, 0, false, refusal);
            } else {
                emit(op, wrId, Status.SUCCESS, length, 0, false, null);
            }
        }
    }

    /**
     * Answers a peer's READ from the region's memory, or refuses it, behind every frame written before. I/O thread
     * (or a follower reading the socket).
     *
     * @param seq the READ's sequence number
     * @param region the region, checked, or null if refused
     * @param offset where in it
     * @param length bytes
     * @param refusal why it is refused, or null
     * @return true if frames wait for the socket now (the receiver answers no more READs until they are out)
     */
    boolean answerRead(long seq, RegionImpl region, int offset, int length, String refusal) {
        synchronized (sendLock) {
            if (!isOpen()) {
                return false;
            }
            if (refusal != null) {
                out.flushCork(); // the refusal is a frame of its own: behind what the cork holds
                out.frame(FrameBuffers.readRefusal(seq, Status.REMOTE_ACCESS_ERROR.ordinal(), refusal));
            } else {
                out.answer(seq, region, offset, length);
            }
        }
        return io.queued();
    }

    /**
     * The answer to this side's oldest unanswered READ carries its bytes: where they go. I/O thread (or a
     * follower).
     *
     * @param seq the sequence number the answer carries
     * @param length its length
     * @param views the receiver's views (one thread at a time)
     * @return a view of the READ's local region at its offset
     * @throws ProtocolException if no such READ is outstanding, or its length differs
     */
    ByteBuffer readTarget(long seq, int length, RegionViews views) throws ProtocolException {
        RegionImpl region;
        int offset;
        synchronized (sendLock) {
            int i = pending.answer(seq);
            if (i < 0) {
                throw new ProtocolException("READ_ANSWER from '" + peerName() + "' for seq=" + seq
                    + ", which is not the oldest unanswered READ of node '" + node.name() + "'");
            }
            if (pending.length(i) != length) {
                throw new ProtocolException("READ_ANSWER from '" + peerName() + "' for seq=" + seq + " has length="
                    + length + ", the READ asked for length=" + pending.length(i));
            }
            region = pending.local(i);
            offset = pending.localOffset(i);
        }
        ByteBuffer v = views.view(region);
        v.position(offset);
        return v;
    }

    /**
     * The peer refused this side's oldest unanswered READ. I/O thread (or a follower).
     *
     * @param seq the sequence number the answer carries
     * @param status the status
     * @param message the peer's explanation
     * @throws ProtocolException if no such READ is outstanding, or the status is not a refusal of a READ
     */
    void readRefused(long seq, Status status, String message) throws ProtocolException {
        if (status != Status.REMOTE_ACCESS_ERROR) {
            throw new ProtocolException("READ_ANSWER from '" + peerName() + "' for seq=" + seq + " has status="
                + status + " (a READ is refused with " + Status.REMOTE_ACCESS_ERROR + ")");
        }
        synchronized (sendLock) {
            int i = pending.answer(seq);
            if (i < 0) {
                throw new ProtocolException("READ_ANSWER from '" + peerName() + "' for seq=" + seq
                    + ", which is not the oldest unanswered READ of node '" + node.name() + "'");
            }
            pending.refuse(i, "peer '" + peerName() + "' refused READ: " + message);
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
    private final InputFollowing queueInput = new InputFollowing() {
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
    protected InputFollowing followableInput() {
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
            out.flushCork(); // what a cork holds goes first (a read batch's frames, corked by the I/O thread)
            // behind any frame a posting thread wrote (never in the middle of one); then the socket closes
            if (io.write(FrameBuffers.error(why == null ? "closed" : why), null)) {
                io.closeAfterFlush();
            } else {
                io.close();
            }
        }
    }
}
