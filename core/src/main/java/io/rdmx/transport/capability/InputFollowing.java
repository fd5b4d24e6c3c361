package io.rdmx.transport.capability;

/**
 * Leader/follower input: a thread that waits for something a connection's input brings reads the input and
 * handles what came itself (completions are delivered on this thread, as on the provider's I/O thread), instead of
 * sleeping until the provider's I/O thread has read it and woken it. Offered by the socket providers ({@code shm},
 * {@code tcp}); {@code verbs} offers the spinning half only (it polls its CQ for a waiter that does not sleep). A
 * provider's own entry for the completion queue's waiter is one too ({@code InputFollower}, {@code WaitLoop}).
 */
public interface InputFollowing extends Capability {
    /**
     * Reads the input and handles what came, or waits for it. Only while no other thread reads it; the provider's
     * I/O thread does not watch the input meanwhile. Returns at once if something was read, else after data came,
     * {@link #wakeInput()}, the peer closed, or the timeout.
     *
     * @param nanos the longest wait; 0 or less reads what is there and returns at once (a spinning waiter's look),
     *              and only while waiting threads hold the input (else -1: the I/O thread reads it)
     * @return bytes read and handled (0: nothing within the wait, or woken), or -1 if not offered now or another
     *         thread reads the input now (then the caller sleeps as usual)
     */
    int awaitInput(long nanos);

    /** Ends an {@link #awaitInput} now, or the next one at once (no lost wake-up). Any thread. */
    void wakeInput();

    /**
     * The calling thread is about to sleep until something the input brings, without reading it itself (a writer
     * waiting for credits). Threads that waited in {@link #awaitInput} hold the input for a moment after they
     * return (the provider's I/O thread does not read it meanwhile); this reads what is there and hands the input
     * back to the I/O thread at once, so nothing that comes while the caller sleeps waits for them.
     *
     * @return bytes read and handled (0: none, or nothing held)
     */
    default int releaseInput() {
        return 0;
    }
}
