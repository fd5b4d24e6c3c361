package io.rdmx.rpc;

import java.nio.ByteBuffer;

/**
 * Decides on a request from its first fragment, before anything of it is reassembled: the place for a limit on
 * what a request declares (a framework's own maximum request size), so that a refused request costs the server no
 * array of its size. Runs on the server's reader thread ({@link RpcServer.Builder#gate}): it must not block.
 */
@FunctionalInterface
public interface RpcRequestGate {
    /** Why a request is refused: carried to its caller as a {@link RemoteRpcException}. */
    final class Refusal {
        private final String className;
        private final String message;

        /**
         * @param className the class name the caller sees
         * @param message the message (names the caller and the value)
         */
        public Refusal(String className, String message) {
            this.className = java.util.Objects.requireNonNull(className, "className");
            this.message = message;
        }

        /** @return the class name the caller sees */
        public String className() {
            return className;
        }

        /** @return the message */
        public String message() {
            return message;
        }
    }

    /**
     * @param method the request's method
     * @param peer the caller's node name
     * @param callerAddress {@link RpcCall#callerAddress()} of the caller's connection, or null
     * @param length the message length the first fragment declares (at most
     *     {@link RpcConfig#maxMessageBytes()}: larger ones are refused before the gate)
     * @param first the first fragment's bytes (read-only, position 0; the whole message when it is one fragment),
     *     valid during the call only
     * @return null to take the request, else the refusal its caller gets (the rest of its fragments are skipped)
     */
    Refusal admit(int method, String peer, String callerAddress, int length, ByteBuffer first);
}
