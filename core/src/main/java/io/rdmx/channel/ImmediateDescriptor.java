package io.rdmx.channel;

/**
 * Layout of the 32-bit immediate a writer's last WRITE of a batch carries in
 * {@link ChannelConfig.Notification#WRITE_WITH_IMM} mode: it announces the batch to the receiver, which adds the
 * length to the ring's head.
 *
 * <pre>
 *   31                  20 19                                      0
 *  +----------------------+-----------------------------------------+
 *  |  ring index (12)     |  length of the WRITE / 8 (20)           |
 *  +----------------------+-----------------------------------------+
 * </pre>
 *
 * <ul>
 *   <li>ring index: as in a NOTIFY entry, counted in the direction of the data
 *       ({@code senderWorker * receiverWorkers + receiverWorker}); so at most {@link #MAX_RINGS} rings per
 *       direction, which {@link #validateRings} checks where the two worker counts meet (the HELLO);</li>
 *   <li>length: bytes the WRITE (both parts, when the range wraps) added to the ring, a multiple of
 *       {@link RecordDescriptor#ALIGNMENT}, 1 to {@link #MAX_RING_CAPACITY} bytes (a range never exceeds the
 *       ring, whose capacity {@link ChannelConfig} bounds in this mode).</li>
 * </ul>
 */
final class ImmediateDescriptor {
    /** Bits of the length field. */
    static final int LENGTH_BITS = 20;
    /** Shift of the ring index. */
    static final int RING_SHIFT = LENGTH_BITS;
    /** Mask of the length field. */
    static final int LENGTH_MASK = (1 << LENGTH_BITS) - 1;
    /** The length is carried in units of this many bytes. */
    static final int LENGTH_UNIT_SHIFT = 3;
    /** Rings per direction the 12-bit ring index can name. */
    static final int MAX_RINGS = 1 << (Integer.SIZE - RING_SHIFT);
    /** The largest ring capacity: a WRITE never exceeds one ring, and 4 MiB / 8 still fits the length field. */
    static final int MAX_RING_CAPACITY = 4 << 20;

    private ImmediateDescriptor() {
    }

    /**
     * @param ring ring index, below {@link #MAX_RINGS}
     * @param length bytes, a positive multiple of 8, at most {@link #MAX_RING_CAPACITY}
     * @return the immediate
     */
    static int encode(int ring, int length) {
        return (ring << RING_SHIFT) | (length >>> LENGTH_UNIT_SHIFT);
    }

    /**
     * @param imm an immediate
     * @return its ring index
     */
    static int ring(int imm) {
        return imm >>> RING_SHIFT;
    }

    /**
     * @param imm an immediate
     * @return the bytes it announces
     */
    static int length(int imm) {
        return (imm & LENGTH_MASK) << LENGTH_UNIT_SHIFT;
    }

    /**
     * Checks a received immediate; null when valid. Whether the length fits the ring's free space is the
     * ring's to say ({@link IncomingRing#onData}).
     *
     * @param imm the immediate
     * @param rings rings in the direction of the data
     * @return null or what is wrong, with {@code name=value} context
     */
    static String validate(int imm, int rings) {
        int ring = ring(imm);
        if (ring >= rings) {
            return "immediate=0x" + Integer.toHexString(imm) + " names ring=" + ring + " >= rings=" + rings;
        }
        if (length(imm) == 0) {
            return "immediate=0x" + Integer.toHexString(imm) + " announces length=0 for ring=" + ring;
        }
        return null;
    }

    /**
     * Checks that the rings between two nodes can be named by an immediate; null when they can.
     *
     * @param localWorkers this node's workers
     * @param peerWorkers the peer's workers
     * @return null, or why not: both worker counts and the limit
     */
    static String validateRings(int localWorkers, int peerWorkers) {
        long rings = (long) localWorkers * peerWorkers;
        if (rings <= MAX_RINGS) {
            return null;
        }
        return "notification=WRITE_WITH_IMM cannot name " + rings + " rings per direction: workers local="
            + localWorkers + " x peer=" + peerWorkers + " exceeds " + MAX_RINGS + " (the 12-bit ring index of the"
            + " immediate); use notification=SEND or fewer workers";
    }
}
