package io.rdmx.channel;

/**
 * Layout of a record in a circular buffer. Records are 8-byte aligned; a record never wraps: when it does not
 * fit before the end of the buffer, a padding record fills the rest and the record starts at index 0.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                    payload length (32, little endian)         |  0
 *  +-------------------------------+---------------+---------------+
 *  |       stream id (16)          |   type (8)    |  reserved (8) |  4
 *  +-------------------------------+---------------+---------------+
 *  |                    payload ... (padded to a multiple of 8)    |  8
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * Types: {@link #TYPE_DATA} an application record; {@link #TYPE_PADDING} the filler before a wrap (skipped);
 * {@link #TYPE_END} the writer's end of stream, no payload (length 0, stream id 0), its last record in the
 * ring: it travels like data (the same WRITE, immediate or mapped head), so it arrives after everything the
 * writer committed before it, on every provider and notification mode.
 */
public final class RecordDescriptor {
    /** Offset of the payload length. */
    public static final int LENGTH_OFFSET = 0;
    /** Offset of the stream id. */
    public static final int STREAM_OFFSET = 4;
    /** Offset of the type. */
    public static final int TYPE_OFFSET = 6;
    /** Header length; the payload starts here. */
    public static final int HEADER_LENGTH = 8;
    /** Records start at multiples of this. */
    public static final int ALIGNMENT = 8;
    /** Type of an application record. */
    public static final int TYPE_DATA = 1;
    /** Type of the filler before a wrap. */
    public static final int TYPE_PADDING = 2;
    /** Type of the writer's end-of-stream marker ({@code ChannelWriter.finish}): no payload, nothing after it. */
    public static final int TYPE_END = 3;
    /** The largest stream id. */
    public static final int MAX_STREAM_ID = 0xFFFF;

    private RecordDescriptor() {
    }

    /**
     * @param payloadLength payload bytes
     * @return the bytes the whole record occupies
     */
    public static int recordLength(int payloadLength) {
        return align(HEADER_LENGTH + payloadLength);
    }

    /**
     * @param n a length
     * @return n rounded up to {@link #ALIGNMENT}
     */
    public static int align(int n) {
        return (n + ALIGNMENT - 1) & -ALIGNMENT;
    }

    /**
     * Checks a record header as read from a buffer; null when valid.
     *
     * @param type the type byte
     * @param length the length field
     * @param remainingToEnd bytes from the record to the end of the buffer
     * @return null or what is wrong
     */
    public static String validate(int type, int length, int remainingToEnd) {
        if (type != TYPE_DATA && type != TYPE_PADDING && type != TYPE_END) {
            return "record type=" + type + " is unknown";
        }
        if (type == TYPE_END && length != 0) {
            return "end-of-stream record length=" + length + " (expected 0)";
        }
        // in long: recordLength(length) overflows to a negative size for length > Integer.MAX_VALUE - 15
        if (length < 0 || ((HEADER_LENGTH + (long) length + ALIGNMENT - 1) & -ALIGNMENT) > remainingToEnd) {
            return "record length=" + length + " runs past the end of the buffer (remaining=" + remainingToEnd + ")";
        }
        return null;
    }
}
