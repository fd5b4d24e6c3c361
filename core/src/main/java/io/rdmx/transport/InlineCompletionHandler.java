package io.rdmx.transport;

/**
 * Receives the completions of one connection with primitive arguments, on the thread that produces them (a
 * provider's I/O thread, or the thread that fails the connection), instead of through the node's
 * {@link CompletionQueue}: no object per completion and no thread between the one that has the result and the
 * one that needs it. Installed with {@link io.rdmx.transport.capability.InlineCompletions}.
 *
 * <p>Threading contract: the provider calls the handler for one connection from one thread at a time (calls
 * are serialized; successes in the order of the RC rules of {@link io.rdmx.transport}), and never while it
 * holds a lock that {@link Connection#post} takes, so the handler may post (re-post a receive, send the next
 * request) and may close the connection. The handler must not block: it runs on an I/O thread.
 *
 * <p>A provider that polls a hardware completion queue (verbs) calls it from the thread that polls, which is
 * the thread that needs the result.
 */
@FunctionalInterface
public interface InlineCompletionHandler {
    /**
     * One completion.
     *
     * @param wrId the request's id
     * @param opcode what completed ({@link Opcode#ordinal()})
     * @param status the outcome ({@link Status#ordinal()})
     * @param byteLength bytes received (RECV) or transferred
     * @param immediate the immediate (RECV of a WRITE_WITH_IMM), else 0
     * @param hasImmediate whether {@code immediate} is meaningful
     * @param detail an explanation for a failed status, else null (a success never carries one)
     */
    void onCompletion(long wrId, int opcode, int status, int byteLength, int immediate, boolean hasImmediate,
                      String detail);
}
