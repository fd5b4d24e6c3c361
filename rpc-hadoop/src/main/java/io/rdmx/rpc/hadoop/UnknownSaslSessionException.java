package io.rdmx.rpc.hadoop;

import org.apache.hadoop.security.AccessControlException;

/**
 * A Kerberized rdmx listener's answer to a call or SASL message naming a session it does not have (never made,
 * refused, or forgotten beyond its bound): the client negotiates again, once, and resends.
 */
public final class UnknownSaslSessionException extends AccessControlException {
    private static final long serialVersionUID = 1L;

    /** @param message names the caller and the server */
    public UnknownSaslSessionException(String message) {
        super(message);
    }
}
