package io.rdmx.rpc;

/** A call got no answer (or could not be sent, or not connect) within its timeout. */
public final class RpcTimeoutException extends RpcException {
    private static final long serialVersionUID = 1L;

    /**
     * @param message names the server, the call and the timeout
     */
    public RpcTimeoutException(String message) {
        super(message);
    }

    /**
     * @param message names the server, the call and the timeout
     * @param cause the last failure of a connect attempt
     */
    public RpcTimeoutException(String message, Throwable cause) {
        super(message, cause);
    }
}
