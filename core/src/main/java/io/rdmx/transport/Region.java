package io.rdmx.transport;

import java.nio.ByteBuffer;

/**
 * Registered off-heap memory. Reference counted: it starts at one; {@link #release()} at zero deregisters it
 * (peers' WRITEs to its key then fail) and frees its memory. Closing the node releases every region it still
 * holds and reports each as a leak.
 */
public interface Region {
    /** @return the base address (native for verbs, a virtual base otherwise) */
    long address();

    /** @return the length in bytes */
    int length();

    /** @return the local key */
    int localKey();

    /** @return the remote key peers put in their WRITEs */
    int remoteKey();

    /** @return the {@link Access} flags */
    int access();

    /**
     * A little-endian view of the whole region (position 0, limit {@link #length()}); each call returns a new
     * view of the same memory.
     *
     * @return the view
     */
    ByteBuffer buffer();

    /**
     * The descriptor a peer uses to WRITE here. Where keys are the same on every connection (loopback, shm, tcp,
     * disni) any peer allowed to reach the region may use it. On verbs a node-wide region has a key per connection
     * (each queue pair has its own protection domain): tell a peer {@link #descriptor(Connection)} instead; a region
     * granted to one connection ({@link Connection#register}) has one key, its grantee's, and this is it.
     *
     * @return the descriptor
     */
    RemoteRegion descriptor();

    /**
     * The descriptor the peer of one connection uses to WRITE here: what to tell that peer in a message of your own.
     * Equal to {@link #descriptor()} where keys are the same on every connection.
     *
     * @param via a connection of this region's node: the region must be exported node-wide or granted to it
     * @return the descriptor
     * @throws RdmxException if the provider cannot make the region reachable on that connection (verbs: the
     *     registration in its protection domain failed, or the connection closed)
     * @throws IllegalArgumentException if the region is neither remotely writable nor readable, is granted to another
     *     connection, or {@code via} belongs to another node
     */
    default RemoteRegion descriptor(Connection via) throws RdmxException {
        return descriptor();
    }

    /** @return the name given at registration, {@code ""} when unnamed */
    String name();

    /** @return the current reference count; 0 once released */
    int refCnt();

    /**
     * Adds a reference.
     *
     * @return this
     * @throws IllegalStateException if already released
     */
    Region retain();

    /**
     * Drops a reference; at zero the region is deregistered.
     *
     * @return true if this call deregistered it
     * @throws IllegalStateException if already released
     */
    boolean release();
}
