package io.rdmx.rpc;

import java.nio.ByteBuffer;

/** Serves calls of one method (or of every method without a handler of its own). Called on a handler thread. */
@FunctionalInterface
public interface RpcHandler {
    /**
     * Serves one call.
     *
     * @param call the request
     * @return the response body (its remaining bytes are sent, before this thread returns to the pool, so the
     *         buffer may be reused after the call), or null for an empty one
     * @throws Exception carried back to the caller as a {@link RemoteRpcException} with its class name and
     *                   message, for this call only
     */
    ByteBuffer handle(RpcCall call) throws Exception;
}
