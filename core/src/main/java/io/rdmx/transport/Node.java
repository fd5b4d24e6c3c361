package io.rdmx.transport;

import java.time.Duration;
import java.util.Collection;

/**
 * A local endpoint of a fabric: it listens, connects, registers memory, and owns one completion queue.
 * Thread-safe. Closing it closes every connection (peers see the close), releases every region and wakes
 * every waiter.
 */
public interface Node extends AutoCloseable {
    /** @return the provider */
    Fabric fabric();

    /** @return this node's name */
    String name();

    /** @return the address peers pass to {@link #connect} */
    String address();

    /** @return the options the node was opened with */
    NodeOptions options();

    /**
     * Allocates and registers off-heap memory.
     *
     * @param length bytes, at least 1
     * @param access {@link Access} flags; regions with {@link Access#REMOTE_WRITE} or {@link Access#REMOTE_READ} are
     *               exported to peers
     * @return the region, reference count 1
     * @throws RdmxException if the memory cannot be allocated or registered
     */
    Region register(int length, int access) throws RdmxException;

    /**
     * Allocates and registers off-heap memory under a name. A remotely writable region's name travels with its
     * descriptor at connection setup, so a peer finds it with {@link Connection#remoteRegion(String)} instead of
     * relying on the order of {@link Connection#remoteRegions()}.
     *
     * @param length bytes, at least 1
     * @param access {@link Access} flags; regions with {@link Access#REMOTE_WRITE} are exported to peers
     * @param name at most {@link RemoteRegion#MAX_NAME_BYTES} bytes of UTF-8, unique among this node's live regions;
     *             {@code ""} registers an unnamed region, like {@link #register(int, int)}
     * @return the region, reference count 1
     * @throws IllegalArgumentException if the name is too long, has control characters, or is taken
     * @throws RdmxException if the memory cannot be allocated or registered
     */
    Region register(int length, int access, String name) throws RdmxException;

    /**
     * Registers a range of a file, mapped read-only, that every peer of this node may {@link Opcode#READ} (a node's
     * peers are those its secret admits): a map output file granted to the peers of an application without copying
     * it. The region's access is {@link Access#REMOTE_READ} alone: it cannot be the target of a WRITE, a RECV or a
     * READ. Its {@link Region#buffer()} is read-only. The file must not shrink while registered (a mapped range past
     * its end faults); releasing the region drops the mapping (unmapped once nothing uses it, such as a READ's answer
     * still being written on tcp) and leaves the file alone.
     *
     * @param file an existing regular file
     * @param position where the range starts in the file, at least 0
     * @param length bytes, at least 1, with {@code position + length} within the file's size
     * @param name as for {@link #register(int, int, String)}
     * @return the region, reference count 1
     * @throws IllegalArgumentException for a range outside the file or a bad name (naming the file and the values)
     * @throws RdmxException if the file cannot be opened, mapped or registered
     * @throws UnsupportedOperationException where the provider cannot register files (naming it)
     */
    default Region registerFile(java.nio.file.Path file, long position, int length, String name)
        throws RdmxException {
        throw new UnsupportedOperationException("provider '" + fabric().name() + "' cannot register files");
    }

    /**
     * Connects to a node, or returns the existing connection to it (one per pair of nodes).
     *
     * @param address the peer's {@link #address()}
     * @param timeout bound on the whole setup (connect and handshake)
     * @return the connection
     * @throws RdmxTimeoutException if the setup does not finish in time
     * @throws RdmxException if the peer refuses or cannot be reached (the message says why)
     */
    Connection connect(String address, Duration timeout) throws RdmxException;

    /**
     * Takes the next connection a peer opened to this node.
     *
     * @param timeout how long to wait
     * @return the connection
     * @throws RdmxTimeoutException if none arrives in time
     * @throws RdmxException if the node is closed
     * @throws InterruptedException if interrupted
     */
    Connection accept(Duration timeout) throws RdmxException, InterruptedException;

    /** @return the node's completion queue */
    CompletionQueue completionQueue();

    /** @return the open connections */
    Collection<Connection> connections();

    /** @return true until closed */
    boolean isOpen();

    /** Closes the node. Idempotent. */
    @Override
    void close();
}
