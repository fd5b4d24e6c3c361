package io.rdmx.channel;

/**
 * Layout of the one region a node registers per peer: a circular buffer per pair of workers, in both
 * directions. Both nodes lay it out identically, so a sender's outgoing buffer sits at the same offset as the
 * receiver's incoming buffer (the mirror that lets the sender know where its data lands).
 *
 * <pre>
 *  +--------------------------------------+--------------------------------------+
 *  | low -> high: lowW * highW rings      | high -> low: highW * lowW rings      |
 *  | ring (s, r) at (s * highW + r) * cap | ring (s, r) at base + (s * lowW + r) * cap
 *  +--------------------------------------+--------------------------------------+
 * </pre>
 * "low" is the node whose name sorts first.
 */
public final class PairLayout {
    /** Rings per direction that a NOTIFY entry's 16-bit ring index can name. */
    public static final int MAX_RINGS = 1 << 16;

    private final int lowWorkers;
    private final int highWorkers;
    private final int capacity;

    /**
     * @param lowWorkers workers of the node whose name sorts first
     * @param highWorkers workers of the other node
     * @param capacity bytes per ring
     */
    public PairLayout(int lowWorkers, int highWorkers, int capacity) {
        if (lowWorkers < 1 || highWorkers < 1 || capacity < 1) {
            throw new IllegalArgumentException("pair layout needs positive sizes: lowWorkers=" + lowWorkers
                + " highWorkers=" + highWorkers + " capacity=" + capacity);
        }
        if ((long) lowWorkers * highWorkers > MAX_RINGS) {
            throw new IllegalArgumentException("too many rings: lowWorkers=" + lowWorkers + " highWorkers="
                + highWorkers + " (at most " + MAX_RINGS + " per direction: a NOTIFY entry has a 16-bit ring index)");
        }
        if ((long) lowWorkers * highWorkers * capacity * 2 > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("pair region too large: lowWorkers=" + lowWorkers + " highWorkers="
                + highWorkers + " capacity=" + capacity + " (must stay below 2 GiB)");
        }
        this.lowWorkers = lowWorkers;
        this.highWorkers = highWorkers;
        this.capacity = capacity;
    }

    /** @return the region length */
    public int regionLength() {
        return 2 * lowWorkers * highWorkers * capacity;
    }

    /**
     * @param fromLow direction: true for rings written by the low node
     * @return rings in that direction
     */
    public int rings(boolean fromLow) {
        return lowWorkers * highWorkers;
    }

    /**
     * @param fromLow true if the sender is the low node
     * @param sender the sending worker
     * @param receiver the receiving worker
     * @return the ring index (as carried in notifications)
     */
    public int ringIndex(boolean fromLow, int sender, int receiver) {
        return fromLow ? sender * highWorkers + receiver : sender * lowWorkers + receiver;
    }

    /**
     * @param fromLow true if the sender is the low node
     * @param ringIndex the ring
     * @return the ring's offset in the region
     */
    public int offset(boolean fromLow, int ringIndex) {
        int base = fromLow ? 0 : lowWorkers * highWorkers * capacity;
        return base + ringIndex * capacity;
    }
}
