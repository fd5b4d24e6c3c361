package io.rdmx.rpc;

import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Decodes a response where it arrives, on the thread reading the client's responses (usually the calling thread
 * itself, see {@link RpcClient}): a response that came in one ring record
 * is read in place in the ring (no array of its size, no copy), a fragmented one from its reassembled array. The
 * call's result is what it returns. A result that holds something to give back (a pooled buffer) has
 * {@link #discard} for the case where the call's future does not take it.
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

    /**
     * A result the call's future did not take: the future was complete already when the response was decoded
     * (its caller cancelled it, completed it, or gave up on it with {@code orTimeout}), or a blocking caller was
     * interrupted while the response was being decoded, so nobody else will see this result. Gives back what it
     * holds. Called at most once per call, never for a result a caller gets, on the thread that read the
     * response or on the interrupted caller's own thread (so it must be thread-safe). The default does nothing;
     * what it throws is logged and dropped.
     *
     * @param result what {@link #read} returned
     */
    default void discard(T result) {
    }

    /**
     * @param read decodes the body
     * @param discard gives back a result the call's future did not take ({@link #discard})
     * @param <T> the decoded type
     * @return a reader with both
     */
    static <T> RpcResponseReader<T> of(RpcResponseReader<T> read, Consumer<? super T> discard) {
        Objects.requireNonNull(read, "read");
        Objects.requireNonNull(discard, "discard");
        return new RpcResponseReader<T>() {
            @Override
            public T read(ByteBuffer body) throws Exception {
                return read.read(body);
            }

            @Override
            public void discard(T result) {
                discard.accept(result);
            }
        };
    }
}
