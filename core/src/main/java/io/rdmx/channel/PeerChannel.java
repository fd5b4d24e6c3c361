package io.rdmx.channel;

import io.rdmx.transport.Access;
import io.rdmx.transport.Completion;
import io.rdmx.transport.Connection;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.Post;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RdmxTimeoutException;
import io.rdmx.transport.Region;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.Status;
import io.rdmx.transport.WorkRequest;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The channels between this node and one peer, over their one connection: the pair region (all rings, both
 * directions), a control region for notification messages, the handshake (HELLO with parameters, REGION with
 * the pair region's descriptor), and failure handling. Completions are handled on the provider's I/O thread as
 * they happen where the connection delivers them inline ({@link Connection#completionHandler}: tcp), so a
 * notification wakes the reader from the thread that received it; elsewhere on the network thread, from the
 * node's completion queue. Either way one thread at a time.
 */
public final class PeerChannel {
    private static final int BASE_RECVS = 16;
    /** Control slots we SEND from: 0 and 1 the notifier's, then HELLO, REGION and BYE. */
    private static final int SEND_SLOTS = 5;
    private static final int BYE_SLOT = 4;

    private final ChannelEngine engine;
    private final int id;
    private final Connection connection;
    private final boolean low;
    private final ChannelConfig cfg;
    private final Region control;
    /** Views of the receive slots, read with absolute gets only by the handling thread: none per message. */
    private final ByteBuffer controlView;
    private ByteBuffer extraView;
    /** The receive request the handling thread re-posts with (one handling thread at a time). */
    private final WorkRequest repostRequest = new WorkRequest().opcode(Opcode.RECV);
    private final Notifier notifier;
    private final CompletableFuture<PeerChannel> ready = new CompletableFuture<>();
    /** Whether the connection delivers completions inline (on its I/O thread) rather than to the queue. */
    private volatile boolean inline;
    /** Completions handled inline (written one thread at a time; read racily by tests). */
    private volatile long inlineCompletions;
    /** Network thread: our HELLO has been delivered to the peer. */
    private boolean helloDelivered;
    /** Written by the network thread: a configuration mismatch found before our HELLO was delivered. */
    private volatile RdmxException refusal;
    /** Written by the thread that started the handshake, applied by the network thread. */
    private volatile ConnectionClosedException startFailure;
    private volatile boolean open = true;
    /** The WRITEs in flight per ring, set by the handshake before the writers exist. */
    private volatile int window = 1;
    private volatile ConnectionClosedException failure;
    /** Set when either side closed its engine on purpose (our BYE posted, or the peer's received). */
    private volatile boolean closedCleanly;
    private volatile boolean byeDelivered;
    private Region extraRecvs;
    private Region pair;
    private RemoteRegion remotePair;
    private int peerWorkers;
    private PairLayout layout;
    private volatile ChannelWriter[] out;
    private IncomingRing[] in;
    /** Network thread, before the channel is ready: whether this channel is mapped (both HELLOs said so). */
    private boolean mapped;

    PeerChannel(ChannelEngine engine, int id, Connection connection) throws RdmxException {
        String badId = WrIdDescriptor.validatePeerId(id);
        if (badId != null) {
            throw new RdmxException("node '" + engine.node().name() + "' cannot open a channel to '"
                + connection.peerName() + "': " + badId);
        }
        this.engine = engine;
        this.id = id;
        this.connection = connection;
        this.cfg = engine.config();
        this.low = engine.node().name().compareTo(connection.peerName()) < 0;
        int slot = NotificationDescriptor.MESSAGE_SLOT;
        this.control = engine.node().register((SEND_SLOTS + BASE_RECVS) * slot, Access.LOCAL_WRITE);
        this.controlView = control.buffer();
        this.notifier = new Notifier(this, control, 0);
    }

    /** Starts the handshake: posts the receives and sends HELLO. Caller: the thread that opened the peer. */
    void start() throws RdmxException {
        // before the first post: every completion of the connection then comes inline, or every one queued
        inline = connection.completionHandler(this::onCompletion);
        // HELLO goes first: the peer answers our HELLO with REGION, which must not overtake our own HELLO.
        int slot = NotificationDescriptor.MESSAGE_SLOT;
        ByteBuffer b = control.buffer();
        int at = 2 * slot;
        NotificationDescriptor.header(b, at, NotificationDescriptor.TYPE_HELLO, 0);
        b.putInt(at + NotificationDescriptor.HELLO_WORKERS_OFFSET, cfg.workers());
        b.putInt(at + NotificationDescriptor.HELLO_CAPACITY_OFFSET, cfg.ringCapacity());
        b.putInt(at + NotificationDescriptor.HELLO_MODE_OFFSET, cfg.notification().ordinal());
        b.putInt(at + NotificationDescriptor.HELLO_FLAGS_OFFSET, wantsMapped() ? NotificationDescriptor.FLAG_MAPPED
            : 0);
        postHandshake(at, NotificationDescriptor.HELLO_LENGTH, WrIdDescriptor.HELLO);
        for (int i = 0; i < BASE_RECVS; i++) {
            postRecv(control, (SEND_SLOTS + i) * slot, i);
        }
    }

    /**
     * The connection went down while {@link #start()} posted the handshake; the network thread applies it
     * ({@link #applyStartFailure()}) after the completions already queued, so a mismatch the peer's HELLO tells
     * is still the reason reported.
     *
     * @param e the failure
     */
    void deferStartFailure(ConnectionClosedException e) {
        startFailure = e;
    }

    /** Network thread: fails the peer with a deferred start failure, if any (a refusal found meanwhile wins). */
    void applyStartFailure() {
        ConnectionClosedException e = startFailure;
        if (e != null) {
            startFailure = null;
            fail(e);
        }
    }

    private boolean wantsMapped() {
        return cfg.mapped() && connection.canMapRemote();
    }

    /** @return true if records go straight into the peer's mapped ring (known once ready) */
    public boolean mapped() {
        return mapped;
    }

    /** The thread that starts the handshake: a receive with a request of its own (setup, not the data path). */
    private void postRecv(Region r, int offset, int slotId) throws RdmxException {
        postRecv(WorkRequest.recv(r, offset, NotificationDescriptor.MESSAGE_SLOT), r, offset, slotId);
    }

    /**
     * The handling thread (one at a time): a receive through the one request it re-uses, so that re-posting a
     * receive per notification allocates nothing.
     */
    private void repostRecv(Region r, int offset, int slotId) throws RdmxException {
        postRecv(repostRequest, r, offset, slotId);
    }

    private void postRecv(WorkRequest wr, Region r, int offset, int slotId) throws RdmxException {
        wr.local(r, offset, NotificationDescriptor.MESSAGE_SLOT);
        int rc = connection.post(wr.wrId(wrId(WrIdDescriptor.KIND_RECV, slotId)));
        if (rc != Post.OK) {
            throw new RdmxException("RECV for '" + name() + "' refused: " + Post.name(rc)
                + " (raise rdmx.recvQueueDepth)");
        }
    }

    private void postHandshake(int at, int length, int which) throws RdmxException {
        int rc = connection.post(WorkRequest.send(control, at, length)
            .wrId(wrId(WrIdDescriptor.KIND_HANDSHAKE, which)));
        if (rc != Post.OK) {
            throw new RdmxException("handshake SEND to '" + name() + "' refused: " + Post.name(rc));
        }
    }

    long wrId(int kind, int index) {
        return WrIdDescriptor.encode(kind, id, index);
    }

    /** @return the peer node's name */
    public String name() {
        return connection.peerName();
    }

    /** @return the peer's worker count (known once ready) */
    public int workers() {
        return peerWorkers;
    }

    /** @return true until the connection fails or is closed */
    public boolean isOpen() {
        return open;
    }

    /** @return why the peer went down, or null */
    public ConnectionClosedException failure() {
        return failure;
    }

    /**
     * The buffer from a local worker to a remote worker.
     *
     * @param localWorker the writing worker
     * @param remoteWorker the receiving worker on the peer
     * @return the writer (one writer thread at a time)
     */
    public ChannelWriter writer(int localWorker, int remoteWorker) {
        ChannelWriter[] o = out;
        if (o == null) {
            throw new IllegalStateException("channel to '" + name() + "' is not ready");
        }
        if (localWorker < 0 || localWorker >= cfg.workers() || remoteWorker < 0 || remoteWorker >= peerWorkers) {
            throw new IllegalArgumentException("localWorker=" + localWorker + " (workers=" + cfg.workers()
                + "), remoteWorker=" + remoteWorker + " (peer '" + name() + "' workers=" + peerWorkers + ")");
        }
        return o[layout.ringIndex(low, localWorker, remoteWorker)];
    }

    Connection connection() {
        return connection;
    }

    /**
     * @param localWorker the receiving worker here
     * @param peerWorker the writing worker of the peer
     * @return the incoming ring between them (known once ready; tests)
     */
    IncomingRing incoming(int localWorker, int peerWorker) {
        return in[layout.ringIndex(!low, peerWorker, localWorker)];
    }

    ChannelEngine engine() {
        return engine;
    }

    Notifier notifier() {
        return notifier;
    }

    ConnectionClosedException closedException() {
        ConnectionClosedException f = failure;
        return f != null ? ChannelErrors.forCaller(f)
            : new ConnectionClosedException(name(), "channel to peer '" + name() + "' is closed", null);
    }

    PeerChannel awaitReady(Duration timeout) throws RdmxException {
        try {
            if (!engine.config().engineThread()) {
                // no network thread: this thread runs the engine's duty cycle until the handshake is done
                long deadline = System.nanoTime() + timeout.toNanos();
                while (!ready.isDone()) {
                    if (engine.doWork() == 0) {
                        try {
                            ready.get(Math.min(ChannelEngine.AGENT_SLEEP_NANOS, Math.max(1,
                                deadline - System.nanoTime())), TimeUnit.NANOSECONDS);
                        } catch (TimeoutException again) {
                            if (System.nanoTime() - deadline >= 0) {
                                throw again;
                            }
                        }
                    }
                }
            }
            return ready.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            RdmxTimeoutException t = new RdmxTimeoutException("channel handshake with '" + name() + "' timed out after "
                + timeout.toMillis() + " ms");
            fail(t);
            throw t;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RdmxException("interrupted during the channel handshake with '" + name() + "'");
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            String msg = "channel handshake with '" + name() + "' failed: " + c.getMessage();
            throw new ConnectionClosedException(name(), msg, ChannelErrors.distinctCause(msg, c));
        }
    }

    /** @return true if completions come inline, on the connection's I/O thread */
    boolean inline() {
        return inline;
    }

    /** @return completions handled inline so far (tests) */
    long inlineCompletions() {
        return inlineCompletions;
    }

    /**
     * Network thread: one completion of this peer's connection, from the node's completion queue.
     *
     * @param c the completion
     */
    void onCompletion(Completion c) {
        handle(c.wrId(), c.status().ordinal(), c.byteLength(), c.immediate(), c.hasImmediate(), c);
    }

    /**
     * The connection's I/O thread ({@link io.rdmx.transport.InlineCompletionHandler}, one call at a time): one
     * completion, handled where it happened; a notification wakes its reader from here.
     */
    private void onCompletion(long wrId, int opcode, int status, int byteLength, int immediate,
                              boolean hasImmediate, String detail) {
        inlineCompletions++;
        handle(wrId, status, byteLength, immediate, hasImmediate, status == Status.SUCCESS.ordinal() ? null
            : new Completion(connection, wrId, Opcode.values()[opcode], Status.values()[status], byteLength,
                immediate, hasImmediate, detail));
    }

    /** One completion; {@code failed} is the completion object of a failed one (only those are allocated). */
    private void handle(long wr, int status, int byteLength, int immediate, boolean hasImmediate, Completion failed) {
        if (status != Status.SUCCESS.ordinal()) {
            if (open) {
                fail(ChannelErrors.completionFailure(name(), failed));
            }
            return;
        }
        int index = WrIdDescriptor.index(wr);
        switch (WrIdDescriptor.kind(wr)) {
            case WrIdDescriptor.KIND_WRITE:
                out[index].onWriteComplete();
                break;
            case WrIdDescriptor.KIND_NOTIFY:
                notifier.onSendComplete(index);
                break;
            case WrIdDescriptor.KIND_RECV:
                onRecv(index, byteLength, immediate, hasImmediate);
                break;
            case WrIdDescriptor.KIND_HANDSHAKE:
                if (index == WrIdDescriptor.BYE) {
                    byeDelivered = true;
                } else if (!helloDelivered) {
                    // the first handshake SEND is our HELLO: now the peer can tell a mismatch on its own
                    helloDelivered = true;
                    if (refusal != null) {
                        fail(refusal);
                    }
                }
                break;
            default:
                break;
        }
    }

    private void onRecv(int slotId, int byteLength, int immediate, boolean hasImmediate) {
        engine.metricNotificationReceived();
        try {
            if (hasImmediate) {
                onImmediate(immediate);
            } else {
                handleMessage(slotId, byteLength);
            }
            if (open) {
                try {
                    repost(slotId);
                } catch (ConnectionClosedException e) {
                    // the connection went down after this message came: what the peer sent before it went (a BYE,
                    // say) may still be queued behind it, so the engine fails the peer once the queue is drained
                    deferStartFailure(e);
                    engine.deferFailures();
                }
            }
        } catch (RdmxException e) {
            fail(e);
        }
    }

    private void onImmediate(int imm) throws RdmxException {
        if (in == null) {
            throw new RdmxException("peer '" + name() + "' sent an immediate=0x" + Integer.toHexString(imm)
                + " before HELLO");
        }
        if (mapped || cfg.notification() != ChannelConfig.Notification.WRITE_WITH_IMM) {
            // its data would be announced twice, or (mapped) the local head would move under the shared one
            throw new RdmxException("peer '" + name() + "' sent an immediate=0x" + Integer.toHexString(imm)
                + " on a channel that announces data by " + (mapped ? "mapped memory" : "notification="
                + cfg.notification()) + ", not by immediates");
        }
        String bad = ImmediateDescriptor.validate(imm, in.length);
        if (bad != null) {
            throw new RdmxException("bad immediate from '" + name() + "': " + bad);
        }
        IncomingRing r = in[ImmediateDescriptor.ring(imm)];
        long head = r.ring.headAcquire();
        long position = head + ImmediateDescriptor.length(imm);
        if (!r.onData(position)) {
            throw new RdmxException("peer '" + name() + "' announced by immediate=0x" + Integer.toHexString(imm)
                + " data up to position=" + position + " in ring=" + r.index + " (head=" + head + "), beyond the"
                + " buffer's capacity=" + r.ring.capacity());
        }
        engine.reader(r.localWorker).signal(r);
    }

    private void repost(int slotId) throws RdmxException {
        int slot = NotificationDescriptor.MESSAGE_SLOT;
        if (slotId < BASE_RECVS) {
            repostRecv(control, (SEND_SLOTS + slotId) * slot, slotId);
        } else {
            repostRecv(extraRecvs, (slotId - BASE_RECVS) * slot, slotId);
        }
    }

    private void handleMessage(int slotId, int length) throws RdmxException {
        int slot = NotificationDescriptor.MESSAGE_SLOT;
        ByteBuffer b = slotId < BASE_RECVS ? controlView : extraView;
        int at = slotId < BASE_RECVS ? (SEND_SLOTS + slotId) * slot : (slotId - BASE_RECVS) * slot;
        String bad = NotificationDescriptor.validate(b, at, length, in == null ? 0 : in.length);
        if (bad != null) {
            throw new RdmxException("bad control message from '" + name() + "': " + bad);
        }
        int type = b.get(at + NotificationDescriptor.TYPE_OFFSET);
        switch (type) {
            case NotificationDescriptor.TYPE_HELLO:
                onHello(b.getInt(at + NotificationDescriptor.HELLO_WORKERS_OFFSET),
                    b.getInt(at + NotificationDescriptor.HELLO_CAPACITY_OFFSET),
                    b.getInt(at + NotificationDescriptor.HELLO_MODE_OFFSET),
                    b.getInt(at + NotificationDescriptor.HELLO_FLAGS_OFFSET));
                break;
            case NotificationDescriptor.TYPE_REGION:
                if (pair == null) {
                    throw new RdmxException("peer '" + name() + "' sent REGION before HELLO");
                }
                if (remotePair != null) {
                    throw new RdmxException("peer '" + name() + "' sent REGION twice");
                }
                int regionLength = b.getInt(at + NotificationDescriptor.REGION_OFFSET + RemoteRegion.LENGTH_OFFSET);
                if (regionLength != layout.regionLength()) {
                    throw new RdmxException("peer '" + name() + "' pair region length=" + regionLength
                        + " != expected=" + layout.regionLength());
                }
                remotePair = RemoteRegion.decode(b, at + NotificationDescriptor.REGION_OFFSET);
                ByteBuffer peerMemory = null;
                if (mapped) {
                    peerMemory = connection.mapRemote(remotePair);
                    if (peerMemory == null) {
                        throw new RdmxException("cannot map the pair region of peer '" + name() + "' although "
                            + "both sides announced mapped=true");
                    }
                }
                buildWriters(peerMemory);
                ready.complete(this);
                break;
            case NotificationDescriptor.TYPE_BYE:
                closedCleanly = true;
                fail(new ConnectionClosedException(name(), "peer '" + name() + "' closed its channel engine", null));
                break;
            default: {
                int count = b.getShort(at + NotificationDescriptor.COUNT_OFFSET) & 0xFFFF;
                for (int i = 0; i < count; i++) {
                    int e = at + NotificationDescriptor.HEADER_LENGTH + i * NotificationDescriptor.ENTRY_LENGTH;
                    int kind = b.get(e + NotificationDescriptor.ENTRY_KIND_OFFSET);
                    int ring = b.getShort(e + NotificationDescriptor.ENTRY_RING_OFFSET) & 0xFFFF;
                    long pos = b.getLong(e + NotificationDescriptor.ENTRY_POSITION_OFFSET);
                    if (kind == NotificationDescriptor.KIND_DATA) {
                        IncomingRing r = in[ring];
                        if (mapped) {
                            // a doorbell: the head is in shared memory, the reader re-reads it once awake
                            engine.reader(r.localWorker).wake();
                            continue;
                        }
                        if (!r.onData(pos)) {
                            throw new RdmxException("peer '" + name() + "' announced data up to position=" + pos
                                + " in ring=" + ring + ", beyond the buffer's capacity=" + r.ring.capacity()
                                + " (read up to " + r.ring.tailAcquire() + ")");
                        }
                        engine.reader(r.localWorker).signal(r);
                    } else {
                        ChannelWriter[] o = out;
                        if (o == null || ring >= o.length) {
                            throw new RdmxException("peer '" + name() + "' sent a credit for ring=" + ring
                                + " that does not exist");
                        }
                        if (!o[ring].onCredit(pos)) {
                            throw new RdmxException("peer '" + name() + "' sent a credit up to position=" + pos
                                + " in ring=" + ring + ", beyond what was written there (head="
                                + o[ring].ring().headAcquire() + ")");
                        }
                    }
                }
            }
        }
    }

    private void onHello(int workers, int capacity, int mode, int flags) throws RdmxException {
        if (layout != null) {
            throw new RdmxException("peer '" + name() + "' sent HELLO twice");
        }
        boolean imm = cfg.notification() == ChannelConfig.Notification.WRITE_WITH_IMM;
        String tooMany = imm && mode == cfg.notification().ordinal() && workers >= 1
            ? ImmediateDescriptor.validateRings(cfg.workers(), workers) : null;
        if (capacity != cfg.ringCapacity() || mode != cfg.notification().ordinal() || tooMany != null) {
            RdmxException e = new RdmxException("channel configuration mismatch with '" + name() + "': "
                + (tooMany != null ? tooMany : "ringCapacity local=" + cfg.ringCapacity() + " peer=" + capacity
                + ", notification local=" + cfg.notification() + " peer="
                + (mode >= 0 && mode < 2 ? ChannelConfig.Notification.values()[mode] : mode)));
            if (helloDelivered) {
                throw e;
            }
            // closing now could flush our HELLO undelivered, and the peer would only see the connection drop:
            // fail once our HELLO has reached it, so both sides name the mismatch
            refusal = e;
            return;
        }
        if (workers < 1 || workers > 256) {
            throw new RdmxException("peer '" + name() + "' announced workers=" + workers);
        }
        peerWorkers = workers;
        int lw = low ? cfg.workers() : workers;
        int hw = low ? workers : cfg.workers();
        mapped = wantsMapped() && (flags & NotificationDescriptor.FLAG_MAPPED) != 0;
        layout = new PairLayout(lw, hw, capacity, mapped);
        int rings = cfg.workers() * workers;
        int sq = engine.node().options().sendQueueDepth();
        int rq = engine.node().options().recvQueueDepth();
        if (sq < 2 * rings + SEND_SLOTS) {
            throw new RdmxException("sendQueueDepth=" + sq + " too small for " + rings + " rings to '" + name()
                + "' (needs " + (2 * rings + SEND_SLOTS) + ")");
        }
        window = writesInFlight(cfg, rings, sq);
        if (rq < BASE_RECVS + (imm ? rings : 0)) {
            throw new RdmxException("recvQueueDepth=" + rq + " too small for " + rings + " rings from '" + name()
                + "' (needs " + (BASE_RECVS + (imm ? rings : 0)) + ")");
        }
        pair = engine.node().register(layout.regionLength(), Access.ALL);
        in = new IncomingRing[rings];
        for (int b = 0; b < workers; b++) {
            for (int a = 0; a < cfg.workers(); a++) {
                int idx = layout.ringIndex(!low, b, a);
                ByteBuffer mem = pair.buffer();
                int off = layout.offset(!low, idx);
                mem.position(off).limit(off + capacity);
                SharedRing shared = mapped ? new SharedRing(pair.buffer(), layout.ringHeaderOffset(!low, idx),
                    layout.readerHeaderOffset(low, a)) : null;
                in[idx] = new IncomingRing(this, idx, b, a, mem, cfg, shared);
            }
        }
        if (mapped) {
            // readers scan these rings from now on: the peer may write as soon as it has our REGION
            for (int a = 0; a < cfg.workers(); a++) {
                IncomingRing[] mine = new IncomingRing[workers];
                for (int b = 0; b < workers; b++) {
                    mine[b] = in[layout.ringIndex(!low, b, a)];
                }
                engine.reader(a).addMapped(mine);
            }
        }
        if (imm) {
            int slot = NotificationDescriptor.MESSAGE_SLOT;
            extraRecvs = engine.node().register(rings * slot, Access.LOCAL_WRITE);
            extraView = extraRecvs.buffer();
            for (int i = 0; i < rings; i++) {
                repostRecv(extraRecvs, i * slot, BASE_RECVS + i);
            }
        }
        ByteBuffer b = control.buffer();
        int at = 3 * NotificationDescriptor.MESSAGE_SLOT;
        NotificationDescriptor.header(b, at, NotificationDescriptor.TYPE_REGION, 0);
        pair.descriptor().encode(b, at + NotificationDescriptor.REGION_OFFSET);
        postHandshake(at, NotificationDescriptor.REGION_LENGTH, WrIdDescriptor.HELLO);
    }

    private void buildWriters(ByteBuffer peerMemory) {
        ChannelWriter[] o = new ChannelWriter[cfg.workers() * peerWorkers];
        for (int a = 0; a < cfg.workers(); a++) {
            for (int b = 0; b < peerWorkers; b++) {
                int idx = layout.ringIndex(low, a, b);
                SharedRing shared = peerMemory == null ? null : new SharedRing(peerMemory,
                    layout.ringHeaderOffset(low, idx), layout.readerHeaderOffset(!low, b));
                o[idx] = new ChannelWriter(this, idx, b, pair, layout.offset(low, idx), remotePair, cfg,
                    peerMemory, shared, window);
            }
        }
        out = o;
    }

    /**
     * The WRITEs in flight per ring to this peer: as configured, but all rings' WRITEs together (two work requests
     * each where the range wraps) and the control SENDs within the send queue; 1 with WRITE_WITH_IMM, whose
     * immediates each take a receive the peer posted one per ring.
     *
     * @param cfg the configuration
     * @param rings our rings to the peer
     * @param sq the connection's send queue depth
     * @return the window, at least 1 (the caller checked that one WRITE per ring fits)
     */
    static int writesInFlight(ChannelConfig cfg, int rings, int sq) {
        if (cfg.notification() == ChannelConfig.Notification.WRITE_WITH_IMM) {
            return 1;
        }
        return Math.max(1, Math.min(cfg.writesInFlight(), (sq - SEND_SLOTS) / (2 * rings)));
    }

    /** @return the WRITEs in flight per ring to this peer (after the handshake) */
    int writesInFlight() {
        return window;
    }

    /** @return records and bytes committed by this peer's writers */
    long[] written() {
        long[] out = new long[2];
        ChannelWriter[] o = out();
        if (o != null) {
            for (ChannelWriter w : o) {
                out[0] += w.recordsWritten();
                out[1] += w.bytesWritten();
            }
        }
        return out;
    }

    private ChannelWriter[] out() {
        return out;
    }

    /** Flushes every writer. */
    void flushAll() {
        ChannelWriter[] o = out;
        if (o != null) {
            for (ChannelWriter w : o) {
                w.flush();
            }
        }
    }

    /** @return true when everything written was delivered and announced (or the peer is down) */
    boolean quiet() {
        if (!open) {
            return true;
        }
        ChannelWriter[] o = out;
        if (o != null) {
            for (ChannelWriter w : o) {
                if (!w.quiet()) {
                    return false;
                }
            }
        }
        return notifier.quiet();
    }

    /** Network thread: time-bound flush of idle unsent data. */
    void scan() {
        ChannelWriter[] o = out;
        if (o != null && open) {
            for (ChannelWriter w : o) {
                w.scan();
            }
        }
    }

    /**
     * Engine closing: tells a ready peer that this side closes on purpose (a BYE after everything sent), so
     * neither side takes the end of the connection for a failure. Any thread; see {@link #goodbyeDone()}.
     */
    void sayGoodbye() {
        closedCleanly = true;
        if (!open || out == null) {
            return;
        }
        int at = BYE_SLOT * NotificationDescriptor.MESSAGE_SLOT;
        NotificationDescriptor.header(control.buffer(), at, NotificationDescriptor.TYPE_BYE, 0);
        try {
            postHandshake(at, NotificationDescriptor.BYE_LENGTH, WrIdDescriptor.BYE);
        } catch (RdmxException e) {
            fail(e);
        }
    }

    /** @return true once our BYE was delivered, or there is no one left to deliver it to */
    boolean goodbyeDone() {
        return byeDelivered || !open || out == null;
    }

    /** @return true if the channel ended because either side closed its engine, not by a failure */
    boolean closedCleanly() {
        return closedCleanly;
    }

    /**
     * Takes the peer down: wakes every blocked writer and reader of it with an exception naming it. Idempotent.
     *
     * @param cause why
     */
    void fail(Throwable cause) {
        if (!open) {
            return;
        }
        if (refusal != null) {
            cause = refusal; // whatever closed the connection then, the mismatch is the reason
        }
        failure = ChannelErrors.peerFailure(name(), cause);
        open = false;
        ready.completeExceptionally(failure);
        ChannelWriter[] o = out;
        if (o != null) {
            for (ChannelWriter w : o) {
                w.wake();
            }
        }
        if (in != null) {
            engine.peerFailed(this, failure);
        }
        connection.close();
    }

    /** Releases the regions; called when the engine closes. */
    void release() {
        ChannelWriter[] o = out;
        if (o != null) {
            for (ChannelWriter w : o) {
                w.closeSleeper();
            }
        }
        for (Region r : new Region[] {control, extraRecvs, pair}) {
            if (r != null && r.refCnt() > 0) {
                r.release();
            }
        }
    }
}
