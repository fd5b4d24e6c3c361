package io.rdmx.rpc;

import java.nio.ByteBuffer;

/**
 * Where the one answer of an {@link RpcCall} goes, once its caller claimed it: the server's {@link Responder} (an
 * interface so that what answers, {@link DispatchTable} and {@link RpcCall}, can be tested without a channel).
 */
interface Answerer {
    /**
     * Writes the answer of a call whose one answer the caller claimed, from the calling thread.
     *
     * @param call the call
     * @param kind {@link RpcFrameDescriptor#KIND_RESPONSE} or {@link RpcFrameDescriptor#KIND_ERROR}
     * @param buffer the body (its remaining bytes; position unchanged), or null if {@code body} writes it (or for an
     *     empty one)
     * @param body writes the body straight into the client's ring, or null
     * @return true if written, false if dropped
     */
    boolean answer(RpcCall call, int kind, ByteBuffer buffer, RpcBody body);

    /**
     * Writes a remote error as the answer of a call whose one answer the caller claimed.
     *
     * @param call the call
     * @param className the error's class name
     * @param message its message, or null
     * @return true if written, false if dropped
     */
    boolean answerError(RpcCall call, String className, String message);
}
