package io.rdmx.rpc;

/** A peer sent a malformed frame; the message names the peer and the value ({@code name=value}). */
public final class RpcProtocolException extends RpcPeerException {
    private static final long serialVersionUID = 1L;

    /**
     * @param peer the peer's node name
     * @param message names the peer and the bad value
     */
    public RpcProtocolException(String peer, String message) {
        super(peer, message, null);
    }
}
