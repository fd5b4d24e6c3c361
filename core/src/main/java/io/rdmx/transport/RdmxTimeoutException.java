package io.rdmx.transport;

/** A bounded wait (connect, accept, handshake) ran out of time. */
public class RdmxTimeoutException extends RdmxException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what timed out, with the timeout
     */
    public RdmxTimeoutException(String message) {
        super(message);
    }
}
