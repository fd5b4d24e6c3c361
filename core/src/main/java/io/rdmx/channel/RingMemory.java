package io.rdmx.channel;

import io.rdmx.transport.RdmxException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The ring memory (pair regions) a {@link ChannelEngine} holds for its peers, against
 * {@link ChannelConfig#maxRingMemory()}: a peer's rings are reserved before they are registered and given back
 * when they are released. Any thread.
 */
final class RingMemory {
    private final String node;
    private final long max;
    private final AtomicLong held = new AtomicLong();

    /**
     * @param node the node's name, for errors
     * @param max {@link ChannelConfig#maxRingMemory()}
     */
    RingMemory(String node, long max) {
        this.node = node;
        this.max = max;
    }

    /**
     * Reserves ring memory for one peer's pair region; the peer's own limit was checked before. Completion thread
     * of that peer.
     *
     * @param peer the peer's name, for the error
     * @param bytes the region's length
     * @throws RdmxException if the engine's total would pass its limit (names the peer, the request, the total
     *     and the key)
     */
    void reserve(String peer, long bytes) throws RdmxException {
        while (true) {
            long used = held.get();
            if (used + bytes > max) {
                throw new RdmxException("peer '" + peer + "' needs " + bytes + " bytes of ring memory at node '"
                    + node + "', which holds " + used + " for its other peers: beyond "
                    + ChannelConfig.MAX_RING_MEMORY_PROP + "=" + max);
            }
            if (held.compareAndSet(used, used + bytes)) {
                return;
            }
        }
    }

    /** @param bytes ring memory given back (a pair region released, or never registered after its reservation) */
    void release(long bytes) {
        held.addAndGet(-bytes);
    }

    /** @return the ring memory held now (bytes) */
    long held() {
        return held.get();
    }
}
