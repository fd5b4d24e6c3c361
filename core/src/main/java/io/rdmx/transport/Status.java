package io.rdmx.transport;

/** Completion status (a subset of {@code ibv_wc_status}). */
public enum Status {
    /** The request completed. */
    SUCCESS,
    /**
     * Wrong remote key, out-of-bounds offset, or a region that is not remotely writable (WRITE) or readable (READ),
     * or deregistered. Nothing was written; a failed READ leaves the local bytes undefined.
     */
    REMOTE_ACCESS_ERROR,
    /** The peer's receive buffer was too small for the message. */
    REMOTE_INVALID_REQUEST,
    /** This posted receive was too small for the message that arrived. */
    LOCAL_LENGTH_ERROR,
    /** The connection went down (close, peer death, an earlier error) before the request completed. */
    FLUSHED,
    /** A fault injected by the loopback provider or a transport failure. */
    TRANSPORT_ERROR
}
