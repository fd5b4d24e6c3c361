package io.rdmx.transport;

/** A peer sent something that breaks the wire protocol; only that connection is closed. */
public class ProtocolException extends RdmxException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what was wrong, with {@code name=value} context
     */
    public ProtocolException(String message) {
        super(message);
    }
}
