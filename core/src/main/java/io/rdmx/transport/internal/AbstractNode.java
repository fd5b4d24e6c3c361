package io.rdmx.transport.internal;

import io.rdmx.transport.Access;
import io.rdmx.transport.Connection;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.PeerNotListeningException;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RdmxTimeoutException;
import io.rdmx.transport.Region;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.capability.InputFollowing;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** What every provider's node shares: regions and keys, the connection table, the accept queue, the CQ. */
public abstract class AbstractNode implements Node {
    private static final Logger LOG = LoggerFactory.getLogger(AbstractNode.class);
    private static final Object CLOSED_SENTINEL = new Object();
    private static final SecureRandom KEYS = new SecureRandom();

    private final Fabric fabric;
    private final NodeOptions options;
    private final CompletionQueueImpl cq;
    private final ConcurrentHashMap<Integer, RegionImpl> regions = new ConcurrentHashMap<>();
    /** Names of live regions (guarded by itself). */
    private final Set<String> names = new HashSet<>();
    private final AtomicLong registrations = new AtomicLong();
    private final ConcurrentHashMap<String, AbstractConnection> connections = new ConcurrentHashMap<>();
    /** The only connection in {@link #connections}, or null (none, or several); written under its lock. */
    private volatile AbstractConnection soleConnection;
    private final LinkedBlockingQueue<Object> acceptQueue;
    private final ConcurrentHashMap<String, CompletableFuture<AbstractConnection>> dialing = new ConcurrentHashMap<>();
    private final AtomicLong regionSeq = new AtomicLong();
    private final AtomicInteger pendingHandshakes = new AtomicInteger();
    /** Pending handshakes per source address (entries removed at zero). */
    private final ConcurrentHashMap<String, AtomicInteger> pendingBySource = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /**
     * @param fabric the provider
     * @param options validated options
     */
    protected AbstractNode(Fabric fabric, NodeOptions options) {
        this.fabric = fabric;
        this.options = options;
        this.cq = new CompletionQueueImpl(options.name());
        this.acceptQueue = new LinkedBlockingQueue<>(options.acceptBacklog() + 1);
    }

    /**
     * An accepted connection of a stream provider (shm, tcp) starts its handshake.
     *
     * @return false if {@link NodeOptions#maxPendingHandshakes()} are pending already (nothing was counted)
     */
    public boolean beginHandshake() {
        return beginHandshake(null) == null;
    }

    /**
     * An accepted connection of a stream provider starts its handshake: counted against the node-wide cap and,
     * for a connection from a network address, the cap per source address, so that one host holding idle sockets
     * cannot keep the peers of every other host out.
     *
     * @param source the peer's source address (an IP), or null where every peer is this host's (shm)
     * @return null if counted, else why not (names the cap and its key); nothing was counted then
     */
    public String beginHandshake(String source) {
        int max = options.maxPendingHandshakes();
        while (true) {
            int n = pendingHandshakes.get();
            if (n >= max) {
                return "too many pending handshakes (maxPendingHandshakes=" + max + ")";
            }
            if (pendingHandshakes.compareAndSet(n, n + 1)) {
                break;
            }
        }
        if (source != null) {
            int perSource = options.maxPendingHandshakesPerSource();
            AtomicInteger c = pendingBySource.computeIfAbsent(source, s -> new AtomicInteger());
            if (c.incrementAndGet() > perSource) {
                endHandshake(source);
                return "too many pending handshakes from " + source + " (maxPendingHandshakesPerSource="
                    + perSource + ")";
            }
        }
        return null;
    }

    /** An accepted connection's handshake ended (established, refused or lost). */
    public void endHandshake() {
        endHandshake(null);
    }

    /**
     * An accepted connection's handshake ended (established, refused or lost).
     *
     * @param source what {@link #beginHandshake(String)} was given
     */
    public void endHandshake(String source) {
        pendingHandshakes.decrementAndGet();
        if (source != null) {
            pendingBySource.computeIfPresent(source, (s, c) -> c.decrementAndGet() <= 0 ? null : c);
        }
    }

    /**
     * Whether one more accepted connection fits under {@link NodeOptions#maxConnections()} and, from a network
     * address, {@link NodeOptions#maxConnectionsPerSource()}.
     *
     * @param source the peer's source address, or null (shm)
     * @return null if it fits, else why not (names the cap and its key)
     */
    public String checkConnectionRoom(String source) {
        int all = 0;
        int fromSource = 0;
        for (AbstractConnection c : connections.values()) {
            if (c.isOpen() && c.accepted()) {
                all++;
                if (source != null && source.equals(c.source())) {
                    fromSource++;
                }
            }
        }
        if (all >= options.maxConnections()) {
            return "node '" + name() + "' has " + all + " accepted connections (maxConnections="
                + options.maxConnections() + ")";
        }
        if (source != null && fromSource >= options.maxConnectionsPerSource()) {
            return "node '" + name() + "' has " + fromSource + " accepted connections from " + source
                + " (maxConnectionsPerSource=" + options.maxConnectionsPerSource() + ")";
        }
        return null;
    }

    /** @return accepted connections in their handshake now */
    public int pendingHandshakes() {
        return pendingHandshakes.get();
    }

    /**
     * Memory handed out by a provider for a new region, and how to give it back. A provider whose hardware
     * assigns addresses and keys (verbs: {@code ibv_reg_mr}) passes them; the others leave {@code address} 0
     * and the node assigns a virtual address and keys.
     *
     * @param memory the memory
     * @param onDeregister gives it back
     * @param address the registered virtual address, or 0 to let the node choose
     * @param localKey the hardware local key (when {@code address} is not 0)
     * @param remoteKey the hardware remote key (when {@code address} is not 0)
     * @param handle the provider's own bookkeeping of the memory ({@link RegionImpl#handle()}), or null
     */
    public record Allocation(ByteBuffer memory, Runnable onDeregister, long address, int localKey, int remoteKey,
                             Object handle) {
        /**
         * Memory registered by the provider, without bookkeeping of its own.
         *
         * @param memory the memory
         * @param onDeregister gives it back
         * @param address the registered virtual address
         * @param localKey the hardware local key
         * @param remoteKey the hardware remote key
         */
        public Allocation(ByteBuffer memory, Runnable onDeregister, long address, int localKey, int remoteKey) {
            this(memory, onDeregister, address, localKey, remoteKey, null);
        }

        /**
         * Memory whose address and keys the node assigns.
         *
         * @param memory the memory
         * @param onDeregister gives it back
         */
        public Allocation(ByteBuffer memory, Runnable onDeregister) {
            this(memory, onDeregister, 0, 0, 0, null);
        }
    }

    /**
     * Allocates memory a peer can reach for a new region.
     *
     * @param length bytes
     * @param access access flags
     * @param remoteKey the key chosen for the region
     * @return the memory
     * @throws RdmxException if it cannot be allocated
     */
    protected abstract Allocation allocate(int length, int access, int remoteKey) throws RdmxException;

    /**
     * Allocates memory for a region granted to one connection ({@link Connection#register}). A provider whose
     * peers reach regions by themselves (shm: they map the region's file) places it where only that connection's
     * peer looks; the default allocates as {@link #allocate(int, int, int)}.
     *
     * @param length bytes
     * @param access access flags
     * @param remoteKey the key chosen for the region
     * @param grantee the connection the region is granted to
     * @return the memory
     * @throws RdmxException if it cannot be allocated
     */
    protected Allocation allocateGranted(int length, int access, int remoteKey, AbstractConnection grantee)
        throws RdmxException {
        return allocate(length, access, remoteKey);
    }

    /** Releases the provider's own resources (threads, sockets, files). Called once by {@link #close()}. */
    protected abstract void closeTransport();

    @Override
    public Fabric fabric() {
        return fabric;
    }

    @Override
    public String name() {
        return options.name();
    }

    @Override
    public NodeOptions options() {
        return options;
    }

    @Override
    public CompletionQueueImpl completionQueue() {
        return cq;
    }

    @Override
    public boolean isOpen() {
        return !closed;
    }

    /**
     * @throws RdmxException if the node is closed
     */
    protected void checkOpen() throws RdmxException {
        if (closed) {
            throw new RdmxException("node '" + name() + "' is closed");
        }
    }

    @Override
    public Region register(int length, int access) throws RdmxException {
        return register(length, access, "");
    }

    @Override
    public Region register(int length, int access, String name) throws RdmxException {
        return register(length, access, name, null);
    }

    /**
     * Registers a region granted to one connection: its remote key is honoured on that connection only, and it is
     * never listed in a setup message ({@link Connection#register}).
     *
     * @param length bytes
     * @param access access flags
     * @param grantee the connection, open and of this node
     * @return the region
     * @throws RdmxException if the memory cannot be allocated or the connection is closed
     */
    public Region registerGranted(int length, int access, AbstractConnection grantee) throws RdmxException {
        checkGrantee(grantee);
        return register(length, access, "", grantee);
    }

    /**
     * Maps a range of a file read-only, ready to become a region ({@link Node#registerFile}). The default suits every
     * provider whose peers reach regions through this process (loopback, shm, tcp): the mapping is the region's
     * memory, and releasing the region drops it (the garbage collector unmaps it once no READ answer still uses it;
     * the file is never deleted). A provider that registers memory with a NIC overrides it.
     *
     * @param mapped the range, mapped read-only
     * @param remoteKey the key chosen for the region
     * @param grantee the connection the region is granted to, or null for a node-wide region
     * @return the memory
     * @throws RdmxException if it cannot be registered
     */
    protected Allocation allocateFile(java.nio.MappedByteBuffer mapped, int remoteKey, AbstractConnection grantee)
        throws RdmxException {
        return new Allocation(mapped, () -> { });
    }

    @Override
    public Region registerFile(java.nio.file.Path file, long position, int length, String name) throws RdmxException {
        return registerFile(file, position, length, name, null);
    }

    /**
     * Registers a file range granted to one connection ({@link Connection#registerFile}).
     *
     * @param file the file
     * @param position where the range starts
     * @param length bytes
     * @param grantee the connection, open and of this node
     * @return the region
     * @throws RdmxException if the file cannot be mapped or the connection is closed
     */
    public Region registerFileGranted(java.nio.file.Path file, long position, int length, AbstractConnection grantee)
        throws RdmxException {
        checkGrantee(grantee);
        return registerFile(file, position, length, "", grantee);
    }

    private Region registerFile(java.nio.file.Path file, long position, int length, String name,
                                AbstractConnection grantee) throws RdmxException {
        checkOpen();
        if (file == null) {
            throw new IllegalArgumentException("file is null");
        }
        if (position < 0 || length <= 0) {
            throw new IllegalArgumentException("file range of " + file + " position=" + position + " length=" + length
                + ": the position must be at least 0 and the length at least 1");
        }
        RemoteRegion.checkName(name);
        java.nio.MappedByteBuffer mapped;
        // FileChannel is interruptible: an interrupted registering thread must not close a shared channel
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(file,
            java.nio.file.StandardOpenOption.READ)) {
            long size = ch.size();
            if (position > size - length) {
                throw new IllegalArgumentException("file range of " + file + " position=" + position + " length="
                    + length + " ends past the file's size=" + size);
            }
            mapped = ch.map(java.nio.channels.FileChannel.MapMode.READ_ONLY, position, length);
        } catch (java.io.IOException e) {
            throw new RdmxException("node '" + name() + "' cannot map " + file + " position=" + position + " length="
                + length + ": " + e, e);
        }
        synchronized (names) {
            if (!name.isEmpty() && !names.add(name)) {
                throw new IllegalArgumentException("node '" + name() + "' already has a live region named '" + name
                    + "'");
            }
        }
        try {
            return registerNamed(length, Access.REMOTE_READ, name, grantee, key -> allocateFile(mapped, key, grantee));
        } catch (RdmxException | RuntimeException | Error e) {
            forgetName(name);
            throw e;
        }
    }

    private void checkGrantee(AbstractConnection grantee) throws RdmxException {
        if (grantee.node() != this) {
            throw new IllegalArgumentException("connection to '" + grantee.peerName()
                + "' is not a connection of node '" + name() + "'");
        }
        if (!grantee.isOpen()) {
            throw new RdmxException("cannot grant a region to the closed connection to '" + grantee.peerName()
                + "' at node '" + name() + "'");
        }
    }

    /** Allocates the memory of a new region once its key is chosen. */
    @FunctionalInterface
    private interface Allocator {
        Allocation allocate(int remoteKey) throws RdmxException;
    }

    private Region register(int length, int access, String name, AbstractConnection grantee) throws RdmxException {
        checkOpen();
        if (length <= 0) {
            throw new IllegalArgumentException("region length=" + length + " must be positive");
        }
        Access.validate(access);
        RemoteRegion.checkName(name);
        synchronized (names) {
            if (!name.isEmpty() && !names.add(name)) {
                throw new IllegalArgumentException("node '" + name() + "' already has a live region named '" + name
                    + "'");
            }
        }
        try {
            return registerNamed(length, access, name, grantee, key -> grantee == null
                ? allocate(length, access, key) : allocateGranted(length, access, key, grantee));
        } catch (RdmxException | RuntimeException | Error e) {
            forgetName(name);
            throw e;
        }
    }

    private void forgetName(String name) {
        if (!name.isEmpty()) {
            synchronized (names) {
                names.remove(name);
            }
        }
    }

    private Region registerNamed(int length, int access, String name, AbstractConnection grantee,
                                 Allocator allocator) throws RdmxException {
        int key;
        do {
            key = KEYS.nextInt();
        } while (key == 0 || regions.containsKey(key));
        Allocation a = allocator.allocate(key);
        RegionImpl r;
        if (a.address() != 0) {
            r = new RegionImpl(this, a.memory(), a.address(), a.localKey(), a.remoteKey(), access, a.onDeregister(),
                name, registrations.incrementAndGet(), grantee, a.handle());
        } else {
            long address = (regionSeq.incrementAndGet()) << 31;
            r = new RegionImpl(this, a.memory(), address, key ^ 0x5a5a5a5a, key, access, a.onDeregister(), name,
                registrations.incrementAndGet(), grantee, a.handle());
        }
        regions.put(r.remoteKey(), r);
        return r;
    }

    /**
     * The live region a peer targets with this key on a connection, if that connection may reach it: remotely
     * writable, and exported node-wide or granted to that connection ({@link RegionImpl#reachableVia}). A key of a
     * region granted to another connection is refused exactly as a key that does not exist.
     *
     * @param remoteKey the key
     * @param via the connection the request came on (this node's side)
     * @return the region, or null
     */
    public RegionImpl lookupRemote(int remoteKey, Connection via) {
        RegionImpl r = regions.get(remoteKey);
        return r != null && r.reachableVia(via) ? r : null;
    }

    /**
     * Checks a peer's WRITE target. Returns null when allowed, else the reason.
     *
     * @param remoteKey key in the request
     * @param offset offset in the request
     * @param length length in the request
     * @param via the connection the request came on (this node's side)
     * @return null, or an explanation naming the values
     */
    public String checkRemoteWrite(int remoteKey, long offset, long length, Connection via) {
        RegionImpl r = lookupRemote(remoteKey, via);
        if (r == null) {
            return "no remotely writable region with rkey=0x" + Integer.toHexString(remoteKey) + " at node '"
                + name() + "' for peer '" + via.peerName() + "'";
        }
        if (offset < 0 || length < 0 || length > r.length() || offset > r.length() - length) {
            return "WRITE offset=" + offset + " length=" + length + " outside region rkey=0x"
                + Integer.toHexString(remoteKey) + " length=" + r.length() + " at node '" + name() + "'";
        }
        return null;
    }

    /**
     * The live region a peer READs with this key on a connection, if that connection may read it: remotely
     * readable ({@link Access#REMOTE_READ}), and exported node-wide or granted to that connection
     * ({@link RegionImpl#readableVia}). Any other key is refused exactly as a key that does not exist.
     *
     * @param remoteKey the key
     * @param via the connection the request came on (this node's side)
     * @return the region, or null
     */
    public RegionImpl lookupRemoteRead(int remoteKey, Connection via) {
        RegionImpl r = regions.get(remoteKey);
        return r != null && r.readableVia(via) ? r : null;
    }

    /**
     * Checks a peer's READ source. Returns null when allowed, else the reason (names the key, the values and this
     * node). The length is checked against the region, so a length past {@code maxTransferSize} of a peer that
     * ignores its own limit is refused by the bounds (no region is longer than an int).
     *
     * @param remoteKey key in the request
     * @param offset offset in the request
     * @param length length in the request
     * @param via the connection the request came on (this node's side)
     * @return null, or an explanation naming the values
     */
    public String checkRemoteRead(int remoteKey, long offset, long length, Connection via) {
        RegionImpl r = lookupRemoteRead(remoteKey, via);
        if (r == null) {
            return "no remotely readable region with rkey=0x" + Integer.toHexString(remoteKey) + " at node '"
                + name() + "' for peer '" + via.peerName() + "'";
        }
        if (offset < 0 || length < 0 || length > r.length() || offset > r.length() - length) {
            return "READ offset=" + offset + " length=" + length + " outside region rkey=0x"
                + Integer.toHexString(remoteKey) + " length=" + r.length() + " at node '" + name() + "'";
        }
        return null;
    }

    void deregister(RegionImpl r) {
        if (regions.remove(r.remoteKey(), r)) {
            forgetName(r.name());
        }
    }

    /**
     * @return descriptors of the live, remotely writable or readable regions exported to every peer (not those granted to one
     *     connection), in registration order, with their names: what a setup message lists
     */
    public List<RemoteRegion> exportedRegions() {
        List<RegionImpl> live = exportedRegionList();
        List<RemoteRegion> out = new ArrayList<>(live.size());
        for (RegionImpl r : live) {
            out.add(r.descriptor());
        }
        return out;
    }

    /**
     * @return the live, remotely writable or readable regions exported to every peer, in registration order: what a provider
     *     whose keys differ per connection describes to each peer itself ({@link #describe})
     */
    protected List<RegionImpl> exportedRegionList() {
        List<RegionImpl> live = new ArrayList<>();
        for (RegionImpl r : regions.values()) {
            if (r.live() && (r.access() & (Access.REMOTE_WRITE | Access.REMOTE_READ)) != 0 && r.grantee() == null) {
                live.add(r);
            }
        }
        live.sort(Comparator.comparingLong(RegionImpl::seq));
        return live;
    }

    /**
     * The descriptor of a region that the peer of one connection uses to reach it ({@link Region#descriptor(
     * Connection)}). The default is the region's own descriptor: its key is the same on every connection. A provider
     * whose NIC confines keys per connection (verbs: a protection domain per queue pair) returns that connection's
     * key.
     *
     * @param region a live region of this node, exported node-wide or granted to {@code via}
     * @param via the connection, of this node
     * @return the descriptor
     * @throws RdmxException if the provider cannot make the region reachable on that connection
     */
    protected RemoteRegion describe(RegionImpl region, AbstractConnection via) throws RdmxException {
        return region.descriptor();
    }

    @Override
    public Collection<Connection> connections() {
        return List.copyOf(connections.values());
    }

    /**
     * The live connection to a peer.
     *
     * @param peerName the peer
     * @return the connection or null
     */
    public AbstractConnection connectionTo(String peerName) {
        AbstractConnection c = connections.get(peerName);
        return c != null && c.isOpen() ? c : null;
    }

    /**
     * The live connection to the peer listening at this address, if that address is trusted
     * ({@link AbstractConnection#addressTrusted()}: dialed there, or proved under the secret); a connection whose
     * peer only claimed the address is not returned.
     *
     * @param address the peer's address
     * @return the connection or null
     */
    public AbstractConnection connectionAt(String address) {
        for (AbstractConnection c : connections.values()) {
            if (c.isOpen() && c.addressTrusted() && c.peerAddress().equals(address)) {
                return c;
            }
        }
        return null;
    }

    /**
     * Records a new connection, unless one to that peer exists (one connection per pair of nodes).
     *
     * @param c the connection
     * @return false when a live connection to the peer already exists
     */
    public boolean addConnection(AbstractConnection c) {
        while (true) {
            AbstractConnection prev = connections.putIfAbsent(c.peerName(), c);
            if (prev == null) {
                connectionsChanged();
                if (closed) {
                    c.close(); // a handshake that ended as the node closed: close() may not have seen it
                }
                return true;
            }
            if (prev.isOpen()) {
                return false;
            }
            if (connections.remove(c.peerName(), prev)) {
                connectionsChanged();
            }
        }
    }

    /** The connection table changed: the single connection a completion-queue waiter may read, if any. */
    private void connectionsChanged() {
        synchronized (connections) {
            AbstractConnection only = null;
            if (connections.size() == 1) {
                for (AbstractConnection c : connections.values()) {
                    only = c;
                }
            }
            soleConnection = only;
        }
    }

    /**
     * Leader/follower for the completion queue ({@link CompletionQueueImpl#followInput}): the input of this
     * node's only connection, if it has exactly one and it offers one now ({@link AbstractConnection#queueInput}).
     *
     * @return the input, or null
     */
    private InputFollowing queueInput() {
        AbstractConnection c = soleConnection;
        return c == null ? null : c.queueInput();
    }

    /**
     * Lets a thread waiting on the completion queue read the node's single connection's input itself (a provider
     * whose connections offer {@link AbstractConnection#followableInput} calls it once, when the node opens).
     */
    protected final void followInputFromQueue() {
        cq.followInput(this::queueInput);
    }

    /**
     * Forgets a connection.
     *
     * @param c the connection
     */
    public void removeConnection(AbstractConnection c) {
        if (connections.remove(c.peerName(), c)) {
            connectionsChanged();
        }
    }

    /**
     * Hands a passively opened connection to {@link #accept}.
     *
     * @param c the connection
     * @return false when the backlog is full
     */
    public boolean offerAccepted(AbstractConnection c) {
        return acceptQueue.remainingCapacity() > 1 && acceptQueue.offer(c);
    }

    /** Starts a provider's connection attempt; what {@link #dialOnce} needs of it. */
    @FunctionalInterface
    protected interface Dialer {
        /**
         * Starts connecting; completes {@code future} with the connection or an {@link RdmxException}.
         *
         * @param future to complete
         * @param deadlineNanos when the caller gives up ({@code System.nanoTime()} scale)
         * @return what to do if the caller gives up (timeout, interrupt): release what the attempt holds
         * @throws RdmxException if the attempt cannot start
         */
        Runnable start(CompletableFuture<AbstractConnection> future, long deadlineNanos) throws RdmxException;
    }

    /**
     * The shared part of {@link #connect}: the existing connection to that address if there is one; else one
     * attempt per address at a time (concurrent callers wait for the same attempt), bounded by the timeout,
     * with errors that name this node and the address.
     *
     * @param peerAddress the peer's address, already validated by the provider
     * @param timeout bound on the whole setup
     * @param dialer starts the provider's attempt
     * @return the connection
     * @throws RdmxException on failure or timeout ({@link RdmxTimeoutException})
     */
    protected AbstractConnection dialOnce(String peerAddress, Duration timeout, Dialer dialer) throws RdmxException {
        checkOpen();
        AbstractConnection existing = connectionAt(peerAddress);
        if (existing != null) {
            return existing;
        }
        if (peerAddress.equals(address())) {
            throw new RdmxException("node '" + name() + "' cannot connect to itself (address=" + peerAddress + ")");
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        CompletableFuture<AbstractConnection> mine = new CompletableFuture<>();
        CompletableFuture<AbstractConnection> f = dialing.putIfAbsent(peerAddress, mine);
        Runnable abandon = () -> { };
        if (f == null) {
            f = mine;
            // a dial that finished between the look above and this claim left its connection behind: it was
            // recorded before its future completed, so before its entry here was removed
            existing = connectionAt(peerAddress);
            if (existing != null) {
                mine.complete(existing);
            } else {
                try {
                    abandon = dialer.start(mine, deadline);
                } catch (RdmxException e) {
                    mine.completeExceptionally(e);
                }
            }
        }
        try {
            return f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            RdmxTimeoutException t = new RdmxTimeoutException("connect from '" + name() + "' to address="
                + peerAddress + " timed out after " + timeout.toMillis() + " ms");
            if (f == mine) {
                mine.completeExceptionally(t);
                abandon.run();
            }
            throw t;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            if (f == mine) {
                mine.completeExceptionally(new RdmxException("connect interrupted"));
                abandon.run();
            }
            throw new RdmxException("connect from '" + name() + "' to address=" + peerAddress + " interrupted");
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof RdmxTimeoutException) {
                throw new RdmxTimeoutException(c.getMessage());
            }
            if (c instanceof PeerNotListeningException) {
                throw new PeerNotListeningException(c.getMessage(), c);
            }
            if (c instanceof RdmxException) {
                throw new RdmxException(c.getMessage() + untrustedClaim(peerAddress), c);
            }
            throw new RdmxException("connect from '" + name() + "' to address=" + peerAddress + " failed: " + c, c);
        } finally {
            if (f == mine) {
                dialing.remove(peerAddress, mine);
            }
        }
    }

    /** Why a dial may have met a connection this node holds already: a peer that only claimed the address. */
    private String untrustedClaim(String address) {
        for (AbstractConnection c : connections.values()) {
            if (c.isOpen() && !c.addressTrusted() && c.peerAddress().equals(address)) {
                return " (node '" + name() + "' has a connection from a peer that calls itself '" + c.peerName()
                    + "' and claims address=" + address + "; without a cluster secret a claimed address is never"
                    + " reused for a dial: see docs/security.md)";
            }
        }
        return "";
    }

    /**
     * Fails every connection attempt in progress; providers call it when they close.
     *
     * @param why the reason, naming this node
     */
    protected void failDialing(String why) {
        RdmxException closed = new RdmxException(why);
        for (CompletableFuture<AbstractConnection> f : dialing.values()) {
            f.completeExceptionally(closed);
        }
    }

    @Override
    public Connection accept(Duration timeout) throws RdmxException, InterruptedException {
        checkOpen();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long remaining = deadline - System.nanoTime();
            Object o = acceptQueue.poll(Math.max(0, remaining), TimeUnit.NANOSECONDS);
            if (o == null) {
                throw new RdmxTimeoutException("no connection accepted by node '" + name() + "' within "
                    + timeout.toMillis() + " ms");
            }
            if (o == CLOSED_SENTINEL) {
                acceptQueue.offer(CLOSED_SENTINEL);
                throw new RdmxException("node '" + name() + "' is closed");
            }
            AbstractConnection c = (AbstractConnection) o;
            if (c.isOpen()) {
                return c;
            }
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (AbstractConnection c : connections.values()) {
            c.close();
        }
        acceptQueue.clear();
        acceptQueue.offer(CLOSED_SENTINEL);
        for (RegionImpl r : List.copyOf(regions.values())) {
            r.forceRelease();
        }
        try {
            closeTransport();
        } catch (RuntimeException e) {
            LOG.warn("node '{}': error while closing the {} transport", name(), fabric.name(), e);
        }
        cq.close();
    }

    @Override
    public String toString() {
        return fabric.name() + " node '" + name() + "' at " + address();
    }
}
