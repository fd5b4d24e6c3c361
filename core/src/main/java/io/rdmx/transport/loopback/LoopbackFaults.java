package io.rdmx.transport.loopback;

import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Status;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/** Fault injection for one loopback node. Any thread. */
public final class LoopbackFaults {
    private final LoopbackNode node;
    volatile long completionDelayNanos;
    volatile boolean queueCompletions;
    final AtomicInteger failNext = new AtomicInteger();
    volatile Status failStatus = Status.TRANSPORT_ERROR;

    LoopbackFaults(LoopbackNode node) {
        this.node = node;
    }

    /**
     * Delays every completion of this node that goes to its completion queue (kept in order). A connection with an
     * inline handler (a channel engine's) hands its completions over at once; {@link #queueCompletions} sends them
     * to the queue, and so under this delay.
     *
     * @param delay the delay; zero to stop
     * @return this
     */
    public LoopbackFaults delayCompletions(Duration delay) {
        completionDelayNanos = delay.toNanos();
        return this;
    }

    /**
     * Sends every completion of this node's connections created from now on to the node's completion queue, even
     * where an inline completion handler is offered (the path of a provider without inline completions): there a
     * completion waits for whoever polls the queue, where an inline one is handled during the very post that
     * produced it (loopback executes requests on the posting thread). Call before the connections exist.
     *
     * @return this
     */
    public LoopbackFaults queueCompletions() {
        queueCompletions = true;
        return this;
    }

    /**
     * Makes the next {@code n} send-queue requests of this node fail with {@code status}, which moves their
     * connection to the error state (as a failing verbs request does).
     *
     * @param n how many
     * @param status the status they complete with
     * @return this
     */
    public LoopbackFaults failNext(int n, Status status) {
        failStatus = status;
        failNext.set(n);
        return this;
    }

    /**
     * Drops the connection to one peer, as a broken link would: both sides see it go down.
     *
     * @param peerName the peer
     * @return true if there was such a connection
     */
    public boolean dropConnection(String peerName) {
        LoopbackConnection c = node.liveConnection(peerName);
        if (c == null) {
            return false;
        }
        c.fail(new ConnectionClosedException(peerName, "connection between '" + node.name() + "' and peer '"
            + peerName + "' dropped (injected fault)", null));
        return true;
    }

    /** Kills the node as a crashing process would: every peer sees it die; the node is closed. */
    public void kill() {
        node.kill();
    }
}
