package io.rdmx.spark;

import java.nio.ByteBuffer;

/**
 * The fetch request of the block channels: an RPC ({@code rdmx-rpc}) request of method {@link #METHOD_FETCH}
 * whose body asks for at most {@code length} bytes at {@code offset} of one map output block. The answer is the
 * block's exact size (8 bytes, big-endian; the map output sizes Spark's scheduler knows are estimates) followed by
 * {@code min(length, max(0, size - offset))} bytes of the block: a request at or past the end (a reader asks for
 * all the chunks of a block's estimate at once, and estimates run high) is answered with the size alone. A failure
 * comes back as the remote error of the handler (class name and message).
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                         version (1)                           |  0
 *  +---------------------------------------------------------------+
 *  |                         shuffle id                            |  4
 *  +---------------------------------------------------------------+
 *  |                                                               |  8
 *  +                    map id (Spark's task attempt id)           +
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                       reduce id (partition)                   | 16
 *  +---------------------------------------------------------------+
 *  |                      length (1 .. chunk bytes)                | 20
 *  +---------------------------------------------------------------+
 *  |                                                               | 24
 *  +                  offset inside the block (>= 0)               +
 *  |                                                               |
 *  +---------------------------------------------------------------+
 * </pre>
 * Big-endian (the ByteBuffer default), {@link #LENGTH} bytes.
 */
public final class FetchProtocol {
    /** RPC method id of a fetch. */
    public static final int METHOD_FETCH = 1;
    /** The version this code writes and accepts. */
    public static final int VERSION = 1;
    /** Offset of the version. */
    public static final int VERSION_OFFSET = 0;
    /** Offset of the shuffle id. */
    public static final int SHUFFLE_OFFSET = 4;
    /** Offset of the map id. */
    public static final int MAP_OFFSET = 8;
    /** Offset of the reduce id. */
    public static final int REDUCE_OFFSET = 16;
    /** Offset of the length. */
    public static final int LENGTH_OFFSET = 20;
    /** Offset of the offset. */
    public static final int BLOCK_OFFSET_OFFSET = 24;
    /** Length of a request. */
    public static final int LENGTH = 32;
    /** Length of the answer's header: the block's size. */
    public static final int ANSWER_HEADER = 8;

    private FetchProtocol() {
    }

    /**
     * Writes a request.
     *
     * @param shuffleId the shuffle
     * @param mapId the map task's id
     * @param reduceId the partition
     * @param offset where in the block
     * @param length how many bytes
     * @return the request body, positioned at 0
     */
    public static ByteBuffer request(int shuffleId, long mapId, int reduceId, long offset, int length) {
        ByteBuffer b = ByteBuffer.allocate(LENGTH);
        b.putInt(VERSION_OFFSET, VERSION).putInt(SHUFFLE_OFFSET, shuffleId).putLong(MAP_OFFSET, mapId)
            .putInt(REDUCE_OFFSET, reduceId).putInt(LENGTH_OFFSET, length).putLong(BLOCK_OFFSET_OFFSET, offset);
        return b;
    }

    /**
     * Checks a request read from a peer.
     *
     * @param b the body, from its position
     * @param maxLength the largest length this server answers
     * @return null when valid, else the reason as {@code name=value}
     */
    public static String validate(ByteBuffer b, int maxLength) {
        if (b.remaining() != LENGTH) {
            return "fetch request length=" + b.remaining() + " expected=" + LENGTH;
        }
        int p = b.position();
        int version = b.getInt(p + VERSION_OFFSET);
        if (version != VERSION) {
            return "fetch request version=" + version + " expected=" + VERSION;
        }
        if (b.getInt(p + SHUFFLE_OFFSET) < 0) {
            return "shuffleId=" + b.getInt(p + SHUFFLE_OFFSET) + " is negative";
        }
        if (b.getLong(p + MAP_OFFSET) < 0) {
            return "mapId=" + b.getLong(p + MAP_OFFSET) + " is negative";
        }
        if (b.getInt(p + REDUCE_OFFSET) < 0) {
            return "reduceId=" + b.getInt(p + REDUCE_OFFSET) + " is negative";
        }
        int length = b.getInt(p + LENGTH_OFFSET);
        if (length < 1 || length > maxLength) {
            return "length=" + length + " out of range [1, " + maxLength + "]";
        }
        if (b.getLong(p + BLOCK_OFFSET_OFFSET) < 0) {
            return "offset=" + b.getLong(p + BLOCK_OFFSET_OFFSET) + " is negative";
        }
        return null;
    }

    /**
     * @param b a valid request
     * @return its shuffle id
     */
    public static int shuffleId(ByteBuffer b) {
        return b.getInt(b.position() + SHUFFLE_OFFSET);
    }

    /**
     * @param b a valid request
     * @return its map id
     */
    public static long mapId(ByteBuffer b) {
        return b.getLong(b.position() + MAP_OFFSET);
    }

    /**
     * @param b a valid request
     * @return its reduce id
     */
    public static int reduceId(ByteBuffer b) {
        return b.getInt(b.position() + REDUCE_OFFSET);
    }

    /**
     * @param b a valid request
     * @return its length
     */
    public static int length(ByteBuffer b) {
        return b.getInt(b.position() + LENGTH_OFFSET);
    }

    /**
     * @param b a valid request
     * @return its offset in the block
     */
    public static long offset(ByteBuffer b) {
        return b.getLong(b.position() + BLOCK_OFFSET_OFFSET);
    }

    /**
     * Checks an answer against its request.
     *
     * @param answer the answer's bytes
     * @param offset the request's offset
     * @param length the request's length
     * @return null when valid, else the reason as {@code name=value}
     */
    public static String validateAnswer(byte[] answer, long offset, int length) {
        return validateAnswer(ByteBuffer.wrap(answer), offset, length);
    }

    /**
     * Checks an answer against its request.
     *
     * @param answer the answer, from its position to its limit (position unchanged)
     * @param offset the request's offset
     * @param length the request's length
     * @return null when valid, else the reason as {@code name=value}
     */
    public static String validateAnswer(ByteBuffer answer, long offset, int length) {
        int n = answer.remaining();
        if (n < ANSWER_HEADER) {
            return "answer length=" + n + " shorter than its header=" + ANSWER_HEADER;
        }
        long size = answerSize(answer);
        if (size < 0) {
            return "block size=" + size + " is negative";
        }
        long expected = ANSWER_HEADER + Math.max(0, Math.min(length, size - offset));
        if (n != expected) {
            return "answer length=" + n + " expected=" + expected + " (block size=" + size + ", offset="
                + offset + ", length=" + length + ")";
        }
        return null;
    }

    /**
     * @param answer an answer
     * @return the block size it states
     */
    public static long answerSize(byte[] answer) {
        return answerSize(ByteBuffer.wrap(answer));
    }

    /**
     * @param answer an answer, from its position (position unchanged)
     * @return the block size it states
     */
    public static long answerSize(ByteBuffer answer) {
        return answer.getLong(answer.position());
    }

    /**
     * @param shuffleId the shuffle
     * @param mapId the map task's id
     * @param reduceId the partition
     * @return Spark's name of the block ({@code shuffle_<shuffle>_<map>_<reduce>})
     */
    public static String blockName(int shuffleId, long mapId, int reduceId) {
        return "shuffle_" + shuffleId + "_" + mapId + "_" + reduceId;
    }
}
