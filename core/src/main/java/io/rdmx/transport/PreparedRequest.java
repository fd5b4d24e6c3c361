package io.rdmx.transport;

/**
 * A work request validated once against its connection, re-posted with new offsets and lengths. Not
 * thread-safe: one posting thread per prepared request.
 */
public interface PreparedRequest {
    /**
     * Posts the request again.
     *
     * @param wrId id for the completion
     * @param localOffset offset in the local region
     * @param length bytes
     * @param remoteOffset offset in the remote region (ignored for SEND/RECV)
     * @return a {@link Post} code
     * @throws ConnectionClosedException if the connection is down
     */
    int post(long wrId, int localOffset, int length, long remoteOffset) throws ConnectionClosedException;

    /**
     * Posts a WRITE_WITH_IMM again with a new immediate.
     *
     * @param wrId id for the completion
     * @param localOffset offset in the local region
     * @param length bytes
     * @param remoteOffset offset in the remote region
     * @param immediate the immediate
     * @return a {@link Post} code
     * @throws ConnectionClosedException if the connection is down
     */
    int post(long wrId, int localOffset, int length, long remoteOffset, int immediate)
        throws ConnectionClosedException;

    /** @return the connection */
    Connection connection();
}
