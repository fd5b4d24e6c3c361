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

    /** @return the descriptor a peer uses to WRITE here */
    RemoteRegion descriptor();

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
