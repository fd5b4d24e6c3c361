package io.rdmx.transport.capability;

import io.rdmx.transport.InlineCompletionHandler;

/**
 * Delivers the connection's completions to a handler on the thread that produces them (see
 * {@link InlineCompletionHandler}) instead of the node's {@link io.rdmx.transport.CompletionQueue}. A connection
 * that cannot deliver inline does not offer it, and its caller drains the queue.
 */
public interface InlineCompletions extends Capability {
    /**
     * Installs the handler. Install it before posting the first request; completions produced before it stay on
     * the queue, so a caller drains the queue either way.
     *
     * @param handler the handler, or null to go back to the queue
     */
    void completionHandler(InlineCompletionHandler handler);
}
