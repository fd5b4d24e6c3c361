package io.rdmx.transport.wire;

import io.rdmx.transport.RdmxException;
import io.rdmx.transport.internal.RegionImpl;
import java.nio.ByteBuffer;

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

    /**
     * A view of the peer's region in this process ({@code RemoteMapping.mapRemote}). Called under
     * the connection's send lock.
     *
     * @param remoteKey the region's key
     * @param length the region's length as its descriptor says
     * @return a little-endian view of the whole region
     * @throws RdmxException if the region cannot be mapped (with {@code name=value} context)
     */
    ByteBuffer map(int remoteKey, int length) throws RdmxException;

    /**
     * Copies bytes of the peer's region into a local one, if this side can reach that region itself: a region of
     * the peer's memory that the peer lets this connection read, mapped after the same checks as a WRITE's target.
     * Anything else (a region backed by a file of the peer's choosing, an unknown or released key, a range outside
     * the region) is not this side's to judge: the READ then goes to the peer as a request frame, and the peer
     * answers or refuses it. Called under the connection's send lock, by the posting thread.
     *
     * @param remoteKey the source region's key
     * @param remoteOffset offset in the source
     * @param dst the local target
     * @param dstOffset offset in the target
     * @param length bytes
     * @return true if copied; false if nothing was read here (send the request)
     */
    default boolean read(int remoteKey, long remoteOffset, RegionImpl dst, int dstOffset, int length) {
        return false;
    }

    /** Forgets the mappings (they are unmapped once no view of them is reachable). */
    void close();
}
