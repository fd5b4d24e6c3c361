package io.rdmx.transport.internal;

import io.rdmx.transport.NodeOptions;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * How many accepted connections of a stream provider (shm, tcp) may be in their handshake at once: a node-wide
 * cap ({@link NodeOptions#maxPendingHandshakes()}) and, for connections from a network address, a cap per source
 * address ({@link NodeOptions#maxPendingHandshakesPerSource()}), so that one host holding idle sockets cannot keep
 * the peers of every other host out. Thread-safe; every {@link #begin} that counted is ended by one {@link #end}.
 */
final class HandshakeAdmission {
    private final NodeOptions options;
    private final AtomicInteger pending = new AtomicInteger();
    /** Pending handshakes per source address (entries removed at zero). */
    private final ConcurrentHashMap<String, AtomicInteger> bySource = new ConcurrentHashMap<>();

    /** @param options the node's options (the caps) */
    HandshakeAdmission(NodeOptions options) {
        this.options = options;
    }

    /**
     * Counts a handshake that starts, unless a cap is reached.
     *
     * @param source the peer's source address (an IP), or null where every peer is this host's (shm)
     * @return null if counted, else why not (names the cap and its key); nothing was counted then
     */
    String begin(String source) {
        int max = options.maxPendingHandshakes();
        while (true) {
            int n = pending.get();
            if (n >= max) {
                return "too many pending handshakes (maxPendingHandshakes=" + max + ")";
            }
            if (pending.compareAndSet(n, n + 1)) {
                break;
            }
        }
        if (source != null) {
            int perSource = options.maxPendingHandshakesPerSource();
            AtomicInteger c = bySource.computeIfAbsent(source, s -> new AtomicInteger());
            if (c.incrementAndGet() > perSource) {
                end(source);
                return "too many pending handshakes from " + source + " (maxPendingHandshakesPerSource="
                    + perSource + ")";
            }
        }
        return null;
    }

    /**
     * A counted handshake ended (established, refused or lost).
     *
     * @param source what {@link #begin} was given
     */
    void end(String source) {
        pending.decrementAndGet();
        if (source != null) {
            bySource.computeIfPresent(source, (s, c) -> c.decrementAndGet() <= 0 ? null : c);
        }
    }

    /** @return handshakes pending now */
    int pending() {
        return pending.get();
    }
}
