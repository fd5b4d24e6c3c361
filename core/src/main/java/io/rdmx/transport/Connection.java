package io.rdmx.transport;

import java.util.List;

/**
 * The one connection (reliable queue pair) between this node and a peer, shared by every thread.
 */
public interface Connection extends AutoCloseable {
    /** @return the local node */
    Node node();

    /** @return the peer's node name */
    String peerName();

    /** @return the peer's listening address */
    String peerAddress();

    /** @return the descriptors of the peer's remotely writable regions, as exchanged at setup */
    List<RemoteRegion> remoteRegions();

    /**
     * Posts a work request (any opcode). Any thread.
     *
     * @param wr the request; its values are read during the call only
     * @return {@link Post#OK}, {@link Post#SEND_QUEUE_FULL} or {@link Post#RECV_QUEUE_FULL}
     * @throws ConnectionClosedException if the connection is closed or broken (names the peer)
     * @throws IllegalArgumentException for bad offsets, lengths, or a region of another node
     * @throws IllegalStateException if the local region was released
     */
    int post(WorkRequest wr) throws ConnectionClosedException;

    /**
     * Validates a request once and returns a handle that re-posts it with new offsets and lengths, without
     * allocating (the stateful verb call of jVerbs/DiSNI).
     *
     * @param template the request; copied
     * @return the prepared request
     */
    PreparedRequest prepare(WorkRequest template);

    /** @return true until the connection is closed or broken */
    boolean isOpen();

    /** @return why the connection went down, or null while open */
    Throwable closeCause();

    /** Closes the connection; outstanding requests complete as {@link Status#FLUSHED}. Idempotent. */
    @Override
    void close();
}
