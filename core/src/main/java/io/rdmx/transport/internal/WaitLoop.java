package io.rdmx.transport.internal;

import io.rdmx.transport.capability.InputFollowing;
import java.lang.invoke.VarHandle;

/**
 * How one thread waits for a condition: the one wait loop of the channel readers and writers and of the completion
 * queue. Each pass checks the condition and then, while it does not hold, takes the first step that applies:
 *
 * <pre>
 *   check ──holds──▶ return its result
 *     │
 *     ▼
 *   work       a thread with no network thread runs the engine's duty cycle   (did work: check again)
 *   spin       Thread.onSpinWait, now and then a look at the followed input    (while spins are left)
 *   follow     leader/follower: publish the input, re-check, read it here      (read or woken: check again)
 *   prepare    what the waiter does before it sleeps                            (true: check again)
 *   arm        arm the sleeper (a full fence), then re-check, then sleep        (woken: check again)
 * </pre>
 *
 * The loop ends on the clock, never on a counter: a loop that ends on an int counter is a counted loop to C2,
 * which may compile it without a safepoint poll, so a long spin (spins = Integer.MAX_VALUE) would hold every
 * other thread of the JVM at a safepoint for as long as it spins. Every pass, spins included, checks the
 * condition: a close, a lost peer or a wake-up the condition reports ends the wait at once. At the deadline the
 * condition is checked once more and its answer returned, {@link #NOT_YET} if it still does not hold.
 *
 * <p>No lost wake-up, in both waits (the Dekker pattern): the waiter publishes that it waits (the follower's input,
 * or the sleeper's armed word: a volatile store and a full fence), then re-checks the condition, and only then
 * waits; a waker changes the condition and then {@link #wake wakes}, which ends the wait (or the next one at once)
 * if it sees the waiter published. Either the re-check sees the change or the waker sees the waiter (jcstress
 * {@code WaitLoopFollowTest}, {@code WaitLoopFollowWakeTest}; the sleeper's own: {@code SleeperLocalWakeTest}).
 *
 * <p>Leader/follower ({@link InputFollower}): where the waiter may read the input that brings what it waits for
 * itself (a sole peer's socket, the node's single connection), it does so instead of sleeping until an I/O thread
 * read it and woke this one: no thread woken on the way in, no hand-off. The provider decides whether the input is
 * offered now ({@link InputFollowing#awaitInput} returns -1 if not: the waiter sleeps as usual).
 *
 * <p>One waiting thread at a time; {@link #wake} from any thread.
 */
public final class WaitLoop {
    /** {@link Waiting#check}: the condition does not hold yet (and {@link #await}'s answer at the deadline). */
    public static final int NOT_YET = Integer.MIN_VALUE;

    /**
     * What one wait waits for, and what its waiter does at each step. Only {@link #check} and {@link #waiter}
     * are required; the other steps default to doing nothing.
     *
     * @param <X> what the check throws (the condition failed for good: a closed peer, engine or queue)
     */
    public interface Waiting<X extends Exception> {
        /**
         * Waiting thread: checks the condition. Called on every pass, and once more after the waiter published
         * that it waits (a full fence before it).
         *
         * @return the wait's result ({@code >= 0}, or any value but {@link #NOT_YET}), or {@link #NOT_YET}
         * @throws X if the condition can no longer hold
         */
        int check() throws X;

        /**
         * Waiting thread, the condition not holding: work that may make it hold (a duty cycle run on this thread).
         *
         * @return true if there was work (the loop checks again at once)
         * @throws X if the work found the condition can no longer hold
         */
        default boolean work() throws X {
            return false;
        }

        /** @return the input a spinning waiter looks at now and then, or null */
        default InputFollowing spinInput() {
            return null;
        }

        /** @return the input the waiter reads itself instead of sleeping (leader/follower), or null: sleep */
        default InputFollowing followInput() {
            return null;
        }

        /**
         * Waiting thread, before it arms the sleeper: what it must do first (hand an input back, set up the
         * shared words it sleeps on).
         *
         * @return true if that brought something (the loop checks again instead of sleeping)
         */
        default boolean prepare() {
            return false;
        }

        /** Waiting thread, the sleeper armed, before the re-check: publishes elsewhere too that it sleeps. */
        default void armed() {
        }

        /** Waiting thread, the wait over (however it ended): undoes {@link #armed}. */
        default void disarmed() {
        }

        /**
         * @param remaining the time to the deadline
         * @return how long one sleep may last (shorter where the waiter must come back to work)
         */
        default long sleepNanos(long remaining) {
            return remaining;
        }

        /** @return who waits, for the message of an {@link InterruptedException} */
        String waiter();
    }

    private final Sleeper sleeper;
    private final InputFollower follower = new InputFollower();

    /** @param blocker what a thread dump names as the parked thread's blocker (without futexes) */
    public WaitLoop(Object blocker) {
        this.sleeper = new Sleeper(blocker);
    }

    /** @return the sleeper the waiter sleeps on (its bells and shared words are the caller's to set) */
    public Sleeper sleeper() {
        return sleeper;
    }

    /**
     * Any thread, after it changed what the waiter waits for: ends its sleep or its wait on the followed input
     * (now, or the next one at once). The waiting thread itself needs no wake-up and makes none on the input.
     */
    public void wake() {
        sleeper.wake();
        follower.wake();
    }

    /**
     * Waiting thread: waits until the condition holds, it fails, or the deadline passes.
     *
     * @param w the condition and the waiter's steps
     * @param deadline when to give up ({@link System#nanoTime} scale)
     * @param spins passes that spin before the waiter follows its input or sleeps (0: none)
     * @param lookMask a spinning waiter looks at {@link Waiting#spinInput} when {@code (spins & lookMask) == 0}
     *                 (0: on every spin; {@code 2^k - 1}: once per {@code 2^k} spins)
     * @param <X> what the check throws
     * @return the condition's result, or {@link #NOT_YET} at the deadline
     * @throws X if the condition can no longer hold
     * @throws InterruptedException if the thread is interrupted while it follows its input or sleeps
     */
    public <X extends Exception> int await(Waiting<X> w, long deadline, int spins, int lookMask)
        throws X, InterruptedException {
        int left = spins;
        try {
            do {
                int r = w.check();
                if (r != NOT_YET) {
                    return r;
                }
                if (w.work()) {
                    continue;
                }
                if (left > 0) {
                    left--;
                    InputFollowing in = (left & lookMask) == 0 ? w.spinInput() : null;
                    if (in == null || in.awaitInput(0) <= 0) {
                        Thread.onSpinWait();
                    }
                    continue;
                }
                InputFollowing in = w.followInput();
                if (in != null) {
                    int got;
                    try {
                        r = publishAndCheck(w, in);
                        if (r != NOT_YET) {
                            return r;
                        }
                        got = follower.await(deadline - System.nanoTime());
                    } finally {
                        follower.end();
                    }
                    if (got >= 0) {
                        interrupted(w);
                        continue; // read (and handled) the input, or woken: check again
                    }
                }
                if (w.prepare()) {
                    continue;
                }
                sleeper.arm();
                w.armed();
                r = w.check();
                if (r != NOT_YET) {
                    return r;
                }
                sleeper.sleep(w.sleepNanos(deadline - System.nanoTime()));
                interrupted(w);
            } while (System.nanoTime() - deadline < 0);
            return w.check();
        } finally {
            sleeper.disarm();
            w.disarmed();
        }
    }

    /**
     * Waiting thread, before it waits on the input it follows: publishes it ({@link InputFollower#begin}, then a
     * full fence), then checks the condition once more. A waker changes the condition, then {@link #wake}s,
     * which ends the wait on a published input: either this check sees the change or that wake-up comes. The
     * follower's wait ends, published or not, when {@link #await} ends it. Part of {@link #await}; public for
     * the jcstress test of this hand-off ({@code WaitLoopFollowTest}), not for callers.
     *
     * @param w the condition
     * @param in the input the waiter will read
     * @param <X> what the check throws
     * @return the condition's result, or {@link #NOT_YET}
     * @throws X if the condition can no longer hold
     */
    public <X extends Exception> int publishAndCheck(Waiting<X> w, InputFollowing in) throws X {
        follower.begin(in);
        VarHandle.fullFence();
        return w.check();
    }

    private static void interrupted(Waiting<?> w) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException(w.waiter());
        }
    }
}
