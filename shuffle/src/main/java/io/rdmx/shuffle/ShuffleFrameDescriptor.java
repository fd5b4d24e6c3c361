package io.rdmx.shuffle;

import io.rdmx.channel.RecordDescriptor;
import java.nio.ByteBuffer;

/**
 * Layout of what the shuffle puts in a channel record ({@link RecordDescriptor}): the meaning of its stream id,
 * and the payload of the two control records, the credit and the end-of-stream. All fields little endian.
 *
 * <pre>
 *  stream id ({@link RecordDescriptor#STREAM_OFFSET}, {@link #STREAM_BITS} bits):
 *   1 1 1 1 1 1
 *   5 4 3 2 1 0 9 8 7 6 5 4 3 2 1 0
 *  +-+-----------------------------+
 *  |C|      exchange id (15)       |
 *  +-+-----------------------------+
 *  C ({@link #CONTROL}, the stream id's top bit): 0 rows of the exchange (one object row, or fixed-width rows
 *  packed), 1 a control record of the exchange, told apart by its payload length:
 *
 *  end-of-stream ({@link #EOS_LENGTH} = 4 bytes): the sender ended the exchange towards this worker
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                sending worker, global index (32)              |  0
 *  +---------------------------------------------------------------+
 *
 *  credit ({@link #CREDIT_LENGTH} = 8 bytes): the receiver took that many of the sender's bytes of the exchange
 *  +---------------------------------------------------------------+
 *  |                bytes credited back (32, &gt; 0)                  |  0
 *  +---------------------------------------------------------------+
 *  |                mark 0x43524454 "CRDT" (32)                    |  4
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * The control bit is the record header's stream id field's top bit, derived from
 * {@link RecordDescriptor#MAX_STREAM_ID}: exchange ids are what is left below it ({@link #MAX_EXCHANGE_ID}).
 * {@code ShuffleFrameDescriptorTest} fails if the record header changes under these assumptions.
 */
final class ShuffleFrameDescriptor {
    /** Width of the record header's stream id field, in bits. */
    static final int STREAM_BITS = Integer.bitCount(RecordDescriptor.MAX_STREAM_ID);
    /** The stream id's control bit: set on credits and ends-of-stream, clear on rows. */
    static final int CONTROL = (RecordDescriptor.MAX_STREAM_ID >>> 1) + 1;
    /** The largest exchange id: every stream id bit below {@link #CONTROL}. */
    static final int MAX_EXCHANGE_ID = RecordDescriptor.MAX_STREAM_ID >>> 1;
    /** Payload length of an end-of-stream. */
    static final int EOS_LENGTH = 4;
    /** End-of-stream: offset of the sending worker. */
    static final int EOS_WORKER_OFFSET = 0;
    /** Payload length of a credit. */
    static final int CREDIT_LENGTH = 8;
    /** Credit: offset of the bytes credited back. */
    static final int CREDIT_BYTES_OFFSET = 0;
    /** Credit: offset of the mark. */
    static final int CREDIT_MARK_OFFSET = 4;
    /** Credit: the mark, "CRDT". */
    static final int CREDIT_MARK = 0x43524454;

    private ShuffleFrameDescriptor() {
    }

    /**
     * @param exchange an exchange id
     * @return the stream id of its rows
     */
    static int dataStream(int exchange) {
        return exchange;
    }

    /**
     * @param exchange an exchange id
     * @return the stream id of its credits and ends-of-stream
     */
    static int controlStream(int exchange) {
        return exchange | CONTROL;
    }

    /**
     * @param stream a received stream id
     * @return its exchange id
     */
    static int exchange(int stream) {
        return stream & MAX_EXCHANGE_ID;
    }

    /**
     * @param stream a received stream id
     * @return true for a control record (a credit or an end-of-stream)
     */
    static boolean isControl(int stream) {
        return (stream & CONTROL) != 0;
    }

    /**
     * @param stream a received stream id
     * @param length its payload length
     * @return true for a credit (any other control record is an end-of-stream, checked by
     *         {@link #endOfStreamWorker})
     */
    static boolean isCredit(int stream, int length) {
        return isControl(stream) && length == CREDIT_LENGTH;
    }

    /**
     * Writes a credit's payload at a claimed index.
     *
     * @param b the buffer (little endian)
     * @param at the payload's index
     * @param bytes the bytes credited back
     */
    static void putCredit(ByteBuffer b, int at, int bytes) {
        b.putInt(at + CREDIT_BYTES_OFFSET, bytes);
        b.putInt(at + CREDIT_MARK_OFFSET, CREDIT_MARK);
    }

    /**
     * @param b a received credit's buffer
     * @param at its payload's index
     * @return the bytes it credits back
     */
    static int creditBytes(ByteBuffer b, int at) {
        return b.getInt(at + CREDIT_BYTES_OFFSET);
    }

    /**
     * @param b a received credit's buffer
     * @param at its payload's index
     * @return its mark ({@link #CREDIT_MARK} unless it is corrupt)
     */
    static int creditMark(ByteBuffer b, int at) {
        return b.getInt(at + CREDIT_MARK_OFFSET);
    }

    /**
     * Writes an end-of-stream's payload at a claimed index.
     *
     * @param b the buffer (little endian)
     * @param at the payload's index
     * @param worker the sending worker's global index
     */
    static void putEndOfStream(ByteBuffer b, int at, int worker) {
        b.putInt(at + EOS_WORKER_OFFSET, worker);
    }

    /**
     * @param b a received end-of-stream's buffer
     * @param at its payload's index
     * @param length its payload length
     * @return the sending worker, or -1 if the length is not {@link #EOS_LENGTH}
     */
    static int endOfStreamWorker(ByteBuffer b, int at, int length) {
        return length == EOS_LENGTH ? b.getInt(at + EOS_WORKER_OFFSET) : -1;
    }

    /**
     * Checks a received credit against what its receiver was sent; null when valid.
     *
     * @param bytes the bytes it credits back
     * @param mark its mark
     * @param owing the bytes of that exchange the receiver had not credited back
     * @return null or what is wrong, as {@code name=value}
     */
    static String validateCredit(int bytes, int mark, long owing) {
        if (mark != CREDIT_MARK) {
            return "mark=0x" + Integer.toHexString(mark) + " (expected 0x" + Integer.toHexString(CREDIT_MARK) + ")";
        }
        if (bytes <= 0 || bytes > owing) {
            return "bytes=" + bytes + " outside [1, " + owing + "] (the uncredited bytes)";
        }
        return null;
    }
}
