package io.rdmx.channel;

import io.rdmx.transport.Access;
import io.rdmx.transport.Completion;
import io.rdmx.transport.Connection;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.Post;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Region;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.Status;
import io.rdmx.transport.WorkRequest;
import io.rdmx.transport.capability.Bells;
import io.rdmx.transport.capability.Corking;
import io.rdmx.transport.capability.InlineCompletions;
import io.rdmx.transport.internal.AbstractConnection;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The channels between this node and one peer, over their one connection: a control region for the handshake and
 * notification messages, the completions of the connection, and failure handling. Three parts do the rest:
 * {@link PeerHandshake} (HELLO with parameters, REGION with the pair region's descriptor, BYE),
 * {@link ControlMessages} (the codec of those messages and of notifications) and {@link RingSet} (all rings of the
 * pair, both directions). Completions are handled on the provider's I/O thread as they happen where the
 * connection delivers them inline ({@link InlineCompletions}: tcp, verbs, disni, loopback), so a notification wakes
 * the reader from the thread that received it; elsewhere on the network thread, from the node's completion queue.
 * Either way one thread at a time.
 */
public final class PeerChannel {
    static final int BASE_RECVS = 16;
    /** Control slots we SEND from: 0 and 1 the notifier's, then HELLO, REGION and BYE ({@link PeerHandshake}). */
    static final int SEND_SLOTS = 5;

    private final ChannelEngine engine;
    private final int id;
    private final Connection connection;
    /** The connection's capabilities the channels' data path uses, looked up once (null where not offered). */
    private final Corking corking;
    private final Bells bells;
    private final ChannelConfig cfg;
    private final Region control;
    /** Views of the receive slots, read with absolute gets only by the handling thread: none per message. */
    private final ByteBuffer controlView;
    private ByteBuffer extraView;
    /** The receive request the handling thread re-posts with (one handling thread at a time). */
    private final WorkRequest repostRequest = new WorkRequest().opcode(Opcode.RECV);
    private final Notifier notifier;
    private final PeerHandshake handshake;
    private final ControlMessages.Listener messages = new Messages();
    /** Whether the connection delivers completions inline (on its I/O thread) rather than to the queue. */
    private volatile boolean inline;
    /** Completions handled inline (written one thread at a time; read racily by tests). */
    private volatile long inlineCompletions;
    private volatile boolean open = true;
    /** Set by the one {@link #fail} that takes the peer down (several threads may try at once). */
    private final AtomicBoolean failing = new AtomicBoolean();
    private volatile ConnectionClosedException failure;
    private Region extraRecvs;
    /** The rings, from the peer's HELLO on (set by the handshake on the completion thread). */
    private volatile RingSet rings;
    /** Who tells the readers of the loss: the failing thread, or the thread that attaches the rings after it. */
    private final LossLatch loss = new LossLatch();
    /**
     * When this failed peer's memory may go: after the failure, once no completion is being handled and every
     * reader told of the loss reported it and forgot the rings ({@link #readerDone}).
     */
    private final ReleaseGate gate = new ReleaseGate(this::releaseFailed);
    /** Set by the first {@link #release}. */
    private final AtomicBoolean released = new AtomicBoolean();

    PeerChannel(ChannelEngine engine, int id, Connection connection) throws RdmxException {
        String badId = WrIdDescriptor.validatePeerId(id);
        if (badId != null) {
            throw new RdmxException("node '" + engine.node().name() + "' cannot open a channel to '"
                + connection.peerName() + "': " + badId);
        }
        this.engine = engine;
        this.id = id;
        this.connection = connection;
        this.corking = connection.capability(Corking.class).orElse(null);
        this.bells = connection.capability(Bells.class).orElse(null);
        this.cfg = engine.config();
        int slot = NotificationDescriptor.MESSAGE_SLOT;
        this.control = engine.node().register((SEND_SLOTS + BASE_RECVS) * slot, Access.LOCAL_WRITE);
        this.controlView = control.buffer();
        this.notifier = new Notifier(new NotifierPort(), control, 0, cfg.notificationsInFlight());
        this.handshake = new PeerHandshake(this, engine.node().name().compareTo(connection.peerName()) < 0,
            control.buffer());
    }

    /** Starts the handshake: posts the receives and sends HELLO. Caller: the thread that opened the peer. */
    void start() throws RdmxException {
        // before the first post: every completion of the connection then comes inline, or every one queued
        InlineCompletions handler = connection.capability(InlineCompletions.class).orElse(null);
        if (handler != null) {
            handler.completionHandler(this::onCompletion);
        }
        inline = handler != null;
        handshake.sendHello();
        int slot = NotificationDescriptor.MESSAGE_SLOT;
        for (int i = 0; i < BASE_RECVS; i++) {
            postRecv(control, (SEND_SLOTS + i) * slot, i);
        }
    }

    /**
     * The connection went down while {@link #start()} posted the handshake (see
     * {@link PeerHandshake#deferStartFailure}).
     *
     * @param e the failure
     */
    void deferStartFailure(ConnectionClosedException e) {
        handshake.deferStartFailure(e);
    }

    /** Network thread: fails the peer with a deferred start failure, if any (a refusal found meanwhile wins). */
    void applyStartFailure() {
        handshake.applyStartFailure();
    }

    /** @return true if records go straight into the peer's mapped ring (known once ready) */
    public boolean mapped() {
        RingSet r = rings;
        return r != null && r.mapped();
    }

    /**
     * Completion thread, from the peer's HELLO: the rings exist. If the peer failed meanwhile (on another thread,
     * which saw no rings yet), the readers are told of the loss from here, so that they forget the rings.
     */
    void attach(RingSet set) {
        rings = set;
        if (loss.attach()) {
            announceLoss(set);
        }
    }

    /** @return the rings, or null before the peer's HELLO */
    RingSet rings() {
        return rings;
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

    /**
     * Completion thread, WRITE_WITH_IMM: one receive per ring for the immediates, after the base ones.
     *
     * @param count the ring count
     * @throws RdmxException a receive was refused
     */
    void postImmediateReceives(int count) throws RdmxException {
        int slot = NotificationDescriptor.MESSAGE_SLOT;
        extraRecvs = engine.node().register(count * slot, Access.LOCAL_WRITE);
        extraView = extraRecvs.buffer();
        for (int i = 0; i < count; i++) {
            repostRecv(extraRecvs, i * slot, BASE_RECVS + i);
        }
    }

    /**
     * Posts one handshake message from the control region's send slots.
     *
     * @param at where it starts in the control region
     * @param length its length
     * @param which {@link WrIdDescriptor#HELLO} or {@link WrIdDescriptor#BYE}
     * @throws RdmxException the SEND was refused
     */
    void postHandshake(int at, int length, int which) throws RdmxException {
        int rc = connection.post(WorkRequest.send(control, at, length)
            .wrId(wrId(WrIdDescriptor.KIND_HANDSHAKE, which)));
        if (rc != Post.OK) {
            throw new RdmxException("handshake SEND to '" + name() + "' refused: " + Post.name(rc));
        }
    }

    int id() {
        return id;
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
        RingSet r = rings;
        return r == null ? 0 : r.peerWorkers();
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
        RingSet r = rings;
        if (r == null || !r.connected()) {
            throw new IllegalStateException("channel to '" + name() + "' is not ready");
        }
        int peerWorkers = r.peerWorkers();
        if (localWorker < 0 || localWorker >= cfg.workers() || remoteWorker < 0 || remoteWorker >= peerWorkers) {
            throw new IllegalArgumentException("localWorker=" + localWorker + " (workers=" + cfg.workers()
                + "), remoteWorker=" + remoteWorker + " (peer '" + name() + "' workers=" + peerWorkers + ")");
        }
        return r.writer(localWorker, remoteWorker);
    }

    Connection connection() {
        return connection;
    }

    /** Corks the connection ({@link Corking#cork}) if it offers corking; else nothing: requests go out as posted. */
    void cork() {
        if (corking != null) {
            corking.cork();
        }
    }

    /** Ends a {@link #cork}. */
    void uncork() {
        if (corking != null) {
            corking.uncork();
        }
    }

    /** @return true if it rang the peer's sleeper on that bell ({@link Bells#ringBell}); false: wake it otherwise */
    boolean ringBell(int slot) {
        return bells != null && bells.ringBell(slot);
    }

    /**
     * Where the peer of a channel it opened to this node really is, as the transport established it, never as the
     * peer claims it (see {@link AbstractConnection#acceptedFrom()}): the IP address its socket came from, the
     * loopback address for a process of this host (shm), or null where the transport cannot tell (a channel this
     * node dialed; a provider that does not record it).
     *
     * @return an IP address literal, or null
     */
    public String acceptedFrom() {
        return connection instanceof AbstractConnection ? ((AbstractConnection) connection).acceptedFrom() : null;
    }

    /**
     * @param localWorker the receiving worker here
     * @param peerWorker the writing worker of the peer
     * @return the incoming ring between them (known once ready; tests)
     */
    IncomingRing incoming(int localWorker, int peerWorker) {
        return rings.incoming(localWorker, peerWorker);
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
        return handshake.await(timeout);
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

    /**
     * One completion; {@code failed} is the completion object of a failed one (only those are allocated). Holds
     * the peer's memory meanwhile ({@link ReleaseGate#enter}); a completion that comes once it is released (a
     * flushed request, say) is dropped.
     */
    private void handle(long wr, int status, int byteLength, int immediate, boolean hasImmediate, Completion failed) {
        if (!gate.enter()) {
            return;
        }
        try {
            handleHeld(wr, status, byteLength, immediate, hasImmediate, failed);
        } finally {
            gate.leave();
        }
    }

    private void handleHeld(long wr, int status, int byteLength, int immediate, boolean hasImmediate,
                            Completion failed) {
        if (status != Status.SUCCESS.ordinal()) {
            if (open) {
                fail(ChannelErrors.completionFailure(name(), failed));
            }
            return;
        }
        int index = WrIdDescriptor.index(wr);
        switch (WrIdDescriptor.kind(wr)) {
            case WrIdDescriptor.KIND_WRITE:
                rings.out(index).onWriteComplete();
                break;
            case WrIdDescriptor.KIND_NOTIFY:
                notifier.onSendComplete(index);
                break;
            case WrIdDescriptor.KIND_RECV:
                onRecv(index, byteLength, immediate, hasImmediate);
                break;
            case WrIdDescriptor.KIND_HANDSHAKE:
                handshake.onSent(index);
                break;
            default:
                break;
        }
    }

    private void onRecv(int slotId, int byteLength, int immediate, boolean hasImmediate) {
        engine.counters.notificationReceived();
        try {
            if (hasImmediate) {
                onImmediate(immediate);
            } else {
                int slot = NotificationDescriptor.MESSAGE_SLOT;
                ByteBuffer b = slotId < BASE_RECVS ? controlView : extraView;
                int at = slotId < BASE_RECVS ? (SEND_SLOTS + slotId) * slot : (slotId - BASE_RECVS) * slot;
                RingSet r = rings;
                ControlMessages.decode(name(), b, at, byteLength, r == null ? 0 : r.rings(), messages);
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
        } catch (RuntimeException | OutOfMemoryError e) {
            // a bug or an allocation failure while serving this peer: it fails this peer only, never the thread
            // that delivers every peer's completions (the tcp I/O thread, say)
            fail(new RdmxException("node '" + engine.node().name() + "' failed while handling a message of peer '"
                + name() + "': " + e, e));
        }
    }

    private void onImmediate(int imm) throws RdmxException {
        RingSet set = rings;
        if (set == null) {
            throw new RdmxException("peer '" + name() + "' sent an immediate=0x" + Integer.toHexString(imm)
                + " before HELLO");
        }
        if (set.mapped() || cfg.notification() != ChannelConfig.Notification.WRITE_WITH_IMM) {
            // its data would be announced twice, or (mapped) the local head would move under the shared one
            throw new RdmxException("peer '" + name() + "' sent an immediate=0x" + Integer.toHexString(imm)
                + " on a channel that announces data by " + (set.mapped() ? "mapped memory" : "notification="
                + cfg.notification()) + ", not by immediates");
        }
        String bad = ImmediateDescriptor.validate(imm, set.rings());
        if (bad != null) {
            throw new RdmxException("bad immediate from '" + name() + "': " + bad);
        }
        IncomingRing r = set.in(ImmediateDescriptor.ring(imm));
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

    /** The notifier's way to the connection: its SENDs carry this peer's work-request ids. */
    private final class NotifierPort implements Notifier.Port {
        @Override
        public boolean isOpen() {
            return open;
        }

        @Override
        public int post(WorkRequest send, int slot) throws ConnectionClosedException {
            return connection.post(send.wrId(wrId(WrIdDescriptor.KIND_NOTIFY, slot)));
        }

        @Override
        public void fail(Throwable cause) {
            PeerChannel.this.fail(cause);
        }

        @Override
        public String name() {
            return PeerChannel.this.name();
        }

        @Override
        public void sent() {
            engine.counters.notificationSent();
        }
    }

    /** What the peer's control messages mean to this channel (the completion thread, one message at a time). */
    private final class Messages implements ControlMessages.Listener {
        @Override
        public void onHello(int workers, int capacity, int mode, int flags) throws RdmxException {
            handshake.onHello(workers, capacity, mode, flags);
        }

        @Override
        public void onRegion(RemoteRegion pair) throws RdmxException {
            handshake.onRegion(pair);
        }

        @Override
        public void onBye(String reason) {
            handshake.onBye();
            fail(new ConnectionClosedException(name(), "peer '" + name() + "' closed its channel engine"
                + (reason == null ? "" : " because " + reason), null));
        }

        @Override
        public void onData(int ring, long pos) throws RdmxException {
            IncomingRing r = rings.in(ring);
            if (r.shared() != null) {
                // a doorbell: the head is in shared memory, the reader re-reads it once awake
                engine.reader(r.localWorker).wake();
                return;
            }
            if (!r.onData(pos)) {
                throw new RdmxException("peer '" + name() + "' announced data up to position=" + pos
                    + " in ring=" + ring + ", beyond the buffer's capacity=" + r.ring.capacity()
                    + " (read up to " + r.ring.tailAcquire() + ")");
            }
            engine.reader(r.localWorker).signal(r);
        }

        @Override
        public void onCredit(int ring, long pos) throws RdmxException {
            ChannelWriter w = rings.out(ring);
            if (w == null) {
                throw new RdmxException("peer '" + name() + "' sent a credit for ring=" + ring
                    + " that does not exist");
            }
            if (!w.onCredit(pos)) {
                throw new RdmxException("peer '" + name() + "' sent a credit up to position=" + pos
                    + " in ring=" + ring + ", beyond what was written there (head="
                    + w.ring().headAcquire() + ")");
            }
        }
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
        return handshake.window();
    }

    /** @return records and bytes committed by this peer's writers */
    long[] written() {
        RingSet r = rings;
        return r == null ? new long[2] : r.written();
    }

    /** Flushes every writer. */
    void flushAll() {
        RingSet r = rings;
        if (r != null) {
            r.flushAll();
        }
        notifier.sendQueued(); // credits queued lazily
    }

    /** @return true when everything written was delivered and announced (or the peer is down) */
    boolean quiet() {
        if (!open) {
            return true;
        }
        RingSet r = rings;
        return (r == null || r.quiet()) && notifier.quiet();
    }

    /** Network thread: time-bound flush of idle unsent data, and of credits queued lazily. */
    void scan() {
        RingSet r = rings;
        if (r != null && open && gate.enter()) {
            try {
                r.scan();
                notifier.sendQueued();
            } finally {
                gate.leave();
            }
        }
    }

    /**
     * Engine closing: tells a ready peer that this side closes on purpose ({@link PeerHandshake#sayGoodbye}).
     *
     * @param reason why, when that is another peer's failure, or null
     */
    void sayGoodbye(String reason) {
        handshake.sayGoodbye(reason);
    }

    /** @return true once our BYE was delivered, or there is no one left to deliver it to */
    boolean goodbyeDone() {
        return handshake.goodbyeDone();
    }

    /** @return true if the channel ended because either side closed its engine, not by a failure */
    boolean closedCleanly() {
        return handshake.closedCleanly();
    }

    /**
     * Takes the peer down: wakes every blocked writer and reader of it with an exception naming it. Idempotent.
     *
     * @param cause why
     */
    void fail(Throwable cause) {
        if (!open || !failing.compareAndSet(false, true)) {
            return;
        }
        RdmxException refusal = handshake.refusal();
        if (refusal != null) {
            cause = refusal; // whatever closed the connection then, the mismatch is the reason
        }
        failure = ChannelErrors.peerFailure(name(), cause);
        open = false;
        handshake.failed(failure);
        if (loss.fail()) {
            announceLoss(rings);
        }
        connection.close();
        gate.retire(); // the release follows once nothing holds the peer's memory any more
    }

    /**
     * Tells every blocked writer and every reader of the engine that this peer is lost; each reader holds the
     * peer's memory until it reported the loss and forgot the rings ({@link #readerDone}). Once, by the failing
     * thread or, when the rings came after the failure, by the completion thread that attached them; either holds
     * the gate, so the holds are taken before it can open.
     */
    private void announceLoss(RingSet r) {
        gate.hold(cfg.workers());
        r.wakeWriters();
        engine.peerFailed(this, failure);
    }

    /**
     * Reader thread: that reader reported this peer's loss and holds none of its rings any more (not in its scan,
     * its parked words or its sleeper; a ring still in its ready queue is dropped unread). The last one lets the
     * memory go.
     */
    void readerDone() {
        gate.leave();
    }

    /** @return true once this peer's memory was released (tests) */
    boolean released() {
        return released.get();
    }

    /** The failed peer's last hold went: its memory goes, and the engine forgets it. */
    private void releaseFailed() {
        try {
            release();
        } finally {
            engine.forget(this);
        }
    }

    /**
     * Releases the regions and the ring memory reserved for them: once the peer failed and nothing holds them
     * ({@link ReleaseGate}), or when the engine closes. The connection is closed first, so a thread that still
     * posts from them is told the connection is closed, not that a region is gone. Idempotent.
     */
    void release() {
        if (!released.compareAndSet(false, true)) {
            return;
        }
        connection.close();
        RingSet r = rings;
        if (r != null) {
            r.release();
        }
        for (Region reg : new Region[] {control, extraRecvs}) {
            releaseQuietly(reg);
        }
    }

    /**
     * Releases a region unless it was released already: the node's own close may force-release it at the same
     * time (its "release of released region" is then no error of this engine).
     *
     * @param reg the region, or null
     */
    static void releaseQuietly(Region reg) {
        if (reg != null && reg.refCnt() > 0) {
            try {
                reg.release();
            } catch (IllegalStateException raced) {
                // the node's close released it between the check and the release
            }
        }
    }
}
