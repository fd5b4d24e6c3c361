package io.rdmx.bench.channel;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;

/**
 * The channel benchmark's bound for a stream of small records: the least work any ring of framed records can do
 * between two cores of this machine, measured in this process with two threads. It carries the same records as
 * the cases (an 8-byte header, {@code int length, int kind}, then the payload; the reader reads each header and
 * counts, as {@link ChannelPeer} does) over a ring of the cases' size, and leaves out everything a transport must
 * do beyond that: no bounds or state checks, no flow-control messages, no parking (both threads spin), the
 * payload stored with plain 8-byte stores where it is a multiple of 8 up to 64 bytes, and each side's position
 * published once per {@value #PUBLISH_EVERY} records (or per quarter of the ring, if that holds fewer, and when a side
 * would wait), not once per record.
 *
 * <p>At 32 B a record and its header are 40 bytes, so the reader reads every cache line the writer wrote: the
 * figure is then about the rate at which this machine moves cache lines from one core to the other, at the time
 * it is measured. On this virtual machine that rate changes with where the host runs its two virtual CPUs: the
 * same build gave 95M, 124M and 287M records/s on one day, and the cases' own figures move with it. It is a
 * baseline, not a transport: it loses no record only because both sides are this class.
 */
final class BareRing {
    private static final VarHandle LONG = MethodHandles.byteBufferViewVarHandle(long[].class,
        ByteOrder.nativeOrder());
    /** Records between publications of a position (fewer when a quarter of the ring holds fewer). */
    static final int PUBLISH_EVERY = 64;
    private static final int HEADER = 8;
    /** Byte offsets of the two positions in {@link #positions}, on separate cache lines. */
    private static final int HEAD = 0;
    private static final int TAIL = 128;

    private final ByteBuffer ring;
    private final ByteBuffer positions = ByteBuffer.allocateDirect(256).order(ByteOrder.nativeOrder());
    private final ByteBuffer payload = ByteBuffer.allocateDirect(64 << 10);
    private final int capacity;
    private final boolean verify;
    private volatile boolean stop;
    /** Set by a reader that failed, so that a writer waiting for space gives up. */
    private volatile Throwable readerFailure;

    /** @param capacity ring bytes, at least two records of the largest size measured */
    BareRing(int capacity) {
        this(capacity, false);
    }

    /**
     * @param capacity ring bytes, at least two records of the largest size measured
     * @param verify the writer numbers each record in its payload's first 8 bytes and the reader checks the
     *               number (a test's mode: it reads a line more per record of 64 bytes or more)
     */
    BareRing(int capacity, boolean verify) {
        this.verify = verify;
        this.capacity = capacity;
        this.ring = ByteBuffer.allocateDirect(capacity).order(ByteOrder.nativeOrder());
    }

    /** Messages and seconds of one measured stream. */
    record Result(long records, double seconds) {
    }

    /**
     * Streams records of {@code size} bytes for about {@code millis}; the writer stops on the clock, the reader
     * when it has read everything.
     *
     * @throws IllegalStateException if the reader did not read every record the writer wrote, or read a header
     *     the writer did not write there
     */
    Result stream(int size, long millis) throws InterruptedException {
        return stream(size, millis, Long.MAX_VALUE);
    }

    /**
     * Streams exactly {@code records} records of {@code size} bytes (a test's form: what it checks does not depend on
     * how fast this machine is), or fewer if {@code millis} run out first.
     *
     * @throws IllegalStateException as {@link #stream(int, long)}
     */
    Result stream(int size, long millis, long records) throws InterruptedException {
        LONG.setRelease(positions, HEAD, 0L);
        LONG.setRelease(positions, TAIL, 0L);
        stop = false;
        readerFailure = null;
        long[] read = new long[1];
        // positions are published every PUBLISH_EVERY records, or as often as a quarter of the ring holds
        int every = Math.max(1, Math.min(PUBLISH_EVERY, capacity / (HEADER + size) / 4));
        Thread reader = new Thread(() -> {
            try {
                read[0] = read(every);
            } catch (RuntimeException | Error e) {
                readerFailure = e;
            }
        }, "bare-ring-reader");
        reader.setDaemon(true);
        reader.start();
        long start = System.nanoTime();
        long written;
        try {
            written = write(size, every, start + TimeUnit.MILLISECONDS.toNanos(millis), records);
        } finally {
            stop = true;
            reader.join();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        if (readerFailure != null || read[0] != written) {
            throw new IllegalStateException("bare ring: wrote " + written + " records of " + size + " B, read "
                + read[0], readerFailure);
        }
        return new Result(written, seconds);
    }

    private long write(int size, int every, long end, long records) {
        int record = HEADER + size;
        int limit = capacity - record;
        long header = ((long) Link.DATA << 32) | size;
        boolean longs = size % 8 == 0 && size <= 64;
        boolean number = verify && size >= 8;
        long head = 0;
        long tailSeen = 0;
        long written = 0;
        int at = 0;
        int since = 0;
        while (written < records && System.nanoTime() < end) {
            for (int k = 0; k < 256 && written < records; k++) {
                while (head + record - tailSeen > capacity) {
                    LONG.setRelease(positions, HEAD, head);
                    since = 0;
                    tailSeen = (long) LONG.getAcquire(positions, TAIL);
                    if (readerFailure != null) {
                        return written;
                    }
                    Thread.onSpinWait();
                }
                ring.putLong(at, header);
                if (longs) {
                    for (int i = 0; i < size; i += 8) {
                        ring.putLong(at + HEADER + i, written);
                    }
                } else {
                    ring.put(at + HEADER, payload, 0, size);
                }
                if (number) {
                    ring.putLong(at + HEADER, written);
                }
                head += record;
                at += record;
                if (at > limit) {
                    // the next record would not fit before the end: it starts at 0, and the reader skips the same
                    head += capacity - at;
                    at = 0;
                }
                written++;
                if (++since == every) {
                    LONG.setRelease(positions, HEAD, head);
                    since = 0;
                }
            }
        }
        LONG.setRelease(positions, HEAD, head);
        return written;
    }

    private long read(int every) {
        long tail = 0;
        long head = 0;
        long count = 0;
        int at = 0;
        int since = 0;
        while (true) {
            if (tail == head) {
                if (since > 0) {
                    LONG.setRelease(positions, TAIL, tail);
                    since = 0;
                }
                boolean last = stop;
                head = (long) LONG.getAcquire(positions, HEAD);
                if (tail == head) {
                    if (last) {
                        return count;
                    }
                    Thread.onSpinWait();
                    continue;
                }
            }
            long header = ring.getLong(at);
            int record = HEADER + (int) header;
            if ((int) (header >>> 32) != Link.DATA || record > capacity) {
                throw new IllegalStateException("bare ring: bad header " + Long.toHexString(header) + " at " + at);
            }
            if (verify && record >= HEADER + 8 && ring.getLong(at + HEADER) != count) {
                throw new IllegalStateException("bare ring: record " + ring.getLong(at + HEADER) + " at " + at
                    + " where record " + count + " was due");
            }
            count++;
            tail += record;
            at += record;
            if (at > capacity - record) {
                tail += capacity - at;
                at = 0;
            }
            if (++since == every) {
                LONG.setRelease(positions, TAIL, tail);
                since = 0;
            }
        }
    }
}
