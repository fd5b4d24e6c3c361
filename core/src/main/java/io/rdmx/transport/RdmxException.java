package io.rdmx.transport;

import java.io.IOException;

/** Base of rdmx's checked exceptions. */
public class RdmxException extends IOException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what happened, with {@code name=value} context
     */
    public RdmxException(String message) {
        super(message);
    }

    /**
     * Creates the exception.
     *
     * @param message what happened, with {@code name=value} context
     * @param cause the underlying error
     */
    public RdmxException(String message, Throwable cause) {
        super(message, cause);
    }
}
