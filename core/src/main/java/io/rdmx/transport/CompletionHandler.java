package io.rdmx.transport;

/** Receives completions drained from a {@link CompletionQueue}. */
@FunctionalInterface
public interface CompletionHandler {
    /**
     * Called once per completion, on the draining thread.
     *
     * @param completion the completion
     */
    void onCompletion(Completion completion);
}
