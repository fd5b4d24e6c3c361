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
}
