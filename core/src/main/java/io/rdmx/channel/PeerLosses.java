package io.rdmx.channel;

import io.rdmx.transport.ConnectionClosedException;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The peer failures one reader has yet to report, each once, in the order they happened. Failures are rare:
 * a lock-free queue, any thread adds, the reader's thread takes.
 */
final class PeerLosses {
    /**
     * One lost peer, for one reader.
     *
     * @param peer the peer, whose memory this reader holds until it reported the loss
     * @param failure the failure, naming the peer
     */
    record Loss(PeerChannel peer, ConnectionClosedException failure) {
    }

    private final ConcurrentLinkedQueue<Loss> pending = new ConcurrentLinkedQueue<>();

    /**
     * Records a failure to report. Any thread.
     *
     * @param peer the peer
     * @param e the failure, naming the peer
     */
    void add(PeerChannel peer, ConnectionClosedException e) {
        pending.offer(new Loss(peer, e));
    }

    /**
     * Takes the oldest unreported failure. The reader's thread.
     *
     * @return it, or null
     */
    Loss take() {
        return pending.poll();
    }

    /** @return whether a failure waits to be reported. Any thread. */
    boolean pending() {
        return !pending.isEmpty();
    }
}
