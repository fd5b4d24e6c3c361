package io.rdmx.rpc;

/**
 * Serves calls whose answer may come later, from any thread: the handler takes the call and answers it with
 * {@link RpcCall#respond} or {@link RpcCall#respondError} when it can, from the thread that has the answer (the
 * answer is written into the client's ring by that thread: no hand-off back to a server thread).
 *
 * <p>Registered with {@link RpcServer.Builder#handleAsync} the handler runs on a handler thread; with
 * {@link RpcServer.Builder#handleAsyncOnReader} it runs on the server's reader thread, so a handler that only
 * decodes a call and hands it to an executor of its own saves the hand-off to the handler pool. A handler on
 * the reader thread must not block: it delays every client's requests.
 */
@FunctionalInterface
public interface RpcAsyncHandler {
    /**
     * Takes one call. Answer it once, now or later; a call never answered gets no answer (its client times out).
     *
     * @param call the request
     * @throws Exception if the call is not yet answered, carried back to the caller as a
     *                   {@link RemoteRpcException} with its class name and message; ignored if it was answered
     */
    void handle(RpcCall call) throws Exception;
}
