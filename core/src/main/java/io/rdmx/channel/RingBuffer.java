package io.rdmx.channel;

import static io.rdmx.channel.RecordDescriptor.HEADER_LENGTH;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A circular buffer of records for one writer and one reader at a time, without locks (off-heap memory).
 *
 * <p>Positions are 64-bit byte counters that only grow; the index of a position is {@code position & mask}.
 * The writer owns {@code head} (the end of committed records) and publishes it with a <b>release store</b>; the
 * reader owns {@code tail} (the end of consumed records) and publishes it with a release store; each side
 * reads the other's with an <b>acquire load</b>. Claim, then publish: {@link #tryClaim} reserves space and writes
 * the header, the caller writes the payload in place (zero copy), {@link #commit()} publishes it.
 *
 * <p>There is no trailer in the buffer's memory: positions live in the two ends' objects and travel between
 * nodes in notifications ({@link NotificationDescriptor}), so the shared memory holds records only.
 *
 * <p>In a channel the two ends of one ring live on different nodes: the sender's copy has a local writer whose
 * tail is moved by credits from the peer ({@link #tailRelease}); the receiver's copy has a local reader whose
 * head is moved by data notifications ({@link #headRelease}). Same class, same ordering rules.
 */
public final class RingBuffer {
    /** {@link #tryClaim} result: not enough free space now. */
    public static final int INSUFFICIENT_SPACE = -1;

    private static final VarHandle HEAD;
    private static final VarHandle TAIL;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            HEAD = l.findVarHandle(RingBuffer.class, "head", long.class);
            TAIL = l.findVarHandle(RingBuffer.class, "tail", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Receives records read from a ring. */
    @FunctionalInterface
    public interface Handler {
        /**
         * One record; its bytes are valid only during the call.
         *
         * @param streamId the record's stream
         * @param buffer the ring's memory
         * @param offset where the payload starts in {@code buffer}
         * @param length payload bytes
         */
        void onRecord(int streamId, ByteBuffer buffer, int offset, int length);

        /**
         * The writer's end of stream ({@link RecordDescriptor#TYPE_END}): it committed nothing after it. Counted
         * as one record by {@link #read}. The default ignores it.
         */
        default void onEndOfStream() {
        }
    }

    private final ByteBuffer buffer;
    private final int capacity;
    private final int mask;
    private final int maxPayload;
    @SuppressWarnings("unused")
    private volatile long head;
    @SuppressWarnings("unused")
    private volatile long tail;
    /** Writer: the head it last committed (its own copy, read without a fence; {@code head} publishes it). */
    private long position;
    private long claimedHead = -1;
    private int claimedLength;
    private long tailCache;

    /**
     * @param buffer the memory; its remaining bytes (a power of two, at least 64) are the capacity
     * @param maxPayload the largest payload accepted by {@link #tryClaim}
     */
    public RingBuffer(ByteBuffer buffer, int maxPayload) {
        this.buffer = buffer.slice().order(ByteOrder.LITTLE_ENDIAN);
        this.capacity = this.buffer.capacity();
        if (capacity < 64 || Integer.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("ring capacity=" + capacity + " must be a power of two >= 64");
        }
        if (maxPayload < 0 || RecordDescriptor.recordLength(maxPayload) * 2L > capacity) {
            throw new IllegalArgumentException("maxPayload=" + maxPayload + " too large for capacity=" + capacity);
        }
        this.mask = capacity - 1;
        this.maxPayload = maxPayload;
    }

    /** @return the capacity in bytes */
    public int capacity() {
        return capacity;
    }

    /** @return the largest payload */
    public int maxPayload() {
        return maxPayload;
    }

    /** @return the memory (little endian); payload indexes from {@link #tryClaim} refer to it */
    public ByteBuffer buffer() {
        return buffer;
    }

    /** @return the head, acquire load */
    public long headAcquire() {
        return (long) HEAD.getAcquire(this);
    }

    /**
     * Publishes a new head (writer side, or a data notification on the receiving side).
     *
     * @param position the new head
     */
    public void headRelease(long position) {
        this.position = position;
        HEAD.setRelease(this, position);
    }

    /** @return the head the writer last committed (the writer thread only; no fence) */
    public long position() {
        return position;
    }

    /** @return the tail, acquire load */
    public long tailAcquire() {
        return (long) TAIL.getAcquire(this);
    }

    /**
     * Publishes a new tail (reader side, or a credit on the sending side).
     *
     * @param position the new tail
     */
    public void tailRelease(long position) {
        TAIL.setRelease(this, position);
    }

    /**
     * Writer: reserves a record and writes its header. At most one claim is open at a time.
     *
     * @param streamId the stream (0..65535)
     * @param length payload bytes (0..{@link #maxPayload()})
     * @return the index in {@link #buffer()} where the payload goes, or {@link #INSUFFICIENT_SPACE}
     * @throws IllegalArgumentException for a bad stream id or length
     * @throws IllegalStateException if a claim is already open
     */
    public int tryClaim(int streamId, int length) {
        if (length < 0 || length > maxPayload || streamId < 0 || streamId > RecordDescriptor.MAX_STREAM_ID
            || claimedHead >= 0) {
            throw badClaim(streamId, length);
        }
        long h = position;
        int need = RecordDescriptor.recordLength(length);
        int index = (int) (h & mask);
        int toEnd = capacity - index;
        int total = need > toEnd ? toEnd + need : need;
        if (total > capacity - (h - tailCache)) {
            tailCache = tailAcquire();
            if (total > capacity - (h - tailCache)) {
                return INSUFFICIENT_SPACE;
            }
        }
        if (need > toEnd) {
            buffer.putLong(index, header(toEnd - HEADER_LENGTH, 0, RecordDescriptor.TYPE_PADDING));
            index = 0;
        }
        // the whole header in one store (length, stream id, type, reserved): one bounds check, not three
        buffer.putLong(index, header(length, streamId, RecordDescriptor.TYPE_DATA));
        claimedHead = h + total;
        claimedLength = length;
        return index + HEADER_LENGTH;
    }

    /** @return the 8 header bytes as one little-endian word ({@link RecordDescriptor}'s layout) */
    private static long header(int length, int streamId, int type) {
        return (length & 0xFFFF_FFFFL) | (long) streamId << (8 * RecordDescriptor.STREAM_OFFSET)
            | (long) type << (8 * RecordDescriptor.TYPE_OFFSET);
    }

    private RuntimeException badClaim(int streamId, int length) {
        if (length < 0 || length > maxPayload) {
            return new IllegalArgumentException("record length=" + length + " outside [0, maxPayload=" + maxPayload
                + "]");
        }
        if (streamId < 0 || streamId > RecordDescriptor.MAX_STREAM_ID) {
            return new IllegalArgumentException("streamId=" + streamId + " outside [0, 65535]");
        }
        return new IllegalStateException("a claim is already open; commit it first");
    }

    /**
     * Writer: publishes the open claim (release store of the head).
     *
     * @return the committed payload length
     */
    public int commit() {
        if (claimedHead < 0) {
            throw new IllegalStateException("no open claim to commit");
        }
        position = claimedHead;
        HEAD.setRelease(this, claimedHead);
        claimedHead = -1;
        return claimedLength;
    }

    /** Writer: gives the open claim up (nothing is published). */
    public void abort() {
        claimedHead = -1;
    }

    /**
     * Writer: copies a record in (claim, copy, commit).
     *
     * @param streamId the stream
     * @param src the payload (its remaining bytes; its position is not changed)
     * @return true if written, false if there is not enough space
     */
    public boolean write(int streamId, ByteBuffer src) {
        int at = tryClaim(streamId, src.remaining());
        if (at < 0) {
            return false;
        }
        buffer.put(at, src, src.position(), src.remaining());
        commit();
        return true;
    }

    /**
     * Reader: hands over up to {@code limit} records published so far, then publishes the new tail. An
     * end-of-stream marker goes to {@link Handler#onEndOfStream()} and counts as one record (against the limit
     * and in the result), so a reader that gets only the end still sees that something arrived.
     *
     * @param handler receives each record
     * @param limit the most records to read
     * @return records read, end-of-stream markers included
     * @throws IllegalStateException if a corrupt header is found (names the position): an unknown type, or a
     *                               length that runs past the end of the buffer or past the published head
     */
    public int read(Handler handler, int limit) {
        long t = (long) TAIL.getOpaque(this);
        long h = headAcquire();
        int n = 0;
        try {
            while (t < h && n < limit) {
                int index = (int) (t & mask);
                // the whole header in one load; a data record that fits is handed over at once, anything else
                // (padding, end of stream, a corrupt header) takes the checks below
                long header = buffer.getLong(index);
                int length = (int) header;
                int type = (int) (header >>> (8 * RecordDescriptor.TYPE_OFFSET)) & 0xFF;
                if (type == RecordDescriptor.TYPE_DATA && length >= 0
                    && length <= capacity - index - HEADER_LENGTH) {
                    int size = RecordDescriptor.recordLength(length);
                    if (size > h - t) {
                        throw pastHead(t, length, h);
                    }
                    handler.onRecord((int) (header >>> (8 * RecordDescriptor.STREAM_OFFSET)) & 0xFFFF, buffer,
                        index + HEADER_LENGTH, length);
                    n++;
                    t += size;
                    continue;
                }
                String bad = RecordDescriptor.validate(type, length, capacity - index);
                if (bad != null) {
                    throw new IllegalStateException("corrupt ring at position=" + t + ": " + bad);
                }
                int size = RecordDescriptor.recordLength(length);
                if (size > h - t) {
                    throw pastHead(t, length, h);
                }
                if (type == RecordDescriptor.TYPE_END) {
                    handler.onEndOfStream();
                    n++;
                }
                t += size;
            }
        } finally {
            TAIL.setRelease(this, t);
        }
        return n;
    }

    private static IllegalStateException pastHead(long t, int length, long h) {
        return new IllegalStateException("corrupt ring at position=" + t + ": record length=" + length
            + " runs past the published head=" + h);
    }

    /** @return bytes published and not yet consumed (an estimate when called by a third thread) */
    public long size() {
        return headAcquire() - tailAcquire();
    }
}
