package io.rdmx.channel;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The shared words of one ring of a mapped channel, and the hand-offs on them. When both nodes can map each
 * other's memory ({@code RemoteMapping.mapRemote}), the writer claims and commits records directly
 * in the reader's ring (in the reader's pair region, mapped by the writer), and positions and sleep flags live
 * in that region too, each on its own cache line pair (128 bytes, so adjacent-line prefetching does not make
 * the two sides share one):
 *
 * <pre>
 *  ring header (one per ring, {@link PairLayout#ringHeaderOffset}), 384 bytes:
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |  published head (64): the writer's release store              |    0
 *  +---------------------------------------------------------------+
 *  |  ... padding to 128                                           |
 *  +---------------------------------------------------------------+
 *  |  published credit (64): the reader's consumed position,       |  128
 *  |  release store once readNotifyThreshold bytes were consumed   |
 *  +---------------------------------------------------------------+
 *  |  writer parked (64): 1 while the writer sleeps for space      |  256
 *  +---------------------------------------------------------------+
 *
 *  reader header (one per receiving worker, {@link PairLayout#readerHeaderOffset}), 128 bytes:
 *  +---------------------------------------------------------------+
 *  |  reader parked (64): 1 while the reader sleeps for data       |    0
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * <p>Publication: the writer publishes its head with a <b>release store</b> (at the batching threshold, on
 * flush or after the flush interval, exactly where the WRITE path posts a WRITE); the reader reads it with an
 * <b>acquire load</b>, so the records before it are visible. The published credit IS the credit: no credit
 * message. Wake-ups (the Dekker pattern): a side about to sleep stores its parked flag (volatile), issues a full
 * fence, and checks the other side's position again; the other side stores its position, issues a full fence,
 * and takes the flag back (compare-and-set to 0). At least one of them sees the other's store, so either the
 * sleeper does not sleep or the publisher wakes it exactly once: no lost wake-up, and no syscall while both sides
 * are awake. Proved by the jcstress tests {@code SharedRing*Test}.
 *
 * <p>The flag's value says how to wake the sleeper: {@link #PARKED_FUTEX} — it sleeps on this very word
 * ({@link io.rdmx.transport.internal.Futex}, Java 22+ on Linux), so the publisher makes one {@code FUTEX_WAKE}
 * system call on its own mapping of it, and no other thread of either process takes part;
 * {@link #PARKED_BELL} with a slot in the high 32 bits ({@link #bellValue}) — a sleeper without futexes (Java 17)
 * that sleeps in its own selector on a bell ({@link io.rdmx.transport.Bell}): the publisher writes a byte to
 * that slot's bell ({@code Bells.ringBell}), one system call, read by the sleeper itself;
 * {@link #PARKED_DOORBELL} — ring its doorbell, a notification SEND that the sleeper's engine turns into a local
 * wake-up (a publisher without futexes does that for a futex sleeper too: the sleeper's own engine wakes it; a
 * publisher that cannot ring a bell does it for a bell sleeper).
 *
 * <p>Threads: the writer side methods are called by the thread that publishes (the writer, or the engine's
 * network thread for a time-bound flush, one at a time); the reader side methods by the reader thread.
 */
public final class SharedRing {
    /** Distance between words written by different sides. */
    public static final int LINE = 128;
    /** Ring header: offset of the published head. */
    public static final int HEAD_OFFSET = 0;
    /** Ring header: offset of the published credit. */
    public static final int CREDIT_OFFSET = LINE;
    /** Ring header: offset of the writer-parked flag. */
    public static final int WRITER_PARKED_OFFSET = 2 * LINE;
    /** Length of a ring header. */
    public static final int RING_HEADER_LENGTH = 3 * LINE;
    /** Reader header: offset of the reader-parked flag. */
    public static final int READER_PARKED_OFFSET = 0;
    /** Length of a reader header. */
    public static final int READER_HEADER_LENGTH = LINE;

    /** Flag value: awake. */
    public static final int AWAKE = 0;
    /** Flag value: asleep, wake me with a doorbell (a notification SEND). */
    public static final int PARKED_DOORBELL = 1;
    /** Flag value: asleep on this word's futex, wake me with {@code FUTEX_WAKE} on it. */
    public static final int PARKED_FUTEX = 2;
    /** Flag value (low 32 bits): asleep on a bell, whose slot is in the high 32 bits ({@link #bellValue}). */
    public static final int PARKED_BELL = 3;

    private static final io.rdmx.transport.internal.Futex FUTEX = io.rdmx.transport.internal.Futex.get();
    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class,
        ByteOrder.LITTLE_ENDIAN);

    private final ByteBuffer memory;
    private final int head;
    private final int credit;
    private final int writerParked;
    private final int readerParked;
    private final long writerParkedAddress;
    private final long readerParkedAddress;

    /**
     * @param memory the pair region (direct memory; the receiver's own, or the sender's mapping of it)
     * @param ringHeader index of the ring's header
     * @param readerHeader index of the receiving worker's reader header
     * @throws IllegalArgumentException if a header is misaligned or outside the memory
     */
    public SharedRing(ByteBuffer memory, int ringHeader, int readerHeader) {
        this.memory = memory.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        String bad = check(memory, ringHeader, RING_HEADER_LENGTH);
        if (bad == null) {
            bad = check(memory, readerHeader, READER_HEADER_LENGTH);
        }
        if (bad != null) {
            throw new IllegalArgumentException(bad);
        }
        this.head = ringHeader + HEAD_OFFSET;
        this.credit = ringHeader + CREDIT_OFFSET;
        this.writerParked = ringHeader + WRITER_PARKED_OFFSET;
        this.readerParked = readerHeader + READER_PARKED_OFFSET;
        this.writerParkedAddress = FUTEX == null ? 0 : FUTEX.address(this.memory, writerParked);
        this.readerParkedAddress = FUTEX == null ? 0 : FUTEX.address(this.memory, readerParked);
    }

    /** @return the flag value a sleeper of this process leaves: {@link #PARKED_FUTEX} where it sleeps on futexes */
    public static int parkedValue() {
        return FUTEX != null ? PARKED_FUTEX : PARKED_DOORBELL;
    }

    /**
     * @param slot the sleeper's bell slot on the publisher's connection (0 or more)
     * @return the flag value of a sleeper on that bell
     */
    public static long bellValue(int slot) {
        return ((long) slot << 32) | PARKED_BELL;
    }

    /**
     * @param taken a flag value taken ({@link #publishHead}, {@link #publishCredit})
     * @return how to wake: {@link #AWAKE}, {@link #PARKED_DOORBELL}, {@link #PARKED_FUTEX} or {@link #PARKED_BELL}
     */
    public static int kind(long taken) {
        return (int) taken;
    }

    /**
     * @param taken a flag value of kind {@link #PARKED_BELL}
     * @return the bell slot in it
     */
    public static int bellSlot(long taken) {
        return (int) (taken >>> 32);
    }

    /** @return the address of the writer-parked word in this mapping (0 without futexes) */
    public long writerParkedAddress() {
        return writerParkedAddress;
    }

    /** @return the address of the reader-parked word in this mapping (0 without futexes) */
    public long readerParkedAddress() {
        return readerParkedAddress;
    }

    /**
     * Wakes the side that left a flag value (taken by {@link #publishHeadRelease} or {@link #publishCreditRelease})
     * if it sleeps on the word's futex and this process has futexes.
     *
     * @param taken the value taken
     * @param address the word ({@link #readerParkedAddress()} or {@link #writerParkedAddress()})
     * @return true if woken here; false if the caller must ring a doorbell (taken was not {@link #AWAKE})
     */
    public static boolean wakeByFutex(int taken, long address) {
        if (taken == PARKED_FUTEX && FUTEX != null) {
            FUTEX.wake(address);
            return true;
        }
        return taken == AWAKE;
    }

    private static String check(ByteBuffer memory, int at, int length) {
        if (!memory.isDirect()) {
            return "shared ring memory must be direct";
        }
        if (at < 0 || (at & 7) != 0 || at > memory.capacity() - length) {
            return "shared header index=" + at + " length=" + length + " misaligned or outside memory capacity="
                + memory.capacity();
        }
        return null;
    }

    // ---------------------------------------------------------------- writer side

    /**
     * Writer: publishes the head (release store), then, after a full fence, takes the reader-parked flag.
     *
     * @param position the new head
     * @return the flag taken: {@link #AWAKE}, or how to wake the reader that was parked (or about to), once
     */
    public int publishHeadRelease(long position) {
        return kind(publishHead(position));
    }

    /**
     * Writer: publishes the head (release store), then, after a full fence, takes the reader-parked flag.
     *
     * @param position the new head
     * @return the whole flag taken: {@link #AWAKE}, or how to wake the reader ({@link #kind}, {@link #bellSlot})
     */
    public long publishHead(long position) {
        LONGS.setRelease(memory, head, position);
        VarHandle.fullFence();
        return takeVolatile(readerParked);
    }

    /** @return the reader's published credit, acquire load */
    public long creditAcquire() {
        return (long) LONGS.getAcquire(memory, credit);
    }

    /**
     * Writer: says it sleeps for space (volatile store, then a full fence: the caller checks the credit again
     * after this and before it parks), or that it no longer does.
     *
     * @param parked {@link #PARKED_DOORBELL} or {@link #PARKED_FUTEX} before sleeping, {@link #AWAKE} after
     */
    public void writerParkedVolatile(int parked) {
        writerParkedVolatile((long) parked);
    }

    /**
     * Writer: as {@link #writerParkedVolatile(int)}, with a whole flag value ({@link #bellValue}).
     *
     * @param parked the flag value
     */
    public void writerParkedVolatile(long parked) {
        LONGS.setVolatile(memory, writerParked, parked);
        VarHandle.fullFence();
    }

    /** @return the writer-parked flag now, volatile load (diagnostics, tests) */
    public long writerParked() {
        return (long) LONGS.getVolatile(memory, writerParked);
    }

    /** @return the reader-parked flag now, volatile load (diagnostics, tests) */
    public long readerParked() {
        return (long) LONGS.getVolatile(memory, readerParked);
    }

    // ---------------------------------------------------------------- reader side

    /** @return the writer's published head, acquire load */
    public long headAcquire() {
        return (long) LONGS.getAcquire(memory, head);
    }

    /**
     * Reader: publishes the credit (release store), then, after a full fence, takes the writer-parked flag.
     *
     * @param position the consumed position
     * @return the flag taken: {@link #AWAKE}, or how to wake the writer that was parked (or about to), once
     */
    public int publishCreditRelease(long position) {
        return kind(publishCredit(position));
    }

    /**
     * Reader: publishes the credit (release store), then, after a full fence, takes the writer-parked flag.
     *
     * @param position the consumed position
     * @return the whole flag taken: {@link #AWAKE}, or how to wake the writer ({@link #kind}, {@link #bellSlot})
     */
    public long publishCredit(long position) {
        LONGS.setRelease(memory, credit, position);
        VarHandle.fullFence();
        return takeVolatile(writerParked);
    }

    /**
     * Reader: says it sleeps for data (volatile store, then a full fence: the caller checks every head again
     * after this and before it parks), or that it no longer does. One word serves every ring from one peer to
     * one worker.
     *
     * @param parked {@link #PARKED_DOORBELL} or {@link #PARKED_FUTEX} before sleeping, {@link #AWAKE} after
     */
    public void readerParkedVolatile(int parked) {
        readerParkedVolatile((long) parked);
    }

    /**
     * Reader: as {@link #readerParkedVolatile(int)}, with a whole flag value ({@link #bellValue}).
     *
     * @param parked the flag value
     */
    public void readerParkedVolatile(long parked) {
        LONGS.setVolatile(memory, readerParked, parked);
        VarHandle.fullFence();
    }

    private long takeVolatile(int flag) {
        long v = (long) LONGS.getVolatile(memory, flag);
        return v != 0L && LONGS.compareAndSet(memory, flag, v, 0L) ? v : AWAKE;
    }
}
