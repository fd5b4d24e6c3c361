package io.rdmx.transport.internal;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Who reads one socket's input between a provider's I/O thread and the threads that read it themselves while they
 * wait (leader/follower input, {@code InputFollowing.awaitInput}), and when the I/O thread must be
 * woken to take it back.
 *
 * <p>A follower {@link #take takes} the input for one read or wait; the first one {@link #hold holds} it (the
 * caller then stops the I/O thread's watch of the socket), and the input stays held after it {@link #giveBack
 * gives it back}, so the next follower (a reader between two records) neither stops nor wakes the I/O thread.
 * Before it sleeps, the I/O thread {@link #poll polls} every held input: one given back longer than the grace ago
 * (or whose socket closed, or whose handler wants no input) it takes back ({@link #beginTakeBack}, then it watches
 * the socket again); one a follower reads now it polls again after a grace while followers keep coming and going
 * (so a busy connection wakes the I/O thread once per grace, not per message), and once the same follower still
 * has it (it waits for input), it asks that follower to wake it when it gives the input back.
 *
 * <p>No lost wake-up (jcstress {@code InputHoldWakeTest}): the I/O thread stores {@code wakeOnRelease} and then
 * reads {@code owned}; a follower clears {@code owned} and then reads {@code wakeOnRelease}; all volatile, so
 * either the I/O thread sees the input given back (and sleeps at most the grace) or the follower wakes it.
 */
public final class InputHold {
    /** {@link #poll}: the I/O thread may sleep with no deadline for this input (a follower will wake it). */
    public static final long NO_DEADLINE = Long.MAX_VALUE;
    /** {@link #poll}: the I/O thread takes the input back now ({@link #beginTakeBack}). */
    public static final long TAKE_BACK = -1;

    /** Set while one thread (a follower, or the I/O thread taking the input back) has the input. */
    private final AtomicBoolean owned = new AtomicBoolean();
    /** Set while followers hold the input, between their reads too: the I/O thread does not watch the socket. */
    private volatile boolean held;
    /** When a follower last gave the input back. */
    private volatile long releasedAt;
    /** Set when the follower that gives the input back next must wake the I/O thread. */
    private volatile boolean wakeOnRelease;
    /** I/O thread only: {@link #releasedAt} at its last {@link #poll}. */
    private long seenRelease;

    /** Creates the hold of one socket: the I/O thread reads it. */
    public InputHold() {
    }

    /** @return true if this thread has the input now (one read or wait); false if another thread has it */
    public boolean take() {
        return owned.compareAndSet(false, true);
    }

    /** @return true while a thread has the input (the I/O thread then leaves the socket alone) */
    public boolean owned() {
        return owned.get();
    }

    /** @return true while followers hold the input (the I/O thread's watch of the socket is off) */
    public boolean held() {
        return held;
    }

    /**
     * Follower, after {@link #take}: holds the input for followers.
     *
     * @return true if it was not held: the caller stops the I/O thread's watch of the socket now, and the next
     *         {@link #giveBack} wakes the I/O thread (which may sleep with no deadline for this input)
     */
    public boolean hold() {
        if (held) {
            return false;
        }
        held = true;
        wakeOnRelease = true;
        return true;
    }

    /**
     * Follower: done with one read or wait; the input stays held for the next follower.
     *
     * @param now the time
     * @return true if the caller must wake the I/O thread
     */
    public boolean giveBack(long now) {
        releasedAt = now;
        owned.set(false);
        if (wakeOnRelease) {
            wakeOnRelease = false;
            return true;
        }
        return false;
    }

    /**
     * A thread that took the input (after {@link #take}) and will not read it again soon (a writer about to sleep):
     * gives it straight back to the I/O thread; the caller then wakes the I/O thread, which takes it back at once.
     *
     * @param now the time
     * @param graceNanos the grace the I/O thread applies
     */
    public void handBack(long now, long graceNanos) {
        releasedAt = now - graceNanos;
        wakeOnRelease = false;
        owned.set(false);
    }

    /**
     * I/O thread, before it sleeps, for a held input.
     *
     * @param now the time
     * @param graceNanos how long after the last give-back followers keep the input
     * @param keep false if the input must go back to the I/O thread now (socket closed, handler wants no input)
     * @return {@link #NO_DEADLINE}, the longest sleep before the input must be polled again, or {@link #TAKE_BACK}
     */
    public long poll(long now, long graceNanos, boolean keep) {
        if (owned.get()) {
            long released = releasedAt;
            if (released != seenRelease && keep) {
                // followers came and went since the last poll (a busy connection): look again after a grace
                // rather than have the next give-back wake this thread (a wake-up per message, or nearly)
                seenRelease = released;
                return graceNanos;
            }
            wakeOnRelease = true;
            if (owned.get()) {
                return NO_DEADLINE; // a follower waits for input: it gives it back later, and then wakes the I/O thread
            }
        }
        long released = releasedAt;
        seenRelease = released;
        long idle = now - released;
        return keep && idle < graceNanos ? graceNanos - idle : TAKE_BACK;
    }

    /**
     * I/O thread, after {@link #poll} said {@link #TAKE_BACK}: takes the input back unless a follower took it just
     * now. On true the caller watches the socket again, then calls {@link #endTakeBack}.
     *
     * @return true if the input is the I/O thread's again
     */
    public boolean beginTakeBack() {
        if (!owned.compareAndSet(false, true)) {
            return false;
        }
        held = false;
        wakeOnRelease = false;
        return true;
    }

    /** I/O thread: ends {@link #beginTakeBack}. */
    public void endTakeBack() {
        owned.set(false);
    }
}
