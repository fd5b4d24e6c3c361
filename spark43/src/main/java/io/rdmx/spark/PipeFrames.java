package io.rdmx.spark;

import java.nio.ByteBuffer;

/**
 * The records of the pipelined shuffle on a ring channel: one channel record each, written by a map task to the
 * ring of the reduce task that owns the partition, on the stream ({@code streamId}) of that reader's session (so a
 * reader drops what an earlier reader of the same ring was sent). Little endian, as the ring is.
 *
 * <pre>
 *  0               1               2               3
 *  0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
 * +---------------+-----------------------------------------------+
 * |     kind      |                 reserved (0)                  |
 * +---------------+-----------------------------------------------+
 * |                 map index (the map task's partition)          |
 * +---------------------------------------------------------------+
 * |                 partition (the reduce partition)              |
 * +---------------------------------------------------------------+
 * |  body: DATA: serialized (key, value) pairs, one serializer    |
 * |  stream; ABORT: the UTF-8 reason; START, END: empty           |
 * +---------------------------------------------------------------+
 * </pre>
 *
 * A map task sends START to every partition before its first record (so a reader knows which peer carries which
 * map), DATA as records are produced, then END; ABORT when it fails. A reader is done when it has END from every
 * map of its range.
 */
final class PipeFrames {
    /** The map task begins; its peer carries this map's records. */
    static final byte START = 1;
    /** Serialized records. */
    static final byte DATA = 2;
    /** The map task ended: nothing more from it. */
    static final byte END = 3;
    /** The map task failed; the body says why. */
    static final byte ABORT = 4;
    /** Header bytes before the body. */
    static final int HEADER = 12;
    private static final int KIND = 0;
    private static final int MAP = 4;
    private static final int PARTITION = 8;

    private PipeFrames() {
    }

    /**
     * Writes a header.
     *
     * @param b the buffer
     * @param at where the record starts
     * @param kind {@link #START}, {@link #DATA}, {@link #END} or {@link #ABORT}
     * @param mapIndex the map task's partition
     * @param partition the reduce partition
     */
    static void header(ByteBuffer b, int at, byte kind, int mapIndex, int partition) {
        b.putInt(at + KIND, kind & 0xff);
        b.putInt(at + MAP, mapIndex);
        b.putInt(at + PARTITION, partition);
    }

    /**
     * @param b the buffer
     * @param at where the record starts
     * @param length the record's length
     * @return its kind
     * @throws IllegalArgumentException for a record shorter than a header or of no known kind
     */
    static byte kind(ByteBuffer b, int at, int length) {
        if (length < HEADER) {
            throw new IllegalArgumentException("pipelined shuffle record of " + length + " bytes: shorter than its "
                + HEADER + "-byte header");
        }
        int k = b.getInt(at + KIND);
        if (k < START || k > ABORT) {
            throw new IllegalArgumentException("pipelined shuffle record of unknown kind " + k);
        }
        return (byte) k;
    }

    static int mapIndex(ByteBuffer b, int at) {
        return b.getInt(at + MAP);
    }

    static int partition(ByteBuffer b, int at) {
        return b.getInt(at + PARTITION);
    }
}
