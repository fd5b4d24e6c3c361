package io.rdmx.rpc;

/**
 * The peer of a call is gone (its process died, its engine closed), could not be reached, or was refused for
 * sending malformed frames: only the calls to that peer fail.
 */
public class RpcPeerException extends RpcException {
    private static final long serialVersionUID = 1L;
    private final String peer;

    /**
     * @param peer the peer's node name (or address, before a connection)
     * @param message what happened, naming it
     * @param cause the channel's failure, or null
     */
    public RpcPeerException(String peer, String message, Throwable cause) {
        super(message, cause);
        this.peer = peer;
    }

    /** @return the peer's node name, or its address when it was never reached */
    public String peer() {
        return peer;
    }
}
