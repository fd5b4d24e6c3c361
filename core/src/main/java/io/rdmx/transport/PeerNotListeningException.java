package io.rdmx.transport;

/**
 * Nothing listens at the address a connect was aimed at: no node is open there (yet), the address refused the
 * connection, or it does not exist. Unlike other connect failures this one may go away by itself once the peer
 * node starts, so callers that start nodes in any order may try again (see
 * {@code io.rdmx.channel.ChannelEngine#connect}).
 */
public class PeerNotListeningException extends RdmxException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what happened, naming the address
     */
    public PeerNotListeningException(String message) {
        super(message);
    }

    /**
     * Creates the exception.
     *
     * @param message what happened, naming the address
     * @param cause the underlying error
     */
    public PeerNotListeningException(String message, Throwable cause) {
        super(message, cause);
    }
}
