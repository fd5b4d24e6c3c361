package io.rdmx.transport.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.locks.LockSupport;

/**
 * How a thread that waits for something sleeps, and how others wake it: the one waiter mechanism of the channel
 * layer's readers and writers ({@code io.rdmx.channel.ChannelReader}, {@code ChannelWriter}) and of the shuffle's
 * sockets baseline. One sleeping thread at a time; any thread wakes.
 *
 * <p>With {@link Futex futexes} (Java 22+ on Linux) the thread sleeps on a word of its own, and on the shared
 * parked words of its mapped peers ({@code io.rdmx.channel.SharedRing}) at once: a thread of this process wakes it with one
 * {@code FUTEX_WAKE} on its word, a writer or reader in another process with one on the shared word. Without
 * futexes it parks ({@link LockSupport}) and only threads of this process wake it; peers in other processes ring
 * doorbells, which the engine's network thread turns into a {@link #wake()}.
 *
 * <p>No lost wake-up (the Dekker pattern, as in {@code SharedRing}): the sleeper {@link #arm arms} (a volatile
 * store, a full fence), checks its condition once more, and sleeps only if the word is still armed; a waker
 * changes the condition, issues a full fence, and takes the word back, waking the sleeper if it was armed.
 */
public final class Sleeper {
    private static final Futex FUTEX = Futex.get();
    private static final VarHandle INTS = MethodHandles.byteBufferViewVarHandle(int[].class,
        ByteOrder.nativeOrder());
    private static final int ARMED = 1;

    private final Object blocker;
    private final ByteBuffer word;
    private final long wordAddress;
    private Futex.WaitSet set;
    private int words;
    private volatile Thread waiter;

    /** @param blocker what a thread dump names as the parked thread's blocker (without futexes) */
    public Sleeper(Object blocker) {
        this.blocker = blocker;
        if (FUTEX != null) {
            this.word = ByteBuffer.allocateDirect(64);
            this.wordAddress = FUTEX.address(word, 0);
            this.set = FUTEX.newWaitSet(1);
            this.set.set(0, wordAddress, ARMED);
            this.words = 1;
        } else {
            this.word = null;
            this.wordAddress = 0;
        }
    }

    /** @return true if threads sleep on futexes in this process (shared words can wake them) */
    public static boolean futexes() {
        return FUTEX != null;
    }

    /**
     * Sleeper thread: the shared words it sleeps on besides its own, each expected to hold {@code expected} while
     * it sleeps (a publisher that changes one and wakes it ends the sleep). Allocates: call when the words change,
     * not per sleep. Ignored without futexes.
     *
     * @param addresses the words' addresses in this process ({@link Futex#address})
     * @param expected the value they hold while the sleeper may sleep
     */
    public void sharedWords(long[] addresses, int expected) {
        if (FUTEX == null) {
            return;
        }
        int n = 1 + addresses.length;
        if (set.capacity() < n) {
            set = FUTEX.newWaitSet(Math.max(n, 2 * set.capacity()));
        }
        set.set(0, wordAddress, ARMED);
        for (int i = 0; i < addresses.length; i++) {
            set.set(i + 1, addresses[i], expected);
        }
        words = n;
    }

    /** Sleeper thread: from now on a {@link #wake()} ends the next {@link #sleep}; a full fence follows. */
    public void arm() {
        if (FUTEX != null) {
            INTS.setVolatile(word, 0, ARMED);
        } else {
            waiter = Thread.currentThread();
        }
        VarHandle.fullFence();
    }

    /**
     * Sleeper thread, armed: sleeps until woken, the timeout, or (without futexes) an interrupt; may return
     * early. With futexes at most {@link Futex#MAX_SLICE_NANOS}, so the caller notices an interrupt that late.
     *
     * @param nanos the longest sleep
     */
    public void sleep(long nanos) {
        if (FUTEX != null) {
            set.await(words, Math.min(nanos, Futex.MAX_SLICE_NANOS));
        } else {
            LockSupport.parkNanos(blocker, nanos);
        }
    }

    /** Sleeper thread: done sleeping. */
    public void disarm() {
        if (FUTEX != null) {
            INTS.setOpaque(word, 0, 0);
        } else {
            waiter = null;
        }
    }

    /** Any thread, after it changed what the sleeper waits for: wakes it if it sleeps or is about to. */
    public void wake() {
        VarHandle.fullFence();
        if (FUTEX != null) {
            if ((int) INTS.getVolatile(word, 0) == ARMED && INTS.compareAndSet(word, 0, ARMED, 0)) {
                FUTEX.wake(wordAddress);
            }
        } else {
            Thread w = waiter;
            if (w != null) {
                LockSupport.unpark(w);
            }
        }
    }
}
