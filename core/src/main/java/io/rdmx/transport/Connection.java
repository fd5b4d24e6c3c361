package io.rdmx.transport;

import io.rdmx.transport.capability.Capability;
import java.util.List;
import java.util.Optional;

/**
 * The one connection (reliable queue pair) between this node and a peer, shared by every thread.
 *
 * <p>The public surface is the verbs model: regions, {@link #post}, {@link #prepare}, state. What a provider
 * offers beyond it for rdmx's own fast paths (a peer's memory mapped here, bells, inline completions,
 * leader/follower input, corking) is not on this interface: it is reached through the one lookup
 * {@link #capability(Class)}, which returns one of the small interfaces of {@link io.rdmx.transport.capability}
 * or empty.
 */
public interface Connection extends AutoCloseable {
    /** @return the local node */
    Node node();

    /** @return the peer's node name */
    String peerName();

    /** @return the peer's listening address */
    String peerAddress();

    /**
     * @return the descriptors of the peer's remotely writable or readable regions, as exchanged at setup, in the order
     *     the peer registered them
     */
    List<RemoteRegion> remoteRegions();

    /**
     * The peer's remotely writable or readable region registered under this name ({@link Node#register(int, int, String)}).
     *
     * @param name the name
     * @return its descriptor, as exchanged at setup
     * @throws IllegalArgumentException naming the peer, the name and the names the peer does export, if none
     *     matches (the region is neither remotely writable nor readable, was registered after this connection was set up, or the
     *     name is wrong)
     */
    default RemoteRegion remoteRegion(String name) {
        List<RemoteRegion> all = remoteRegions();
        StringBuilder names = new StringBuilder();
        int unnamed = 0;
        for (RemoteRegion r : all) {
            if (r.name().equals(name)) {
                return r;
            }
            if (r.name().isEmpty()) {
                unnamed++;
            } else {
                names.append(names.length() == 0 ? "" : ", ").append('\'').append(r.name()).append('\'');
            }
        }
        throw new IllegalArgumentException("peer '" + peerName() + "' exports no region named '" + name
            + "' (named: " + (names.length() == 0 ? "none" : names) + "; unnamed: " + unnamed
            + "); only regions registered with REMOTE_WRITE or REMOTE_READ before the connection was set up are"
            + " exported");
    }

    /**
     * Allocates and registers off-heap memory that this connection's peer alone may reach: its remote key is
     * honoured on this connection only (a WRITE naming it on any other connection completes
     * {@link Status#REMOTE_ACCESS_ERROR}, exactly as an unknown key), and it is never listed in a setup message:
     * tell the peer its {@link Region#descriptor()} yourself (the channel layer sends its pair region this way). This
     * is how a region is granted to one peer; {@link Node#register(int, int, String)} is the explicit choice of a
     * region every peer of the node may reach. On verbs and disni the NIC confines the key (the region is registered
     * in this queue pair's own protection domain only). Where a provider cannot confine keys
     * ({@link Fabric#scopesRegions()} false), the key is still told to this peer only, but a peer that guesses it is
     * not stopped.
     *
     * @param length bytes, at least 1
     * @param access {@link Access} flags
     * @return the region, reference count 1; released by its owner as any region (closing the connection does not
     *     release it, but no peer can reach it any more)
     * @throws RdmxException if the memory cannot be allocated or registered, or the connection is closed
     */
    Region register(int length, int access) throws RdmxException;

    /**
     * Registers a range of a file, mapped read-only, that this connection's peer alone may {@link Opcode#READ}:
     * {@link Node#registerFile} granted as {@link #register(int, int)} grants memory (the key is honoured on this
     * connection only, never listed in a setup message).
     *
     * @param file an existing regular file
     * @param position where the range starts in the file
     * @param length bytes, at least 1, within the file
     * @return the region, reference count 1
     * @throws IllegalArgumentException for a range outside the file
     * @throws RdmxException if the file cannot be mapped or registered, or the connection is closed
     * @throws UnsupportedOperationException where the provider cannot register files (naming it)
     */
    default Region registerFile(java.nio.file.Path file, long position, int length) throws RdmxException {
        throw new UnsupportedOperationException("provider '" + node().fabric().name() + "' cannot register files");
    }

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

    /**
     * A fast-path capability of this connection, if its provider offers it: transport internals that rdmx's own
     * layers use beside {@link #post} (mapping the peer's memory, bells, inline completions, leader/follower
     * input, corking; see {@link io.rdmx.transport.capability}), kept off this interface as Netty keeps
     * {@code Channel.Unsafe} off user code. Look it up once, at setup, and keep it; the lookup may allocate. A
     * provider that lacks a capability returns empty (the default), and the caller keeps its fallback (WRITEs,
     * notification messages, the completion queue, sleeping, one write per request). Any thread.
     *
     * @param type the capability's interface, e.g. {@link io.rdmx.transport.capability.RemoteMapping}
     * @param <T> the capability
     * @return the capability, or empty if this connection does not offer it
     */
    default <T extends Capability> Optional<T> capability(Class<T> type) {
        return Optional.empty();
    }

    /** @return true until the connection is closed or broken */
    boolean isOpen();

    /** @return why the connection went down, or null while open */
    Throwable closeCause();

    /** Closes the connection; outstanding requests complete as {@link Status#FLUSHED}. Idempotent. */
    @Override
    void close();
}
