package io.rdmx.channel;

import io.rdmx.transport.Completion;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Status;

/**
 * The exceptions the channel layer hands its users when a peer goes down, in the user's terms: they name the
 * peer, never an internal work-request id, and say each thing once (no cause repeats what its wrapper says).
 */
final class ChannelErrors {
    private ChannelErrors() {
    }

    /**
     * A failed completion of a request the channel posted (the user posted none of them).
     *
     * @param peer the peer's name
     * @param c the failed completion
     * @return the failure, naming the peer and the status, not the request id
     */
    static ConnectionClosedException completionFailure(String peer, Completion c) {
        String detail = c.detail();
        String msg;
        if (c.status() == Status.FLUSHED) {
            // the request itself did not fail: the connection went down under it, and the detail says why
            msg = detail != null && detail.contains("'" + peer + "'") ? detail
                : "connection to peer '" + peer + "' went down" + (detail == null ? "" : ": " + detail);
        } else {
            msg = WrIdDescriptor.describe(WrIdDescriptor.kind(c.wrId())) + " to peer '" + peer + "' failed: status="
                + c.status() + (detail == null ? "" : ": " + detail);
        }
        return new ConnectionClosedException(peer, msg, null);
    }

    /**
     * Why a peer channel went down.
     *
     * @param peer the peer's name
     * @param cause what happened; its message should name the peer
     * @return the failure: the cause's message when it names the peer, else prefixed with the peer's name
     */
    static ConnectionClosedException peerFailure(String peer, Throwable cause) {
        if (cause instanceof ConnectionClosedException
            && peer.equals(((ConnectionClosedException) cause).peer()) && names(cause, peer)) {
            return (ConnectionClosedException) cause;
        }
        String msg = names(cause, peer) ? cause.getMessage()
            : "channel to peer '" + peer + "' failed: " + cause.getMessage();
        return new ConnectionClosedException(peer, msg, distinctCause(msg, cause));
    }

    /**
     * The exception a user thread throws for a peer's failure: its own stack, the failure's message once.
     *
     * @param f the peer's failure
     * @return a new exception for the calling thread
     */
    static ConnectionClosedException forCaller(ConnectionClosedException f) {
        return new ConnectionClosedException(f.peer(), f.getMessage(), distinctCause(f.getMessage(), f));
    }

    /**
     * The first exception of a cause chain whose message adds something to {@code message}.
     *
     * @param message what the wrapper says
     * @param cause the chain
     * @return the first cause whose message is not part of {@code message}, or null
     */
    static Throwable distinctCause(String message, Throwable cause) {
        Throwable c = cause;
        int guard = 0;
        while (c != null && guard++ < 32 && c.getMessage() != null && message.contains(c.getMessage())) {
            c = c.getCause();
        }
        return c;
    }

    private static boolean names(Throwable t, String peer) {
        return t.getMessage() != null && t.getMessage().contains("'" + peer + "'");
    }
}
