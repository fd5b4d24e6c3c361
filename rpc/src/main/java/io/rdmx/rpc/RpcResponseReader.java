package io.rdmx.rpc;

import java.nio.ByteBuffer;

/**
 * Decodes a response where it arrives, on the thread reading the client's responses (usually the calling thread
 * itself, see {@link RpcClient}): a response that came in one ring record
 * is read in place in the ring (no array of its size, no copy), a fragmented one from its reassembled array. The
 * call's result is what it returns.
 *
 * @param <T> the decoded type
 */
@FunctionalInterface
public interface RpcResponseReader<T> {
    /**
     * @param body the response body, from its position to its limit; valid only during the call (the ring space
     *             is reused after it): copy out whatever is kept, and do not write to it
     * @return the call's result
     * @throws Exception if the body cannot be decoded: the call fails with an {@link RpcException} naming the
     *                   server, with this as its cause
     */
    T read(ByteBuffer body) throws Exception;
}
