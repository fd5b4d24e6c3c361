package io.rdmx.rpc;

import java.io.IOException;

/**
 * A call failed. An {@link IOException}, so adapters (a Hadoop engine) can hand it to retry policies; the
 * subclasses say why: {@link RemoteRpcException} (the handler threw), {@link RpcTimeoutException},
 * {@link RpcPeerException} (the server was lost or refused), {@link RpcMessageTooLargeException}.
 */
public class RpcException extends IOException {
    private static final long serialVersionUID = 1L;

    /**
     * @param message what happened, naming the peer
     */
    public RpcException(String message) {
        super(message);
    }

    /**
     * @param message what happened, naming the peer
     * @param cause the underlying error
     */
    public RpcException(String message, Throwable cause) {
        super(message, cause);
    }
}
