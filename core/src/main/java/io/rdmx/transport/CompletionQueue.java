package io.rdmx.transport;

import java.util.concurrent.TimeUnit;

/**
 * A node's completion queue with its completion channel. Single consumer: one thread at a time drains it.
 */
public interface CompletionQueue {
    /**
     * Drains up to {@code max} completions without blocking.
     *
     * @param handler receives each completion
     * @param max the most to drain
     * @return how many were drained
     */
    int poll(CompletionHandler handler, int max);

    /**
     * Drains up to {@code max} completions, sleeping (no spinning) until at least one is there, the timeout
     * passes, or the node is closed.
     *
     * @param handler receives each completion
     * @param max the most to drain
     * @param timeout how long to wait
     * @param unit unit of {@code timeout}
     * @return how many were drained; 0 on timeout
     * @throws RdmxException if the node is closed and nothing is left to drain
     * @throws InterruptedException if the waiting thread is interrupted
     */
    int await(CompletionHandler handler, int max, long timeout, TimeUnit unit)
        throws RdmxException, InterruptedException;

    /** @return completions waiting to be drained */
    int size();

    /**
     * Whether {@link #kick} ends a wait: a consumer that sleeps long when idle (a channel engine's network thread)
     * relies on it to be woken for work that brings no completion.
     *
     * @return true if this queue's {@link #kick} ends the current (or next) {@link #await}
     */
    default boolean kicks() {
        return false;
    }

    /**
     * Ends the current {@link #await} now (or the next one at once) with whatever is there, 0 completions if none.
     * Any thread. Does nothing where {@link #kicks} is false.
     */
    default void kick() {
    }

    /**
     * Makes a thread always sleep in {@link #await} rather than read the node's input itself (leader/follower
     * input, where the provider offers it): for a consumer whose queue mostly takes completions added by other
     * threads, each of which would end its wait on the input and hand the input back to the I/O thread (two
     * wake-ups where a sleeper's wake is one). Does nothing where the queue has no such input.
     *
     * @param t the thread, or null for none
     */
    default void neverFollow(Thread t) {
    }
}
