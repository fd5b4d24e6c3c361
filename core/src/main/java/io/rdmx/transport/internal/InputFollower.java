package io.rdmx.transport.internal;

import io.rdmx.transport.capability.InputFollowing;

/**
 * The waiting side of leader/follower input ({@link InputFollowing}) for one waiting thread, and how other
 * threads end its wait. The waiter {@link #begin begins} (a volatile store of the input), checks its condition
 * once more, and only then {@link #await awaits}; a waker changes the condition and then {@link #wake wakes},
 * which ends the wait (or the next one at once) if it sees an input published. So either the waiter's re-check
 * sees the change or the waker sees the input: no lost wake-up (jcstress {@code WaitLoopFollowTest},
 * {@code WaitLoopFollowWakeTest}). The waiting thread handling its own input needs no wake-up and gets none.
 *
 * <p>The one wait loop ({@link WaitLoop}) runs it for every waiter that reads its input itself: a channel reader
 * on its sole peer's connection (the connection's {@link InputFollowing} capability), and the completion queue's
 * waiter on the node's single connection ({@link CompletionQueueImpl}).
 */
public final class InputFollower {
    /** The input the waiter reads itself now, or null. */
    private volatile InputFollowing driving;
    /** The waiting thread; written before {@link #driving}. */
    private Thread waiter;

    /** Creates a follower with no input. */
    public InputFollower() {
    }

    /**
     * Waiter: from now on a {@link #wake} ends the next {@link #await}. Then check the condition once more.
     *
     * @param in the input the waiter will read
     */
    public void begin(InputFollowing in) {
        waiter = Thread.currentThread();
        driving = in;
    }

    /**
     * Waiter, after {@link #begin} and the re-check: reads and handles the input, or waits for it.
     *
     * @param nanos the longest wait
     * @return what {@link InputFollowing#awaitInput} returned (-1: not offered now; sleep another way)
     */
    public int await(long nanos) {
        InputFollowing in = driving;
        return in == null ? -1 : in.awaitInput(nanos);
    }

    /** Waiter: done (always, after {@link #begin}). */
    public void end() {
        driving = null;
    }

    /**
     * Any thread, after changing the waiter's condition: ends its wait on the input.
     *
     * @return true if it woke a waiter (one had published an input)
     */
    public boolean wake() {
        InputFollowing d = driving;
        if (d != null && Thread.currentThread() != waiter) {
            d.wakeInput();
            return true;
        }
        return false;
    }
}
