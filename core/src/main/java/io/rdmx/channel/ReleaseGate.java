package io.rdmx.channel;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * When a failed peer's memory may be released: a count of the holds on it, and one release, run by whichever
 * thread drops the last hold after the peer was retired. Lock-free; one word.
 *
 * <p>Holds: the live peer itself (one, from the start, dropped by {@link #retire}); one per thread that is handling
 * a completion of the peer ({@link #enter} / {@link #leave}: the connection's I/O thread or the network thread);
 * one per reader that may still hold the peer's incoming rings ({@link #hold}, taken when the loss is announced to
 * the readers, each dropped by its reader with {@link #leave} once it reported the loss and forgot the rings).
 * {@link #hold} is only called by a thread that holds a hold itself, so the count never comes back from zero.
 *
 * <p>The release runs exactly once, after {@link #retire} and once no hold is left, and no {@link #enter} succeeds
 * after it started ({@code io.rdmx.channel.ReleaseGateTest} in the jcstress module proves both).
 *
 * <p>The word: bit 31 retired, bit 30 released, the low 30 bits the holds.
 */
final class ReleaseGate {
    private static final int RETIRED = Integer.MIN_VALUE;
    private static final int RELEASED = 1 << 30;
    private static final int DONE = RETIRED | RELEASED;

    private final AtomicInteger state = new AtomicInteger(1);
    private final Runnable release;

    /**
     * @param release what runs once the peer is retired and nothing holds it any more (on the thread that drops
     *                the last hold)
     */
    ReleaseGate(Runnable release) {
        this.release = release;
    }

    /**
     * Takes a hold to touch the peer's memory for a moment (a completion of the peer). Any thread.
     *
     * @return false once the release began: the caller must not touch the memory (and does not {@link #leave})
     */
    boolean enter() {
        int s = state.getAndIncrement();
        if ((s & RELEASED) != 0) {
            state.getAndDecrement(); // the word stays DONE plus holds that come and go; nothing else reads it
            return false;
        }
        return true;
    }

    /**
     * Adds holds, for the readers told of the loss. Only by a thread that holds a hold (inside {@link #enter}, or
     * the live one before {@link #retire}).
     *
     * @param n holds to add
     */
    void hold(int n) {
        state.getAndAdd(n);
    }

    /** Drops a hold ({@link #enter}, or one of {@link #hold}); the last one after {@link #retire} releases. */
    void leave() {
        if (state.decrementAndGet() == RETIRED) {
            releaseIfLast();
        }
    }

    /** Drops the live peer's hold: the peer failed. Exactly once. */
    void retire() {
        // RETIRED - 1, added modulo 2^32: the live hold goes and the retired bit comes in one step
        if (state.addAndGet(RETIRED - 1) == RETIRED) {
            releaseIfLast();
        }
    }

    private void releaseIfLast() {
        if (state.compareAndSet(RETIRED, DONE)) {
            release.run();
        }
    }

    /** @return true once the release began */
    boolean released() {
        return (state.get() & RELEASED) != 0;
    }

    /** @return the holds left (tests, diagnostics) */
    int holds() {
        return state.get() & (RELEASED - 1);
    }
}
