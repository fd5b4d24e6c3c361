package io.rdmx.transport.stream;

import io.rdmx.transport.internal.RegionImpl;

/**
 * Places WRITE data straight into the peer's memory (the shm provider maps the peer's region files), so the
 * frame carries only a notification. Called under the connection's send lock, by the posting thread.
 */
public interface Placer {
    /**
     * Copies data into the peer's region.
     *
     * @param remoteKey the target region's key
     * @param remoteOffset offset in the target
     * @param src the local source
     * @param srcOffset offset in the source
     * @param length bytes
     * @return null on success, else why nothing was written (with {@code name=value} context)
     */
    String place(int remoteKey, long remoteOffset, RegionImpl src, int srcOffset, int length);

    /** Unmaps whatever was mapped. */
    void close();
}
