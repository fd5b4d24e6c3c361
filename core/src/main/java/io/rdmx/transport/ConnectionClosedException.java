package io.rdmx.transport;

/** The connection to a peer is closed or broken; the message names the peer. */
public class ConnectionClosedException extends RdmxException {
    private static final long serialVersionUID = 1L;
    private final String peer;

    /**
     * Creates the exception.
     *
     * @param peer the peer's name
     * @param message what happened
     * @param cause the underlying error, or null
     */
    public ConnectionClosedException(String peer, String message, Throwable cause) {
        super(message, cause);
        this.peer = peer;
    }

    /**
     * The peer of the closed connection.
     *
     * @return the peer's node name
     */
    public String peer() {
        return peer;
    }
}
