package io.rdmx.transport.internal;

import io.rdmx.transport.Access;
import io.rdmx.transport.Completion;
import io.rdmx.transport.Connection;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.InlineCompletionHandler;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.Post;
import io.rdmx.transport.PreparedRequest;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Region;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.Status;
import io.rdmx.transport.WorkRequest;
import io.rdmx.transport.capability.Capability;
import io.rdmx.transport.capability.InlineCompletions;
import io.rdmx.transport.capability.InputFollowing;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

/**
 * What every provider's connection shares: request validation, the receive queue, the state machine
 * (open, then down with a cause), flushing, and prepared requests.
 */
public abstract class AbstractConnection implements Connection, InlineCompletions, CompletionBacklog.Sink {
    /**
     * A posted receive buffer, as {@link #takeRecv(Recv)} hands it over: a holder the taking thread keeps and
     * refills, so that a receive costs no object.
     */
    public static final class Recv {
        private long wrId;
        private RegionImpl region;
        private int offset;
        private int length;

        /** @return the receive's work-request id */
        public long wrId() {
            return wrId;
        }

        /** @return the buffer's region */
        public RegionImpl region() {
            return region;
        }

        /** @return the buffer's offset in its region */
        public int offset() {
            return offset;
        }

        /** @return the buffer's length */
        public int length() {
            return length;
        }

        @Override
        public String toString() {
            return "Recv[wrId=" + wrId + ", offset=" + offset + ", length=" + length + "]";
        }
    }

    /** The address {@link #acceptedFrom()} gives a peer that is a process of this host. */
    public static final String LOCAL_PEER = "127.0.0.1";

    /** The node. */
    protected final AbstractNode node;
    /** See {@link #addressTrusted()}. */
    private volatile boolean addressTrusted;
    /** The source address of an accepted network connection, or null. */
    private volatile String source;
    /** Set for a connection a peer opened to this node ({@link #accepted(String)}). */
    private volatile boolean accepted;
    private final String peerName;
    private final String peerAddress;
    private volatile List<RemoteRegion> remoteRegions;
    /**
     * The posted receives, oldest first, in a circular queue of parallel arrays (no object per receive): it grows
     * by doubling up to the receive queue depth, so a steady state allocates nothing. Guarded by recvLock.
     */
    private final Object recvLock = new Object();
    private long[] recvWrIds = new long[4];
    private RegionImpl[] recvRegions = new RegionImpl[4];
    private int[] recvOffsets = new int[4];
    private int[] recvLengths = new int[4];
    private int recvFirst;
    private int recvCount;
    /** Null while the connection is open; set once, by the first {@link #fail}: down and its cause in one step. */
    private final AtomicReference<Throwable> closeCause = new AtomicReference<>();
    /** Serializes the calls of {@link #inline}; never held while a provider lock is taken first. */
    private final Object inlineLock = new Object();
    private volatile InlineCompletionHandler inline;
    /** Completions {@link #emitLater queued} and not yet handed over. */
    private final CompletionBacklog backlog = new CompletionBacklog();

    /**
     * @param node the local node
     * @param peerName the peer's name
     * @param peerAddress the peer's address
     * @param remoteRegions the peer's exported regions
     */
    protected AbstractConnection(AbstractNode node, String peerName, String peerAddress,
                                 List<RemoteRegion> remoteRegions) {
        this.node = node;
        this.peerName = peerName;
        this.peerAddress = peerAddress;
        this.remoteRegions = List.copyOf(remoteRegions);
    }

    @Override
    public AbstractNode node() {
        return node;
    }

    /**
     * Whether a dial to {@link #peerAddress()} may return this connection: true once this side dialed that address
     * itself, or the peer proved the address under the cluster secret. An address a peer merely claimed (an
     * accepted connection without a secret) is never trusted, so no peer can take over another node's address.
     *
     * @return true if the address is trusted
     */
    public final boolean addressTrusted() {
        return addressTrusted;
    }

    /** @return the source address an accepted network connection came from, or null */
    public final String source() {
        return source;
    }

    /**
     * Where the peer of an accepted connection really is, as this node's transport established it, never as the peer
     * claims it: the IP address its socket came from ({@link #source()}), or the loopback address where the provider
     * accepted the peer as a process of this host ({@code accepted(null)}: shm's Unix socket, whose peer's user the
     * kernel reported). Null for a connection this node dialed, or one no provider marked accepted (loopback, verbs,
     * disni): the peer's network address is not known.
     *
     * @return an IP address literal (or what the provider could tell, which a caller parses strictly), or null
     */
    public final String acceptedFrom() {
        if (!accepted) {
            return null;
        }
        String s = source;
        return s != null ? s : LOCAL_PEER;
    }

    /** @return true for a connection a peer opened to this node (counted against the node's connection caps) */
    public final boolean accepted() {
        return accepted;
    }

    /**
     * Marks a connection a peer opened to this node.
     *
     * @param from the source address it came from (counted against the caps per source,
     *     {@link io.rdmx.transport.NodeOptions#maxConnectionsPerSource()}), or null where every peer is of this
     *     host (shm)
     */
    public final void accepted(String from) {
        this.source = from;
        this.accepted = true;
    }

    /** The provider established that the peer is at {@link #peerAddress()} (dialed, or proved under the secret). */
    public final void trustAddress() {
        addressTrusted = true;
    }

    @Override
    public Region register(int length, int access) throws RdmxException {
        return node.registerGranted(length, access, this);
    }

    @Override
    public Region registerFile(java.nio.file.Path file, long position, int length) throws RdmxException {
        return node.registerFileGranted(file, position, length, this);
    }

    @Override
    public String peerName() {
        return peerName;
    }

    @Override
    public String peerAddress() {
        return peerAddress;
    }

    @Override
    public List<RemoteRegion> remoteRegions() {
        return remoteRegions;
    }

    @Override
    public boolean isOpen() {
        return closeCause.get() == null;
    }

    @Override
    public Throwable closeCause() {
        return closeCause.get();
    }

    /**
     * @throws ConnectionClosedException naming the peer if the connection is down
     */
    protected void checkOpen() throws ConnectionClosedException {
        Throwable c = closeCause.get();
        if (c != null) {
            throw new ConnectionClosedException(peerName, "connection from '" + node.name() + "' to peer '"
                + peerName + "' is closed" + (c.getMessage() == null ? "" : ": " + c.getMessage()), c);
        }
    }

    @Override
    public final int post(WorkRequest wr) throws ConnectionClosedException {
        Opcode op = wr.opcode();
        RegionImpl local = validate(wr.opcode(), wr.local(), wr.remote());
        return postValidated(op, wr.wrId(), local, wr.localOffset(), wr.length(), wr.remote(), wr.remoteOffset(),
            wr.immediate(), wr.signaled());
    }

    private RegionImpl validate(Opcode op, Object local, RemoteRegion remote) {
        if (op == null) {
            throw new IllegalArgumentException("work request without opcode");
        }
        if (!(local instanceof RegionImpl) || ((RegionImpl) local).node() != node) {
            throw new IllegalArgumentException("local region " + local + " is not registered with node '"
                + node.name() + "'");
        }
        RegionImpl r = (RegionImpl) local;
        if ((op == Opcode.WRITE || op == Opcode.WRITE_WITH_IMM || op == Opcode.READ) && remote == null) {
            throw new IllegalArgumentException(op + " needs a remote region");
        }
        if ((op == Opcode.RECV || op == Opcode.READ) && (r.access() & Access.LOCAL_WRITE) == 0) {
            throw new IllegalArgumentException(op + " into region rkey=0x" + Integer.toHexString(r.remoteKey())
                + " without LOCAL_WRITE access");
        }
        return r;
    }

    private int postValidated(Opcode op, long wrId, RegionImpl local, int localOffset, int length,
                              RemoteRegion remote, long remoteOffset, int imm, boolean signaled)
        throws ConnectionClosedException {
        try {
            local.checkLocal(localOffset, length);
        } catch (IllegalStateException released) {
            checkOpen(); // a node's close closes its connections, then releases their regions: say which it was
            throw released;
        }
        int max = node.options().maxTransferSize();
        if (length > max) {
            throw new IllegalArgumentException(op + " length=" + length + " exceeds maxTransferSize=" + max);
        }
        if (op != Opcode.RECV && op != Opcode.SEND && remoteOffset < 0) {
            throw new IllegalArgumentException(op + " remoteOffset=" + remoteOffset + " is negative");
        }
        checkOpen();
        if (op == Opcode.RECV) {
            return postRecv(wrId, local, localOffset, length);
        }
        return postSendQueue(op, wrId, local, localOffset, length, remote, remoteOffset, imm, signaled);
    }

    /**
     * Posts a receive already validated locally. This default queues it for the provider's I/O thread
     * ({@link #takeRecv}); a provider with a hardware receive queue posts it there instead.
     *
     * @param wrId id
     * @param local the buffer's region
     * @param localOffset offset
     * @param length bytes
     * @return {@link Post#OK} or {@link Post#RECV_QUEUE_FULL}
     * @throws ConnectionClosedException if the connection is down
     */
    protected int postRecv(long wrId, RegionImpl local, int localOffset, int length) throws ConnectionClosedException {
        synchronized (recvLock) {
            if (recvCount >= node.options().recvQueueDepth()) {
                return Post.RECV_QUEUE_FULL;
            }
            if (recvCount == recvWrIds.length) {
                growRecvs();
            }
            int i = (recvFirst + recvCount) & (recvWrIds.length - 1);
            recvWrIds[i] = wrId;
            recvRegions[i] = local;
            recvOffsets[i] = localOffset;
            recvLengths[i] = length;
            recvCount++;
        }
        onRecvPosted();
        if (closeCause.get() != null) {
            flushRecvs();
        }
        return Post.OK;
    }

    /**
     * Posts a send-queue request (WRITE, WRITE_WITH_IMM, SEND, READ) already validated locally.
     *
     * @param op opcode
     * @param wrId id
     * @param local source region
     * @param localOffset source offset
     * @param length bytes
     * @param remote target (WRITE*)
     * @param remoteOffset target offset
     * @param imm immediate
     * @param signaled whether a success completion is wanted
     * @return a {@link Post} code
     * @throws ConnectionClosedException if the connection is down
     */
    protected abstract int postSendQueue(Opcode op, long wrId, RegionImpl local, int localOffset, int length,
                                         RemoteRegion remote, long remoteOffset, int imm, boolean signaled)
        throws ConnectionClosedException;

    /** Called after a RECV is queued, on the posting thread. */
    protected abstract void onRecvPosted();

    /**
     * Completes every outstanding send-queue request as {@link Status#FLUSHED}; a provider that posts receives
     * to a hardware queue ({@link #postRecv}) flushes those here too.
     */
    protected abstract void flushSendQueue();

    /**
     * Closes the provider's transport for this connection.
     *
     * @param cause why
     */
    protected abstract void closeTransport(Throwable cause);

    /**
     * Takes the oldest posted receive into a holder of the caller's (no object per receive).
     *
     * @param into filled with the receive
     * @return false if none is posted ({@code into} unchanged)
     */
    public boolean takeRecv(Recv into) {
        synchronized (recvLock) {
            if (recvCount == 0) {
                return false;
            }
            int i = recvFirst;
            into.wrId = recvWrIds[i];
            into.region = recvRegions[i];
            into.offset = recvOffsets[i];
            into.length = recvLengths[i];
            recvRegions[i] = null;
            recvFirst = (i + 1) & (recvWrIds.length - 1);
            recvCount--;
            return true;
        }
    }

    /** Under recvLock, full: doubles the queue (at most to the power of two above the receive queue depth). */
    private void growRecvs() {
        int n = recvWrIds.length;
        long[] ids = new long[2 * n];
        RegionImpl[] regions = new RegionImpl[2 * n];
        int[] offsets = new int[2 * n];
        int[] lengths = new int[2 * n];
        for (int k = 0; k < n; k++) {
            int i = (recvFirst + k) & (n - 1);
            ids[k] = recvWrIds[i];
            regions[k] = recvRegions[i];
            offsets[k] = recvOffsets[i];
            lengths[k] = recvLengths[i];
        }
        recvWrIds = ids;
        recvRegions = regions;
        recvOffsets = offsets;
        recvLengths = lengths;
        recvFirst = 0;
    }

    /** @return true if a receive is posted */
    public boolean hasRecv() {
        synchronized (recvLock) {
            return recvCount > 0;
        }
    }

    /**
     * Whether this provider calls an {@link InlineCompletionHandler}: it must never {@link #emit} while holding
     * a lock that {@link #post} takes. False by default (completions go to the node's queue).
     *
     * @return true if the connection offers {@link InlineCompletions}
     */
    protected boolean supportsInlineCompletions() {
        return false;
    }

    /**
     * The capability if this connection offers it: a capability is offered where the provider's connection
     * implements its interface and {@link #offers} says yes for this connection.
     */
    @Override
    public final <T extends Capability> Optional<T> capability(Class<T> type) {
        return type.isInterface() && type.isInstance(this) && offers(type) ? Optional.of(type.cast(this))
            : Optional.empty();
    }

    /**
     * Whether this connection offers a capability whose interface its class implements (fixed for the
     * connection's life). By default all of them, but {@link InlineCompletions} only where
     * {@link #supportsInlineCompletions()}.
     *
     * @param type the capability's interface
     * @return true if {@link #capability} returns it
     */
    protected boolean offers(Class<? extends Capability> type) {
        return type != InlineCompletions.class || supportsInlineCompletions();
    }

    /**
     * Leader/follower for the node's completion queue: the input a thread waiting on the queue may read and
     * handle itself while this is the node's only connection. Only while its completions go to the queue (with
     * an inline handler they go elsewhere, and the handler's own waiter reads: the channel reader) and it is open.
     *
     * @return the input, or null (the waiter sleeps as usual)
     */
    public InputFollowing queueInput() {
        return inline == null && closeCause.get() == null ? followableInput() : null;
    }

    /**
     * The provider's leader/follower input for the completion queue's waiter ({@link #queueInput}); allocated
     * once per connection, not per wait.
     *
     * @return the input, or null if the provider offers none (the default)
     */
    protected InputFollowing followableInput() {
        return null;
    }

    /**
     * Only where {@link #supportsInlineCompletions()} (the capability is not offered elsewhere).
     *
     * @throws IllegalStateException if this connection does not deliver inline (names the peer)
     */
    @Override
    public void completionHandler(InlineCompletionHandler handler) {
        if (!supportsInlineCompletions()) {
            throw new IllegalStateException("the connection to peer '" + peerName
                + "' delivers its completions to the node's queue only");
        }
        inline = handler;
    }

    /**
     * Hands a completion to the installed {@link InlineCompletionHandler} (one call at a time, on this thread),
     * or queues it on the node's CQ when none is installed. A handler that throws takes the connection down
     * (the error names the peer); the caller goes on.
     *
     * @param op opcode
     * @param wrId id
     * @param status outcome
     * @param len bytes
     * @param imm immediate
     * @param hasImm whether the immediate is meaningful
     * @param detail explanation of a failure
     */
    public void emit(Opcode op, long wrId, Status status, int len, int imm, boolean hasImm, String detail) {
        if (!defersCompletions()) {
            handOver(op, wrId, status, len, imm, hasImm, detail);
            return;
        }
        emitLater(op, wrId, status, len, imm, hasImm, detail);
        postLockReleased(); // hands over at once unless a post's lock is held here
    }

    /**
     * Whether this provider produces completions under a lock that {@link #post} takes (verbs, disni: the
     * connection's lock while the CQ is polled or the queues flushed; loopback: the pair's, while a post executes).
     * Then {@link #emit} queues each completion ({@link #emitLater}) and hands the queue over at once only on a
     * thread that does not hold such a lock ({@link #holdsPostLock}); the provider calls {@link #emitBacklog}
     * after releasing it. False by default: completions are handed over at once.
     *
     * @return true if completions may be produced under a post's lock
     */
    protected boolean defersCompletions() {
        return false;
    }

    /**
     * For a provider that {@link #defersCompletions defers completions}: whether the calling thread holds a lock
     * that a post takes.
     *
     * @return true if it does
     */
    protected boolean holdsPostLock() {
        return false;
    }

    /**
     * The hand-over itself: to the inline handler, else to the node's queue ({@link #deliver}). Internal: call
     * {@link #emit}.
     */
    @Override
    public final void handOver(Opcode op, long wrId, Status status, int len, int imm, boolean hasImm,
                               String detail) {
        InlineCompletionHandler h = inline;
        if (h == null) {
            deliver(new Completion(this, wrId, op, status, len, imm, hasImm, detail));
            return;
        }
        Throwable thrown = null;
        synchronized (inlineLock) {
            try {
                h.onCompletion(wrId, op.ordinal(), status.ordinal(), len, imm, hasImm, detail);
            } catch (Throwable e) {
                // whatever the handler throws (a LinkageError of a class it or a log call uses too) fails this
                // connection only: the provider's I/O thread serves the node's other connections
                thrown = e;
            }
        }
        if (thrown != null) {
            fail(new ConnectionClosedException(peerName, "completion handler of the connection from '"
                + node.name() + "' to peer '" + peerName + "' failed on " + op + ": " + thrown, thrown));
        }
    }

    /**
     * Queues a completion behind those not yet handed over, for a provider that produces completions under a lock
     * that a post takes (an inline handler may post): the thread releases that lock, then calls
     * {@link #emitBacklog}. Any thread; allocates nothing per completion.
     *
     * @param op opcode
     * @param wrId id
     * @param status outcome
     * @param len bytes
     * @param imm immediate
     * @param hasImm whether the immediate is meaningful
     * @param detail explanation of a failure
     */
    protected final void emitLater(Opcode op, long wrId, Status status, int len, int imm, boolean hasImm,
                                   String detail) {
        backlog.add(op, wrId, status, len, imm, hasImm, detail);
    }

    /**
     * Hands every completion {@link #emitLater queued} over ({@link #emit}), oldest first, one thread at a time,
     * without ever blocking ({@link CompletionBacklog#emit}): a thread that finds another handing over leaves its
     * completions to that one (so a post made on one connection that completes on its peer, as on loopback, never
     * waits for the peer's handler). Never call it holding a lock that a post takes.
     */
    public final void emitBacklog() {
        backlog.emit(this);
    }

    /**
     * For a provider that {@link #defersCompletions defers completions}, right after it released a lock that a post
     * takes: hands over what was produced under it, unless the thread still holds such a lock (its last release
     * does). Any thread.
     */
    public final void postLockReleased() {
        if (!holdsPostLock()) {
            emitBacklog();
        }
    }

    /** @return completions {@link #emitLater queued} and not yet handed over (tests) */
    public final int backlogSize() {
        return backlog.waiting();
    }

    /**
     * Hands a completion to the node's CQ; providers may override to inject delays.
     *
     * @param c the completion
     */
    protected void deliver(Completion c) {
        node.completionQueue().add(c);
    }

    /** @return the detail of a flushed request: names the peer and the cause */
    protected String flushDetail() {
        Throwable c = closeCause.get();
        return "connection to peer '" + peerName + "' went down"
            + (c == null || c.getMessage() == null ? "" : ": " + c.getMessage());
    }

    private void flushRecvs() {
        Recv r = new Recv();
        while (takeRecv(r)) {
            emit(Opcode.RECV, r.wrId(), Status.FLUSHED, 0, 0, false, flushDetail());
        }
    }

    /**
     * Moves the connection down: records the cause, flushes every outstanding request and receive, removes it
     * from the node and closes the transport. Idempotent; the first cause wins.
     *
     * @param cause why; its message should name the peer
     */
    public void fail(Throwable cause) {
        Throwable c = cause != null ? cause : new ConnectionClosedException(peerName, "connection between '"
            + node.name() + "' and peer '" + peerName + "' went down", null);
        if (!closeCause.compareAndSet(null, c)) {
            return;
        }
        node.removeConnection(this);
        try {
            closeTransport(c);
        } finally {
            flushSendQueue();
            flushRecvs();
        }
    }

    /**
     * The peer refused a request (NAK): the connection goes down with a cause that names the peer, the request
     * and the peer's explanation. Stream providers.
     *
     * @param seq the refused request's sequence number
     * @param status its status
     * @param message the peer's explanation
     */
    protected final void failRefused(long seq, Status status, String message) {
        fail(new ConnectionClosedException(peerName, "peer '" + peerName + "' refused request seq=" + seq
            + ": status=" + status + ": " + message, null));
    }

    /**
     * Closes the provider's transport as a dying process would: no farewell to the peer, whose next read finds
     * the connection gone; this side goes down when its transport notices. For tests and fault injection
     * (killing a process is what it stands for).
     *
     * @throws UnsupportedOperationException if the provider has no transport to break (loopback)
     */
    public void abort() {
        throw new UnsupportedOperationException(node.fabric().name() + " connections cannot be aborted");
    }

    @Override
    public void close() {
        fail(new ConnectionClosedException(peerName, "connection between '" + node.name() + "' and peer '"
            + peerName + "' closed by '" + node.name() + "'", null));
    }

    @Override
    public PreparedRequest prepare(WorkRequest template) {
        RegionImpl local = validate(template.opcode(), template.local(), template.remote());
        return new Prepared(template.opcode(), local, template.remote(), template.signaled());
    }

    private final class Prepared implements PreparedRequest {
        private final Opcode op;
        private final RegionImpl local;
        private final RemoteRegion remote;
        private final boolean signaled;

        Prepared(Opcode op, RegionImpl local, RemoteRegion remote, boolean signaled) {
            this.op = op;
            this.local = local;
            this.remote = remote;
            this.signaled = signaled;
        }

        @Override
        public int post(long wrId, int localOffset, int length, long remoteOffset) throws ConnectionClosedException {
            return postValidated(op, wrId, local, localOffset, length, remote, remoteOffset, 0, signaled);
        }

        @Override
        public int post(long wrId, int localOffset, int length, long remoteOffset, int immediate)
            throws ConnectionClosedException {
            return postValidated(op, wrId, local, localOffset, length, remote, remoteOffset, immediate, signaled);
        }

        @Override
        public Connection connection() {
            return AbstractConnection.this;
        }
    }

    @Override
    public String toString() {
        return node.fabric().name() + " connection '" + node.name() + "' -> '" + peerName + "' (" + peerAddress
            + (isOpen() ? ")" : ", down)");
    }
}
