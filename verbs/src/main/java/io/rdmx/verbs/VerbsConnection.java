package io.rdmx.verbs;

import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.capability.InputFollowing;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.internal.RegionImpl;
import java.util.List;

/**
 * A verbs connection: an RC queue pair set up by rdma_cm ({@link Endpoint}), created once the region exchange
 * over the queue pair finished. Posting goes straight to the hardware queues; completions come from the
 * node's progress thread, which polls the connection's CQ and hands them to an inline completion handler (the
 * channel layer's: no object per completion and no thread between the poller and the woken reader) or, without
 * one, to the node's completion queue.
 *
 * <p>Completions are produced under the endpoint's lock (polling, flushing) but never handed over under it: a
 * handler may post, and a post takes that lock. They wait in the connection's backlog ({@link #emitLater}) until the thread that
 * holds the lock releases it ({@link Endpoint#unlock}), then go out in the order they were produced, one thread
 * at a time.
 */
final class VerbsConnection extends AbstractConnection implements InputFollowing {
    private final Endpoint ep;

    VerbsConnection(VerbsNode node, String peerName, String peerAddress, List<RemoteRegion> regions, Endpoint ep) {
        super(node, peerName, peerAddress, regions);
        this.ep = ep;
    }

    Endpoint endpoint() {
        return ep;
    }

    @Override
    protected boolean supportsInlineCompletions() {
        return true;
    }

    /** Completions are polled, and queues flushed, under the endpoint's lock, which a post takes. */
    @Override
    protected boolean defersCompletions() {
        return true;
    }

    @Override
    protected boolean holdsPostLock() {
        return ep.lock.isHeldByCurrentThread();
    }

    /**
     * Leader/follower input, the spinning half: a waiter that looks without sleeping ({@code nanos <= 0}, a
     * spinning channel reader or writer) polls this connection's CQ itself, so the completions it waits for are
     * handled on the thread that needs them (inline handler) rather than by the progress thread. A waiter about to
     * sleep gets -1 and sleeps as usual: only the progress thread sleeps on the completion channel.
     *
     * @param nanos the longest wait; above 0 this provider does not offer it
     * @return completions polled and handled, or -1 for a sleeping waiter or a closed connection
     */
    @Override
    public int awaitInput(long nanos) {
        if (nanos > 0 || !isOpen()) {
            return -1;
        }
        return ep.drain();
    }

    /** Nothing to end: a spinning look ({@link #awaitInput}) does not wait, and a sleeping waiter gets -1. */
    @Override
    public void wakeInput() {
    }

    @Override
    protected int postSendQueue(Opcode op, long wrId, RegionImpl local, int localOffset, int length,
                                RemoteRegion remote, long remoteOffset, int imm, boolean signaled)
        throws ConnectionClosedException {
        return ep.postSend(op, wrId, local, localOffset, length, remote, remoteOffset, imm, signaled);
    }

    @Override
    protected int postRecv(long wrId, RegionImpl local, int localOffset, int length) throws ConnectionClosedException {
        return ep.postRecv(wrId, local, localOffset, length);
    }

    /** @throws ConnectionClosedException naming the peer: the endpoint was closed under a poster */
    void throwClosed() throws ConnectionClosedException {
        checkOpen();
        throw new ConnectionClosedException(peerName(), "connection from '" + node.name() + "' to peer '"
            + peerName() + "' is closed", null);
    }

    @Override
    protected void onRecvPosted() {
        // receives go to the hardware receive queue (postRecv), never to the shared queue
    }

    @Override
    protected void flushSendQueue() {
        ep.flushAll(flushDetail());
    }

    @Override
    protected void closeTransport(Throwable cause) {
        ep.close();
    }
}
