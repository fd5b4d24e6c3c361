package io.rdmx.shuffle;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One worker's inbox: received records set aside because their consumer could not take them yet (a handler
 * refused, delivery was paused, or nobody consumes the exchange yet), in arrival order, at most a configured
 * number of bytes ({@link ShuffleConfig#inboxBytes()}). Each record, 4-byte aligned:
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |     stream id (32): the record's, or -1 once delivered        |  0
 *  +---------------------------------------------------------------+
 *  |     payload length (32)                                       |  4
 *  +---------------------------------------------------------------+
 *  |     payload bytes delivered already (32)                      |  8
 *  +---------------------------------------------------------------+
 *  |     sending worker (32)                                       | 12
 *  +---------------------------------------------------------------+
 *  |     charge (32): what its sender counted against its window;  | 16
 *  |     negative once credited back (when set aside)              |
 *  +---------------------------------------------------------------+
 *  |     payload ... (padded to a multiple of 4)                   | 20
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * Up to half the inbox is credited back when set aside rather than when delivered ({@link #stage}). Memory of the
 * worker's thread only.
 */
final class Inbox {
    /** A record's header; the payload starts here. */
    static final int HEADER = 20;
    /** The stream id of a delivered record (a gap until a compaction). */
    static final int DELIVERED = -1;
    private static final int LENGTH_OFFSET = 4;
    private static final int TAKEN_OFFSET = 8;
    private static final int SOURCE_OFFSET = 12;
    private static final int CHARGE_OFFSET = 16;

    /** Delivers (part of) a record set aside. */
    @FunctionalInterface
    interface Decoder {
        /**
         * @param stream the record's stream id
         * @param buf the inbox
         * @param off the first byte not delivered yet
         * @param len the bytes not delivered yet
         * @return bytes taken
         */
        int deliver(int stream, ByteBuffer buf, int off, int len);
    }

    private final int global;
    private final Consumers consumers;
    private final ExchangeWindow window;
    private final ByteBuffer buf;
    private final int capacity;
    /** The largest record a peer may send, with its header. */
    private final int maxRecord;
    private int head;
    private int tail;
    private int records;
    /** Bytes of records not delivered yet (the gaps delivered records leave are not counted). */
    private int live;
    /** Counts {@link #deliver} passes ({@link Consumers.Consumed#refusedPass}). */
    private int pass;
    /**
     * Bytes credited back when they were set aside, not when delivered: at most half the inbox. Records set aside
     * while delivery pauses (a blocking send waits, a handler runs) or behind a refusal go back to their senders
     * at once while this half has room, so two workers blocked sending to each other go on as long as their
     * inboxes have room; past it, the windows bound what each exchange holds in the other half.
     */
    private int eagerBytes;

    /**
     * @param global the worker's global index, for messages
     * @param capacity bytes
     * @param largestPayload the largest record payload a peer may send
     * @param consumers the worker's consumers (their count of records set aside)
     * @param window the worker's windows (records set aside or dropped are credited there)
     */
    Inbox(int global, int capacity, int largestPayload, Consumers consumers, ExchangeWindow window) {
        this.global = global;
        this.capacity = capacity;
        this.consumers = consumers;
        this.window = window;
        // direct, like the rings (mapped or allocateDirect): deliver() then reads records of one ByteBuffer class
        // whether they come from a ring or the inbox. A heap inbox made its getInt calls bimorphic: the first
        // record delivered from the inbox in a pass hit a class-check trap in the compiled deliver(), and C2
        // recompiled it (~120 ms of compiler time on this 2-core host) in every timed pass of the P=4 W=2 bench
        this.buf = ByteBuffer.allocateDirect(capacity).order(ByteOrder.LITTLE_ENDIAN);
        this.maxRecord = HEADER + align4(largestPayload);
    }

    /**
     * @param len a record's payload length
     * @return what it counts against its exchange's window: the inbox space it takes if set aside
     */
    static int charge(int len) {
        return HEADER + align4(len);
    }

    /**
     * @param largestPayload the largest payload a peer may send
     * @return the largest record in an inbox
     */
    static int maxRecord(int largestPayload) {
        return HEADER + align4(largestPayload);
    }

    private static int align4(int n) {
        return (n + 3) & ~3;
    }

    /** @return the size in bytes */
    int capacity() {
        return capacity;
    }

    /** @return bytes of records not delivered yet */
    int live() {
        return live;
    }

    /** @return records not delivered yet */
    int records() {
        return records;
    }

    /** @return records the inbox can surely take now (each at most the largest record), at most 256 */
    int room() {
        if (records == 0) {
            head = 0;
            tail = 0;
        }
        // live bytes, not the span from head to tail: records delivered behind a refused one leave gaps that a
        // compaction (in stage) reclaims; counting them would stop every read, credits included
        int free = capacity - live;
        return Math.min(256, free / maxRecord);
    }

    private int next(int p) {
        return p + HEADER + align4(buf.getInt(p + LENGTH_OFFSET));
    }

    /**
     * @param id an exchange id
     * @return records of it waiting
     */
    int count(int id) {
        int n = 0;
        for (int p = head; p < tail; p = next(p)) {
            int s = buf.getInt(p);
            if (s != DELIVERED && ShuffleFrameDescriptor.exchange(s) == id) {
                n++;
            }
        }
        return n;
    }

    /**
     * Sets a record (or what is left of it) aside; credits it back at once while the eager half has room.
     *
     * @param source the sending worker
     * @param stream the stream id
     * @param from the record's buffer
     * @param off the first byte to keep
     * @param len bytes to keep
     * @param charge what the whole record was charged ({@link #charge})
     * @throws IllegalStateException if it does not fit (the reads are bounded by {@link #room})
     */
    void stage(int source, int stream, ByteBuffer from, int off, int len, int charge) {
        int need = HEADER + align4(len);
        if (tail + need > capacity) {
            compact();
            if (tail + need > capacity) {
                throw new IllegalStateException("worker " + global + ": inbox overflow (record length=" + len
                    + ", " + live + " of " + capacity + " bytes used)");
            }
        }
        buf.putInt(tail, stream);
        buf.putInt(tail + LENGTH_OFFSET, len);
        buf.putInt(tail + TAKEN_OFFSET, 0);
        buf.putInt(tail + SOURCE_OFFSET, source);
        int id = ShuffleFrameDescriptor.exchange(stream);
        if (eagerBytes + charge <= capacity / 2) {
            eagerBytes += charge;
            window.took(source, id, charge);
            buf.putInt(tail + CHARGE_OFFSET, -charge); // credited already
        } else {
            buf.putInt(tail + CHARGE_OFFSET, charge);
        }
        buf.put(tail + HEADER, from, off, len);
        tail += need;
        live += need;
        records++;
        Consumers.Consumed c = consumers.get(id);
        if (c != null) {
            c.staged++;
        }
    }

    /** Moves the records not yet delivered to the start of the inbox. */
    private void compact() {
        int to = 0;
        for (int p = head; p < tail; ) {
            int size = HEADER + align4(buf.getInt(p + LENGTH_OFFSET));
            if (buf.getInt(p) != DELIVERED) {
                if (p != to) {
                    buf.put(to, buf, p, size); // overlapping ranges copy as if through a temporary
                }
                to += size;
            }
            p += size;
        }
        head = 0;
        tail = to;
    }

    /** The record at {@code p}, of exchange {@code id}, is done with: credits it, unless that was done. */
    private void untake(int p, int id) {
        int charge = buf.getInt(p + CHARGE_OFFSET);
        if (charge < 0) {
            eagerBytes += charge;
        } else {
            window.took(buf.getInt(p + SOURCE_OFFSET), id, charge);
        }
    }

    /**
     * Drops the records of an abandoned exchange: their senders get the space back.
     *
     * @param id the exchange
     */
    void drop(int id) {
        for (int p = head; p < tail; ) {
            int stream = buf.getInt(p);
            int size = HEADER + align4(buf.getInt(p + LENGTH_OFFSET));
            if (stream != DELIVERED && ShuffleFrameDescriptor.exchange(stream) == id) {
                buf.putInt(p, DELIVERED);
                records--;
                live -= size;
                untake(p, id);
            }
            p += size;
        }
        resetIfEmpty();
    }

    /** Starts again at the beginning once no record waits. */
    void resetIfEmpty() {
        if (records == 0) {
            head = 0;
            tail = 0;
        }
    }

    /**
     * Delivers the inbox, each exchange's records in arrival order: records nobody consumes yet are skipped, and
     * once a handler refuses, the later records of its exchange wait while those of the others go on (an exchange
     * whose consumer waits on another one cannot hold that one's rows back). Records of a released exchange are
     * dropped whole by the decoder.
     *
     * @param decoder delivers a record to its consumer
     * @return records delivered from (in part or whole)
     */
    int deliver(Decoder decoder) {
        int n = 0;
        int now = ++pass;
        for (int p = head; p < tail; ) {
            int stream = buf.getInt(p);
            int len = buf.getInt(p + LENGTH_OFFSET);
            int size = HEADER + align4(len);
            if (stream != DELIVERED) {
                int id = ShuffleFrameDescriptor.exchange(stream);
                Consumers.Consumed c = consumers.get(id);
                if (c == null && !consumers.released(id) || c != null && c.refusedPass == now) {
                    p += size; // nobody consumes it yet, or its handler refused in this pass: later records go first
                    continue;
                }
                int done = buf.getInt(p + TAKEN_OFFSET);
                int k = decoder.deliver(stream, buf, p + HEADER + done, len - done);
                if (k > 0) {
                    n++;
                }
                if (done + k < len) {
                    buf.putInt(p + TAKEN_OFFSET, done + k);
                    c.refusedPass = now; // c is there: a released exchange's records are dropped whole
                    p += size;
                    continue;
                }
                buf.putInt(p, DELIVERED);
                records--;
                live -= size;
                if (c != null) {
                    c.staged--;
                }
                untake(p, id);
            }
            if (p == head) {
                head = p + size;
            }
            p += size;
        }
        resetIfEmpty();
        return n;
    }
}
