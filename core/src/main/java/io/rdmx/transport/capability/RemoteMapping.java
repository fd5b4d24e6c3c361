package io.rdmx.transport.capability;

import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RemoteRegion;
import java.nio.ByteBuffer;

/**
 * Maps the peer's memory into this process. Offered by providers whose peers share this host's memory
 * ({@code shm}, {@code loopback}); RDMA providers and {@code tcp} do not, and their users keep to WRITEs. That a
 * connection offers it is what {@code canMapRemote} used to say.
 */
public interface RemoteMapping extends Capability {
    /**
     * A view, in this process, of the peer's remotely writable region. Stores into it land in the peer's memory
     * with no work request and no completion; loads see the peer's stores. Ordering between the two processes is
     * the caller's business (release stores and acquire loads on the view; see {@code io.rdmx.transport.internal}).
     * The view stays valid (memory nobody reads) after the peer deregisters the region or dies; the connection's
     * failure is what tells the caller. Any thread.
     *
     * @param region the descriptor of one of the peer's remotely writable regions
     * @return a little-endian view of the whole region (position 0, limit its length)
     * @throws RdmxException if this region cannot be mapped (names the peer and the key: absent, shorter than the
     *                       descriptor says, or not trusted), or the connection is closed
     */
    ByteBuffer mapRemote(RemoteRegion region) throws RdmxException;
}
