package io.rdmx.transport;

import java.nio.ByteBuffer;
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

    /**
     * @return the descriptors of the peer's remotely writable regions, as exchanged at setup, in the order the peer
     *     registered them
     */
    List<RemoteRegion> remoteRegions();

    /**
     * The peer's remotely writable region registered under this name ({@link Node#register(int, int, String)}).
     *
     * @param name the name
     * @return its descriptor, as exchanged at setup
     * @throws IllegalArgumentException naming the peer, the name and the names the peer does export, if none
     *     matches (the region is not remotely writable, was registered after this connection was set up, or the
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
            + "); only regions registered with REMOTE_WRITE before the connection was set up are exported");
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
     * Optional capability: whether {@link #mapRemote} can map the peer's memory into this process. Providers
     * whose peers share this host's memory say yes ({@code shm}, {@code loopback}); RDMA and {@code tcp}
     * providers do not, and their users keep to WRITEs.
     *
     * @return true if {@link #mapRemote} returns views
     */
    default boolean canMapRemote() {
        return false;
    }

    /**
     * Optional capability: a view, in this process, of the peer's remotely writable region. Stores into it land
     * in the peer's memory with no work request and no completion; loads see the peer's stores. Ordering between
     * the two processes is the caller's business (release stores and acquire loads on the view; see
     * {@code io.rdmx.transport.internal}). The view stays valid (memory nobody reads) after the peer deregisters
     * the region or dies; the connection's failure is what tells the caller. Any thread.
     *
     * @param region the descriptor of one of the peer's remotely writable regions
     * @return a little-endian view of the whole region (position 0, limit its length), or null if this provider
     *         cannot map a peer's memory ({@link #canMapRemote()} is false)
     * @throws RdmxException if the provider maps memory but not this region (names the peer and the key: absent,
     *                       shorter than the descriptor says, or not trusted)
     */
    default ByteBuffer mapRemote(RemoteRegion region) throws RdmxException {
        return null;
    }

    /**
     * Optional capability: opens a {@link Bell}, a line on which the peer wakes one sleeping thread of this process
     * by writing a byte ({@link #ringBell} on its side, given the bell's {@link Bell#slot()}). Providers whose
     * peers share this host ({@code shm}) offer it, on connections they authenticated; others return null and
     * their users keep to notification messages. Setup, not the data path: dials the peer and waits for its
     * answer (at most the node's handshake timeout). The bell closes with this connection, and when the peer
     * closes or dies.
     *
     * @return the bell, or null if this provider has no bells
     * @throws RdmxException if the provider has bells but cannot open one now (names the peer)
     */
    default Bell openBell() throws RdmxException {
        return null;
    }

    /**
     * Optional capability: wakes the peer's thread that sleeps on the bell with this slot (one non-blocking write
     * of a byte; a full socket means a wake-up is pending already). Any thread; nothing allocated.
     *
     * @param slot the bell's slot, as the peer announced it
     * @return true if rung; false if this connection has no such bell (the caller wakes the peer another way)
     */
    default boolean ringBell(int slot) {
        return false;
    }

    /**
     * Optional capability: delivers this connection's completions to a handler on the thread that produces them
     * (see {@link InlineCompletionHandler}) instead of the node's {@link CompletionQueue}. Install it before
     * posting the first request; completions produced before it stay on the queue. A provider that cannot
     * deliver inline returns false and keeps using the queue (the default), so a caller must drain the queue
     * either way.
     *
     * @param handler the handler, or null to go back to the queue
     * @return true if the provider delivers to the handler from now on; false if it keeps to the queue
     */
    default boolean completionHandler(InlineCompletionHandler handler) {
        return false;
    }

    /**
     * Optional capability, leader/follower input: the calling thread, which waits for something this connection's
     * input brings, reads the connection's socket and handles what came itself (completions are delivered on this
     * thread, as on the provider's I/O thread), instead of sleeping until the I/O thread has read it and woken
     * it. Only while no other thread reads it; the provider's I/O thread does not watch the socket meanwhile.
     * Returns at once if something was read, else after data came, {@link #wakeInput()}, the peer closed, or the
     * timeout.
     *
     * @param nanos the longest wait; 0 or less reads what is there and returns at once (a spinning waiter's look),
     *              and only while waiting threads hold the input (else -1: the I/O thread reads it)
     * @return bytes read and handled (0: nothing within the wait, or woken), or -1 if the provider does not offer
     *         this or another thread reads the socket now (then the caller sleeps as usual)
     */
    default int awaitInput(long nanos) {
        return -1;
    }

    /**
     * Optional capability: requests posted from now until {@link #uncork} may be held and handed to the medium
     * together when the last uncork comes (a socket provider writes their frames in one system call; the verbs
     * post-list idea). Posting threads call it around requests they post back to back (a channel's WRITE and
     * its notification). Nests; every cork needs its uncork, in a finally block. Other threads' requests posted
     * meanwhile are held too, in order. Default: nothing is held.
     */
    default void cork() {
    }

    /** Ends a {@link #cork}: at the last one, what it held goes out now. */
    default void uncork() {
    }

    /** Ends an {@link #awaitInput} now, or the next one at once (no lost wake-up). Any thread. */
    default void wakeInput() {
    }

    /**
     * Optional capability, with {@link #awaitInput}: the calling thread is about to sleep until something this
     * connection's input brings, without reading the socket itself (a writer waiting for credits). Threads that
     * waited in {@link #awaitInput} hold the input for a moment after they return (the provider's I/O thread does
     * not read it meanwhile); this reads what is there and hands the input back to the I/O thread at once, so
     * nothing that comes while the caller sleeps waits for them.
     *
     * @return bytes read and handled (0: none, or nothing held)
     */
    default int releaseInput() {
        return 0;
    }

    /** @return true until the connection is closed or broken */
    boolean isOpen();

    /** @return why the connection went down, or null while open */
    Throwable closeCause();

    /** Closes the connection; outstanding requests complete as {@link Status#FLUSHED}. Idempotent. */
    @Override
    void close();
}
