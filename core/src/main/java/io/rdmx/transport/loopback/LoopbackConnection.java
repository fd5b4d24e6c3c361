package io.rdmx.transport.loopback;

import io.rdmx.transport.Completion;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.Post;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.Status;
import io.rdmx.transport.capability.RemoteMapping;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.internal.RegionImpl;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A loopback connection. Requests run in order on the posting thread (a READ is a copy from the peer node's
 * region into the local one, after the same key, scope and bounds checks as a WRITE's); a SEND or WRITE_WITH_IMM that finds no
 * posted receive waits in {@link #pending} (with every request behind it) until the peer posts one, as RC
 * ordering requires. Locks: {@code this} guards {@link #pending}; the receive queue lock is a leaf; a
 * connection never fails its peer while holding its own lock.
 *
 * <p>Completions go to an inline handler when one is installed (the channel layer's): they are produced under
 * the pair's locks, which a handler's post takes, so they wait in each connection's backlog until the posting
 * thread released them ({@link #released}), then go out in order, with no object per completion.
 */
final class LoopbackConnection extends AbstractConnection implements RemoteMapping {
    private record Op(Opcode op, long wrId, RegionImpl local, int localOffset, int length, RemoteRegion remote,
                      long remoteOffset, int imm, boolean signaled) {
    }

    volatile LoopbackConnection peer;
    private final ArrayDeque<Op> pending = new ArrayDeque<>();
    /** Fixed when the connection is created ({@link LoopbackFaults#queueCompletions}). */
    private final boolean inlineCompletions;
    /** The peer's receive a request lands in; used holding {@code this}, refilled for each. */
    private final Recv taken = new Recv();

    LoopbackConnection(LoopbackNode node, String peerName, String peerAddress, List<RemoteRegion> regions) {
        super(node, peerName, peerAddress, regions);
        this.inlineCompletions = !node.faults().queueCompletions;
    }

    @Override
    protected boolean supportsInlineCompletions() {
        return inlineCompletions;
    }

    /** A post executes under the pair's locks and completes on both sides there. */
    @Override
    protected boolean defersCompletions() {
        return true;
    }

    /** Either lock of the pair: this connection's or its peer's. */
    @Override
    protected boolean holdsPostLock() {
        LoopbackConnection p = peer;
        return Thread.holdsLock(this) || p != null && Thread.holdsLock(p);
    }

    /** After a lock of the pair was released: hands over what both sides produced under it. */
    private void released() {
        postLockReleased();
        LoopbackConnection p = peer;
        if (p != null) {
            p.postLockReleased(); // the same pair of locks: held by this thread on neither side, or on both
        }
    }

    private LoopbackNode loopbackNode() {
        return (LoopbackNode) node;
    }

    /** The peer region's own memory: both nodes live in this process. */
    @Override
    public ByteBuffer mapRemote(RemoteRegion region) throws RdmxException {
        checkOpen();
        LoopbackConnection p = peer;
        RegionImpl target = p.node.lookupRemote(region.remoteKey(), p);
        if (target == null) {
            throw new RdmxException("cannot map rkey=0x" + Integer.toHexString(region.remoteKey()) + ": no remotely"
                + " writable region with that key at peer '" + peerName() + "'");
        }
        if (region.length() < 0 || region.length() > target.length()) {
            throw new RdmxException("cannot map rkey=0x" + Integer.toHexString(region.remoteKey()) + " length="
                + region.length() + ": the region at peer '" + peerName() + "' has length=" + target.length());
        }
        return target.memory().duplicate().position(0).limit(region.length()).slice()
            .order(ByteOrder.LITTLE_ENDIAN);
    }

    @Override
    protected int postSendQueue(Opcode op, long wrId, RegionImpl local, int localOffset, int length,
                                RemoteRegion remote, long remoteOffset, int imm, boolean signaled)
        throws ConnectionClosedException {
        Throwable failure;
        synchronized (this) {
            checkOpen();
            if (pending.size() >= node.options().sendQueueDepth()) {
                return Post.SEND_QUEUE_FULL;
            }
            pending.addLast(new Op(op, wrId, local, localOffset, length, remote, remoteOffset, imm, signaled));
            failure = drainLocked();
        }
        released();
        if (failure != null) {
            failBoth(failure);
        }
        return Post.OK;
    }

    /** Executes pending requests in order while possible. Holds {@code this}. Returns a failure to apply. */
    private Throwable drainLocked() {
        LoopbackConnection p = peer;
        Op o;
        while ((o = pending.peekFirst()) != null) {
            if (loopbackNode().faults().failNext.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0) {
                pending.pollFirst();
                Status s = loopbackNode().faults().failStatus;
                String why = o.op() + " wrId=" + o.wrId() + " failed by injected fault status=" + s;
                emit(o.op(), o.wrId(), s, 0, 0, false, why);
                return new ConnectionClosedException(peerName(), why, null);
            }
            if (o.op() == Opcode.READ) {
                // a copy from the peer's region by this thread, in order with the requests before it: a WRITE
                // posted earlier on this connection was copied already (same queue, same lock), so this READ sees
                // it. A refused READ fails that request only: nothing is out of step, the peer answered
                pending.pollFirst();
                String err = p.node.checkRemoteRead(o.remote().remoteKey(), o.remoteOffset(), o.length(), p);
                RegionImpl source = p.node.lookupRemoteRead(o.remote().remoteKey(), p);
                if (err != null || source == null) { // (released between the two looks: as if before)
                    emit(o.op(), o.wrId(), Status.REMOTE_ACCESS_ERROR, 0, 0, false, err != null ? err
                        : "no remotely readable region with rkey=0x" + Integer.toHexString(o.remote().remoteKey())
                        + " at node '" + p.node.name() + "'");
                    continue;
                }
                copy(source, (int) o.remoteOffset(), o.local(), o.localOffset(), o.length());
                if (o.signaled()) {
                    emit(o.op(), o.wrId(), Status.SUCCESS, o.length(), 0, false, null);
                }
                continue;
            }
            if (o.op() == Opcode.WRITE || o.op() == Opcode.WRITE_WITH_IMM) {
                String err = p.node.checkRemoteWrite(o.remote().remoteKey(), o.remoteOffset(), o.length(), p);
                if (err != null) {
                    pending.pollFirst();
                    emit(o.op(), o.wrId(), Status.REMOTE_ACCESS_ERROR, 0, 0, false, err);
                    return new ConnectionClosedException(peerName(), "remote access error: " + err, null);
                }
            }
            Recv r = null;
            if (o.op() != Opcode.WRITE) {
                if (!p.takeRecv(taken)) {
                    return null;
                }
                r = taken;
            }
            pending.pollFirst();
            if (o.op() == Opcode.WRITE || o.op() == Opcode.WRITE_WITH_IMM) {
                RegionImpl target = p.node.lookupRemote(o.remote().remoteKey(), p);
                copy(o.local(), o.localOffset(), target, (int) o.remoteOffset(), o.length());
                if (r != null) {
                    p.emit(Opcode.RECV, r.wrId(), Status.SUCCESS, o.length(), o.imm(), true, null);
                }
            } else {
                if (o.length() > r.length()) {
                    String why = "SEND length=" + o.length() + " exceeds the receive buffer length=" + r.length()
                        + " posted by '" + p.node.name() + "'";
                    p.emit(Opcode.RECV, r.wrId(), Status.LOCAL_LENGTH_ERROR, 0, 0, false, why);
                    emit(o.op(), o.wrId(), Status.REMOTE_INVALID_REQUEST, 0, 0, false, why);
                    return new ConnectionClosedException(peerName(), why, null);
                }
                copy(o.local(), o.localOffset(), r.region(), r.offset(), o.length());
                p.emit(Opcode.RECV, r.wrId(), Status.SUCCESS, o.length(), 0, false, null);
            }
            if (o.signaled()) {
                emit(o.op(), o.wrId(), Status.SUCCESS, o.length(), 0, false, null);
            }
        }
        return null;
    }

    private static void copy(RegionImpl src, int srcOffset, RegionImpl dst, int dstOffset, int length) {
        if (length == 0) {
            return;
        }
        ByteBuffer d = dst.memory().duplicate();
        d.put(dstOffset, src.memory(), srcOffset, length);
    }

    private void failBoth(Throwable cause) {
        fail(cause);
    }

    @Override
    protected void onRecvPosted() {
        LoopbackConnection p = peer;
        Throwable failure;
        synchronized (p) {
            failure = p.isOpen() ? p.drainLocked() : null;
        }
        released();
        if (failure != null) {
            p.failBoth(failure);
        }
    }

    @Override
    protected void flushSendQueue() {
        String detail = flushDetail();
        synchronized (this) {
            Op o;
            while ((o = pending.pollFirst()) != null) {
                emit(o.op(), o.wrId(), Status.FLUSHED, 0, 0, false, detail);
            }
        }
        released();
    }

    @Override
    protected void closeTransport(Throwable cause) {
        LoopbackConnection p = peer;
        if (p != null) {
            p.fail(new ConnectionClosedException(node.name(), "connection to peer '" + node.name() + "' lost: "
                + cause.getMessage(), cause));
        }
    }

    @Override
    protected void deliver(Completion c) {
        long delay = loopbackNode().faults().completionDelayNanos;
        if (delay > 0) {
            loopbackNode().delayer().schedule(() -> super.deliver(c), delay, TimeUnit.NANOSECONDS);
        } else {
            super.deliver(c);
        }
    }
}
