package io.rdmx.channel;

import io.rdmx.transport.ConnectionClosedException;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The peer failures one reader has yet to report, each once, in the order they happened. Failures are rare:
 * a lock-free queue, any thread adds, the reader's thread takes.
 */
final class PeerLosses {
    private final ConcurrentLinkedQueue<ConnectionClosedException> pending = new ConcurrentLinkedQueue<>();

    /**
     * Records a failure to report. Any thread.
     *
     * @param e the failure, naming the peer
     */
    void add(ConnectionClosedException e) {
        pending.offer(e);
    }

    /**
     * Takes the oldest unreported failure. The reader's thread.
     *
     * @return it, or null
     */
    ConnectionClosedException take() {
        return pending.poll();
    }

    /** @return whether a failure waits to be reported. Any thread. */
    boolean pending() {
        return !pending.isEmpty();
    }
}
