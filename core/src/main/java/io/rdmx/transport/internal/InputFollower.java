package io.rdmx.transport.internal;

import io.rdmx.transport.Connection;

/**
 * The waiting side of leader/follower input ({@link Connection#awaitInput}) for one waiting thread, and how other
 * threads end its wait. The waiter {@link #begin begins} (a volatile store of the connection), checks its
 * condition once more, and only then {@link #await awaits}; a waker changes the condition and then
 * {@link #wake wakes}, which ends the wait (or the next one at once) if it sees a connection published. So either
 * the waiter's re-check sees the change or the waker sees the connection: no lost wake-up (jcstress
 * {@code InputFollowerWakeTest}, {@code InputFollowerHandOffTest}). The waiting thread handling its own input needs no wake-up and gets none.
 */
public final class InputFollower {
    /** The connection whose input the waiter reads itself now, or null. */
    private volatile Connection driving;
    /** The waiting thread; written before {@link #driving}. */
    private Thread waiter;

    /** Creates a follower with no connection. */
    public InputFollower() {
    }

    /**
     * Waiter: from now on a {@link #wake} ends the next {@link #await}. Then check the condition once more.
     *
     * @param c the connection whose input the waiter will read
     */
    public void begin(Connection c) {
        waiter = Thread.currentThread();
        driving = c;
    }

    /**
     * Waiter, after {@link #begin} and the re-check: reads and handles the connection's input, or waits for it.
     *
     * @param nanos the longest wait
     * @return what {@link Connection#awaitInput} returned (-1: not offered now; sleep another way)
     */
    public int await(long nanos) {
        Connection c = driving;
        return c == null ? -1 : c.awaitInput(nanos);
    }

    /** Waiter: done (always, after {@link #begin}). */
    public void end() {
        driving = null;
    }

    /**
     * Any thread, after changing the waiter's condition: ends its wait on the connection.
     *
     * @return true if it woke a waiter (one had published a connection)
     */
    public boolean wake() {
        Connection d = driving;
        if (d != null && Thread.currentThread() != waiter) {
            d.wakeInput();
            return true;
        }
        return false;
    }
}
