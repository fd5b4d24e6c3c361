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
 *
 * <p>A mapped channel (both nodes map each other's region, see {@link SharedRing}) appends the shared words:
 * <pre>
 *  +------------------------------+------------------------------+----------------------+---------------------+
 *  | ring headers low -> high     | ring headers high -> low     | reader headers, low  | reader headers, high|
 *  | lowW * highW x 384 bytes     | highW * lowW x 384 bytes     | lowW x 128 bytes     | highW x 128 bytes   |
 *  +------------------------------+------------------------------+----------------------+---------------------+
 * </pre>
 */
public final class PairLayout {
    /** Rings per direction that a NOTIFY entry's 16-bit ring index can name. */
    public static final int MAX_RINGS = 1 << 16;

    private final int lowWorkers;
    private final int highWorkers;
    private final int capacity;
    private final boolean mapped;

    /**
     * A layout without shared headers (the WRITE path).
     *
     * @param lowWorkers workers of the node whose name sorts first
     * @param highWorkers workers of the other node
     * @param capacity bytes per ring
     */
    public PairLayout(int lowWorkers, int highWorkers, int capacity) {
        this(lowWorkers, highWorkers, capacity, false);
    }

    /**
     * @param lowWorkers workers of the node whose name sorts first
     * @param highWorkers workers of the other node
     * @param capacity bytes per ring
     * @param mapped true to append the {@link SharedRing} headers of a mapped channel
     */
    public PairLayout(int lowWorkers, int highWorkers, int capacity, boolean mapped) {
        if (lowWorkers < 1 || highWorkers < 1 || capacity < 1) {
            throw new IllegalArgumentException("pair layout needs positive sizes: lowWorkers=" + lowWorkers
                + " highWorkers=" + highWorkers + " capacity=" + capacity);
        }
        if ((long) lowWorkers * highWorkers > MAX_RINGS) {
            throw new IllegalArgumentException("too many rings: lowWorkers=" + lowWorkers + " highWorkers="
                + highWorkers + " (at most " + MAX_RINGS + " per direction: a NOTIFY entry has a 16-bit ring index)");
        }
        if ((long) lowWorkers * highWorkers * capacity * 2 + (mapped ? (long) lowWorkers * highWorkers * 2
            * SharedRing.RING_HEADER_LENGTH + (long) (lowWorkers + highWorkers) * SharedRing.READER_HEADER_LENGTH : 0)
            > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("pair region too large: lowWorkers=" + lowWorkers + " highWorkers="
                + highWorkers + " capacity=" + capacity + " (must stay below 2 GiB)");
        }
        this.lowWorkers = lowWorkers;
        this.highWorkers = highWorkers;
        this.capacity = capacity;
        this.mapped = mapped;
    }

    /** @return true if the layout holds the shared headers of a mapped channel */
    public boolean mapped() {
        return mapped;
    }

    /** @return the region length */
    public int regionLength() {
        int rings = 2 * lowWorkers * highWorkers * capacity;
        return mapped ? rings + 2 * lowWorkers * highWorkers * SharedRing.RING_HEADER_LENGTH
            + (lowWorkers + highWorkers) * SharedRing.READER_HEADER_LENGTH : rings;
    }

    /**
     * @param fromLow true if the sender is the low node
     * @param ringIndex the ring
     * @return the offset of the ring's {@link SharedRing} header in the region (mapped layouts only)
     */
    public int ringHeaderOffset(boolean fromLow, int ringIndex) {
        requireMapped();
        int base = 2 * lowWorkers * highWorkers * capacity;
        return base + ((fromLow ? 0 : lowWorkers * highWorkers) + ringIndex) * SharedRing.RING_HEADER_LENGTH;
    }

    /**
     * @param receiverLow true if the receiving node is the low node
     * @param worker the receiving worker
     * @return the offset of the worker's {@link SharedRing} reader header in the region (mapped layouts only)
     */
    public int readerHeaderOffset(boolean receiverLow, int worker) {
        requireMapped();
        int base = 2 * lowWorkers * highWorkers * (capacity + SharedRing.RING_HEADER_LENGTH);
        return base + ((receiverLow ? 0 : lowWorkers) + worker) * SharedRing.READER_HEADER_LENGTH;
    }

    private void requireMapped() {
        if (!mapped) {
            throw new IllegalStateException("pair layout has no shared headers (mapped=false)");
        }
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
