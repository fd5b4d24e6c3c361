package io.rdmx.spark;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

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
 *
 * <p>A reader that found a block corrupt asks the executor that served it why, as Spark's own fetcher does
 * ({@code spark.shuffle.checksum.enabled}): a request of method {@link #METHOD_DIAGNOSE} carries the block, the
 * checksum the reader computed over the bytes it received and the algorithm's name; the server compares the
 * checksum the map task wrote (its checksum file) with one computed again from the block on its disk and with the
 * reader's, and answers the cause's name (Spark's {@code Cause}: {@code DISK_ISSUE}, {@code NETWORK_ISSUE},
 * {@code CHECKSUM_VERIFY_PASS}, {@code UNSUPPORTED_CHECKSUM_ALGORITHM} or {@code UNKNOWN_ISSUE}), ASCII.
 *
 * <pre>
 *  +---------------------------------------------------------------+
 *  |                         version (1)                           |  0
 *  +---------------------------------------------------------------+
 *  |                         shuffle id                            |  4
 *  +---------------------------------------------------------------+
 *  |                   map id (8 bytes)                            |  8
 *  +---------------------------------------------------------------+
 *  |                       reduce id (partition)                   | 16
 *  +---------------------------------------------------------------+
 *  |          algorithm name length (1 .. MAX_ALGORITHM)           | 20
 *  +---------------------------------------------------------------+
 *  |                the reader's checksum (8 bytes)                | 24
 *  +---------------------------------------------------------------+
 *  |     algorithm name (ASCII upper-case letters and digits)      | 32
 *  +---------------------------------------------------------------+
 * </pre>
 * The name becomes part of a file name on the server (Spark's checksum file, {@code <block>.checksum.<name>}),
 * hence its narrow alphabet.
 *
 * <p>Contiguous blocks of one map output (Spark's {@code ShuffleBlockBatchId}: AQE's coalesced partitions, with
 * {@code fetchShuffleBlocksInBatch}) are one range of its data file, asked for as one block by a request of
 * method {@link #METHOD_FETCH_BATCH}: a fetch request followed by the end of the range of reduce ids (exclusive),
 * answered as a fetch is, the size and bytes being those of the whole range.
 *
 * <pre>
 *  +---------------------------------------------------------------+
 *  |          version .. offset: as a fetch request (32 bytes)     |  0
 *  +---------------------------------------------------------------+
 *  |        end reduce id (exclusive, > reduce id)                 | 32
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * <p>A reader that fetches by one-sided READ first asks where a map output is ({@link #METHOD_LOCATE}): the
 * serving executor registers the map task's data file read-only for READ (once, until the shuffle is unregistered)
 * and answers the region's descriptor and the block offsets of its index file; the reader then READs each block's
 * bytes out of the region, the serving executor's threads taking no part. The request names the reader's READ node
 * (so that the descriptor is the one for its connection, where keys are per connection).
 *
 * <pre>
 *  +---------------------------------------------------------------+
 *  |                         version (1)                           |  0
 *  +---------------------------------------------------------------+
 *  |                         shuffle id                            |  4
 *  +---------------------------------------------------------------+
 *  |                   map id (8 bytes)                            |  8
 *  +---------------------------------------------------------------+
 *  |          reader node name length (1 .. 64)                    | 16
 *  +---------------------------------------------------------------+
 *  |          reader node name (ASCII letters, digits, -_.)        | 20
 *  +---------------------------------------------------------------+
 * </pre>
 * Its answer: the count of offsets {@code n} (partitions + 1), the region's descriptor ({@code RemoteRegion}'s
 * 16 bytes, little-endian as it encodes them) and the {@code n} offsets (8 bytes each, big-endian, from 0 to the
 * file's length). A map output that cannot be read so (a provider without file regions, a file of 2 GiB or more)
 * is answered with an error naming why: the reader fetches its blocks by {@link #METHOD_FETCH}.
 *
 * <pre>
 *  +---------------------------------------------------------------+
 *  |                 count of offsets n (2 ..)                     |  0
 *  +---------------------------------------------------------------+
 *  |              region descriptor (16 bytes)                     |  4
 *  +---------------------------------------------------------------+
 *  |                 offsets (n times 8 bytes)                     | 20
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class FetchProtocol {
    /** RPC method id of a fetch. */
    public static final int METHOD_FETCH = 1;
    /** RPC method id of a corruption diagnosis. */
    public static final int METHOD_DIAGNOSE = 2;
    /** RPC method id of a fetch of a range of contiguous blocks of one map output. */
    public static final int METHOD_FETCH_BATCH = 3;
    /** RPC method id of a map output's location for READ. */
    public static final int METHOD_LOCATE = 4;
    /** Offset of a location request's reader node name length. */
    public static final int NODE_LENGTH_OFFSET = 16;
    /** Offset of a location request's reader node name. */
    public static final int NODE_OFFSET = 20;
    /** The longest node name a location request carries. */
    public static final int MAX_NODE = 64;
    /** Offset of a location answer's region descriptor. */
    public static final int LOCATION_REGION_OFFSET = 4;
    /** Offset of a location answer's first offset. */
    public static final int LOCATION_OFFSETS_OFFSET = 20;
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
    /** Offset of a batch request's end reduce id. */
    public static final int END_REDUCE_OFFSET = 32;
    /** Length of a batch request. */
    public static final int BATCH_LENGTH = 36;
    /** Offset of a diagnosis request's algorithm name length. */
    public static final int ALGORITHM_LENGTH_OFFSET = 20;
    /** Offset of a diagnosis request's checksum. */
    public static final int CHECKSUM_OFFSET = 24;
    /** Offset of a diagnosis request's algorithm name. */
    public static final int ALGORITHM_OFFSET = 32;
    /** The longest algorithm name a diagnosis request carries (Spark's are ADLER32, CRC32 and CRC32C). */
    public static final int MAX_ALGORITHM = 16;
    /** The longest cause name a diagnosis answer carries. */
    public static final int MAX_CAUSE = 64;
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
     * Writes a location request.
     *
     * @param shuffleId the shuffle
     * @param mapId the map task's id
     * @param readerNode the name of the reader's READ node
     * @return the request body, positioned at 0
     */
    public static ByteBuffer locateRequest(int shuffleId, long mapId, String readerNode) {
        byte[] name = readerNode.getBytes(StandardCharsets.US_ASCII);
        ByteBuffer b = ByteBuffer.allocate(NODE_OFFSET + name.length);
        b.putInt(VERSION_OFFSET, VERSION).putInt(SHUFFLE_OFFSET, shuffleId).putLong(MAP_OFFSET, mapId)
            .putInt(NODE_LENGTH_OFFSET, name.length).put(NODE_OFFSET, name);
        return b;
    }

    /**
     * Checks a location request read from a peer.
     *
     * @param b the body, from its position
     * @return null when valid, else the reason as {@code name=value}
     */
    public static String validateLocate(ByteBuffer b) {
        int n = b.remaining();
        if (n < NODE_OFFSET + 1 || n > NODE_OFFSET + MAX_NODE) {
            return "location request length=" + n + " out of range [" + (NODE_OFFSET + 1) + ", "
                + (NODE_OFFSET + MAX_NODE) + "]";
        }
        int p = b.position();
        int version = b.getInt(p + VERSION_OFFSET);
        if (version != VERSION) {
            return "location request version=" + version + " expected=" + VERSION;
        }
        if (b.getInt(p + SHUFFLE_OFFSET) < 0 || b.getLong(p + MAP_OFFSET) < 0) {
            return "shuffleId=" + b.getInt(p + SHUFFLE_OFFSET) + " mapId=" + b.getLong(p + MAP_OFFSET)
                + ": negative";
        }
        int len = b.getInt(p + NODE_LENGTH_OFFSET);
        if (len != n - NODE_OFFSET) {
            return "node name length=" + len + " expected=" + (n - NODE_OFFSET);
        }
        String name = ascii(b, p + NODE_OFFSET, len);
        return name.matches("[A-Za-z0-9_.-]+") ? null : "node name=" + name + " is not letters, digits, -_.";
    }

    /**
     * @param b a valid location request
     * @return the reader's READ node name
     */
    public static String readerNode(ByteBuffer b) {
        return ascii(b, b.position() + NODE_OFFSET, b.getInt(b.position() + NODE_LENGTH_OFFSET));
    }

    /**
     * Writes a location answer.
     *
     * @param region the descriptor of the map output's data file region
     * @param offsets the block offsets of its index file
     * @return the answer
     */
    public static ByteBuffer location(io.rdmx.transport.RemoteRegion region, long[] offsets) {
        ByteBuffer b = ByteBuffer.allocate(LOCATION_OFFSETS_OFFSET + 8 * offsets.length);
        b.putInt(0, offsets.length);
        region.encode(b, LOCATION_REGION_OFFSET);
        for (int i = 0; i < offsets.length; i++) {
            b.putLong(LOCATION_OFFSETS_OFFSET + 8 * i, offsets[i]);
        }
        return b;
    }

    /**
     * Reads a location answer from a peer, checked: its length, offsets from 0, never decreasing, within the
     * region.
     *
     * @param answer the answer's bytes
     * @return the offsets; the descriptor is {@link #locationRegion}
     * @throws IllegalArgumentException naming what is wrong
     */
    public static long[] locationOffsets(byte[] answer) {
        ByteBuffer b = ByteBuffer.wrap(answer);
        if (answer.length < LOCATION_OFFSETS_OFFSET + 16) {
            throw new IllegalArgumentException("location answer length=" + answer.length + " is too short");
        }
        int n = b.getInt(0);
        if (n < 2 || answer.length != LOCATION_OFFSETS_OFFSET + 8L * n) {
            throw new IllegalArgumentException("location answer offsets=" + n + " length=" + answer.length);
        }
        long[] offsets = new long[n];
        long regionLength = locationRegion(answer).length();
        for (int i = 0; i < n; i++) {
            offsets[i] = b.getLong(LOCATION_OFFSETS_OFFSET + 8 * i);
            if (i == 0 ? offsets[i] != 0 : offsets[i] < offsets[i - 1] || offsets[i] > regionLength) {
                throw new IllegalArgumentException("location answer offset[" + i + "]=" + offsets[i]
                    + " out of order or past the region's length=" + regionLength);
            }
        }
        return offsets;
    }

    /**
     * @param answer a location answer
     * @return its region descriptor
     */
    public static io.rdmx.transport.RemoteRegion locationRegion(byte[] answer) {
        return io.rdmx.transport.RemoteRegion.decode(ByteBuffer.wrap(answer), LOCATION_REGION_OFFSET);
    }

    /**
     * Writes a request for a range of blocks of one map output, or for one block ({@link #request}) when the range
     * holds one.
     *
     * @param shuffleId the shuffle
     * @param mapId the map task's id
     * @param reduceId the first partition
     * @param endReduceId the end of the range, exclusive ({@code > reduceId})
     * @param offset where in the range's bytes
     * @param length how many bytes
     * @return the request body, positioned at 0
     */
    public static ByteBuffer request(int shuffleId, long mapId, int reduceId, int endReduceId, long offset,
                                     int length) {
        if (endReduceId == reduceId + 1) {
            return request(shuffleId, mapId, reduceId, offset, length);
        }
        ByteBuffer b = ByteBuffer.allocate(BATCH_LENGTH);
        b.put(request(shuffleId, mapId, reduceId, offset, length)).putInt(END_REDUCE_OFFSET, endReduceId);
        return b.clear();
    }

    /**
     * @param request a request {@link #request} wrote, from its position
     * @return its RPC method: {@link #METHOD_FETCH_BATCH} for a range of blocks, else {@link #METHOD_FETCH}
     */
    public static int method(ByteBuffer request) {
        return request.remaining() == BATCH_LENGTH ? METHOD_FETCH_BATCH : METHOD_FETCH;
    }

    /**
     * @param method the RPC method of a request
     * @return whether it is a fetch (of a block or of a range of them)
     */
    public static boolean isFetch(int method) {
        return method == METHOD_FETCH || method == METHOD_FETCH_BATCH;
    }

    /**
     * Checks a request of either fetch method read from a peer.
     *
     * @param method {@link #METHOD_FETCH} or {@link #METHOD_FETCH_BATCH}
     * @param b the body, from its position
     * @param maxLength the largest length this server answers
     * @return null when valid, else the reason as {@code name=value}
     */
    public static String validate(int method, ByteBuffer b, int maxLength) {
        if (method != METHOD_FETCH_BATCH) {
            return validate(b, maxLength);
        }
        if (b.remaining() != BATCH_LENGTH) {
            return "batch fetch request length=" + b.remaining() + " expected=" + BATCH_LENGTH;
        }
        String bad = validate(b.duplicate().limit(b.position() + LENGTH), maxLength);
        if (bad != null) {
            return bad;
        }
        int end = b.getInt(b.position() + END_REDUCE_OFFSET);
        if (end <= reduceId(b)) {
            return "endReduceId=" + end + " is not above reduceId=" + reduceId(b);
        }
        return null;
    }

    /**
     * @param method the request's method
     * @param b a valid request of either fetch method
     * @return the end of its range of reduce ids, exclusive
     */
    public static int endReduceId(int method, ByteBuffer b) {
        return method == METHOD_FETCH_BATCH ? b.getInt(b.position() + END_REDUCE_OFFSET) : reduceId(b) + 1;
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
        String bad = validateBlock(b, "fetch request");
        if (bad != null) {
            return bad;
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
     * Writes a corruption diagnosis request.
     *
     * @param shuffleId the shuffle
     * @param mapId the map task's id
     * @param reduceId the partition
     * @param checksum the checksum the reader computed over the block's bytes it received
     * @param algorithm the checksum's algorithm (Spark's {@code spark.shuffle.checksum.algorithm})
     * @return the request body, positioned at 0
     * @throws IllegalArgumentException if the algorithm's name is not 1 to {@link #MAX_ALGORITHM} upper-case
     *         ASCII letters and digits
     */
    public static ByteBuffer diagnoseRequest(int shuffleId, long mapId, int reduceId, long checksum,
                                             String algorithm) {
        String bad = validateName("algorithm", algorithm, MAX_ALGORITHM, false);
        if (bad != null) {
            throw new IllegalArgumentException(bad);
        }
        byte[] name = algorithm.getBytes(StandardCharsets.US_ASCII);
        ByteBuffer b = ByteBuffer.allocate(ALGORITHM_OFFSET + name.length);
        b.putInt(VERSION_OFFSET, VERSION).putInt(SHUFFLE_OFFSET, shuffleId).putLong(MAP_OFFSET, mapId)
            .putInt(REDUCE_OFFSET, reduceId).putInt(ALGORITHM_LENGTH_OFFSET, name.length)
            .putLong(CHECKSUM_OFFSET, checksum).put(ALGORITHM_OFFSET, name);
        return b;
    }

    /**
     * The fields both requests open with, a block's id (the request's length checked by the caller).
     *
     * @param b the body, from its position
     * @param what the request, for the reason
     * @return null when valid, else the reason as {@code name=value}
     */
    private static String validateBlock(ByteBuffer b, String what) {
        int p = b.position();
        int version = b.getInt(p + VERSION_OFFSET);
        if (version != VERSION) {
            return what + " version=" + version + " expected=" + VERSION;
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
        return null;
    }

    /**
     * Checks a diagnosis request read from a peer.
     *
     * @param b the body, from its position
     * @return null when valid, else the reason as {@code name=value}
     */
    public static String validateDiagnose(ByteBuffer b) {
        int n = b.remaining();
        if (n < ALGORITHM_OFFSET + 1 || n > ALGORITHM_OFFSET + MAX_ALGORITHM) {
            return "diagnosis request length=" + n + " out of range [" + (ALGORITHM_OFFSET + 1) + ", "
                + (ALGORITHM_OFFSET + MAX_ALGORITHM) + "]";
        }
        int p = b.position();
        String bad = validateBlock(b, "diagnosis request");
        if (bad != null) {
            return bad;
        }
        int nameLength = b.getInt(p + ALGORITHM_LENGTH_OFFSET);
        if (nameLength != n - ALGORITHM_OFFSET) {
            return "algorithm length=" + nameLength + " expected=" + (n - ALGORITHM_OFFSET);
        }
        return validateName("algorithm", ascii(b, p + ALGORITHM_OFFSET, nameLength), MAX_ALGORITHM, false);
    }

    /**
     * @param b a valid diagnosis request
     * @return the reader's checksum
     */
    public static long checksum(ByteBuffer b) {
        return b.getLong(b.position() + CHECKSUM_OFFSET);
    }

    /**
     * @param b a valid diagnosis request
     * @return the checksum's algorithm
     */
    public static String algorithm(ByteBuffer b) {
        return ascii(b, b.position() + ALGORITHM_OFFSET, b.getInt(b.position() + ALGORITHM_LENGTH_OFFSET));
    }

    /**
     * @param cause the cause's name
     * @return the diagnosis answer
     * @throws IllegalArgumentException if the name is not 1 to {@link #MAX_CAUSE} upper-case ASCII letters,
     *         digits and underscores
     */
    public static ByteBuffer diagnosis(String cause) {
        String bad = validateName("cause", cause, MAX_CAUSE, true);
        if (bad != null) {
            throw new IllegalArgumentException(bad);
        }
        return ByteBuffer.wrap(cause.getBytes(StandardCharsets.US_ASCII));
    }

    /**
     * Checks a diagnosis answer read from a peer.
     *
     * @param answer the answer's bytes
     * @return null when valid, else the reason as {@code name=value}
     */
    public static String validateDiagnosis(byte[] answer) {
        if (answer.length < 1 || answer.length > MAX_CAUSE) {
            return "diagnosis answer length=" + answer.length + " out of range [1, " + MAX_CAUSE + "]";
        }
        return validateName("cause", ascii(ByteBuffer.wrap(answer), 0, answer.length), MAX_CAUSE, true);
    }

    /**
     * @param answer a valid diagnosis answer
     * @return the cause's name
     */
    public static String cause(byte[] answer) {
        return new String(answer, StandardCharsets.US_ASCII);
    }

    /** Each byte as a char (a byte over 127 becomes a char the name check refuses). */
    private static String ascii(ByteBuffer b, int at, int n) {
        char[] c = new char[n];
        for (int i = 0; i < n; i++) {
            c[i] = (char) (b.get(at + i) & 0xFF);
        }
        return new String(c);
    }

    /** @return null if {@code s} is 1 to {@code max} of A-Z, 0-9 (and '_' if allowed), else the reason */
    private static String validateName(String what, String s, int max, boolean underscore) {
        if (s == null || s.isEmpty() || s.length() > max) {
            return what + " name length=" + (s == null ? 0 : s.length()) + " out of range [1, " + max + "]";
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (!(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || underscore && c == '_')) {
                return what + " name has character=0x" + Integer.toHexString(c) + " at index=" + i
                    + " (only A-Z, 0-9" + (underscore ? ", _" : "") + ")";
            }
        }
        return null;
    }

    /**
     * @param shuffleId the shuffle
     * @param mapId the map task's id
     * @param reduceId the partition
     * @param endReduceId the end of a range of partitions, exclusive ({@code reduceId + 1}: the one block)
     * @return Spark's name of the block ({@code shuffle_<shuffle>_<map>_<reduce>}) or of the range
     *         ({@code ShuffleBlockBatchId}'s: {@code shuffle_<shuffle>_<map>_<reduce>_<end>})
     */
    public static String blockName(int shuffleId, long mapId, int reduceId, int endReduceId) {
        return endReduceId == reduceId + 1 ? blockName(shuffleId, mapId, reduceId)
            : "shuffle_" + shuffleId + "_" + mapId + "_" + reduceId + "_" + endReduceId;
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
