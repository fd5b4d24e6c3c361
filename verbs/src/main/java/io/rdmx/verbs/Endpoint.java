package io.rdmx.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.Post;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.internal.CmSetup;
import io.rdmx.transport.internal.KeepAlive;
import io.rdmx.transport.internal.RegionImpl;
import io.rdmx.transport.internal.WorkQueues;
import io.rdmx.verbs.Native.Consts;
import io.rdmx.verbs.Native.IbvQpInitAttr;
import io.rdmx.verbs.Native.IbvRecvWr;
import io.rdmx.verbs.Native.IbvSendWr;
import io.rdmx.verbs.Native.IbvSge;
import io.rdmx.verbs.Native.IbvWc;
import io.rdmx.verbs.Native.More;
import io.rdmx.verbs.Native.RdmaCmId;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One rdma_cm id with its RC queue pair, its CQ (on the node's completion channel), a small control region for
 * the setup exchange, and the bookkeeping of posted requests. Native objects are created and destroyed on the
 * node's progress thread (or by the closing thread once that thread has stopped); posting threads touch the
 * queue pair only under {@link #lock} while it is {@link #usable()}.
 *
 * <p>Hardware work request ids: user sends carry their sequence number, user receives {@link #RECV_BIT} plus
 * theirs, the setup messages {@link #CTRL_BIT}. RC completes each queue in order, so a signaled send completion
 * also retires the unsignaled sends before it; every {@code depth/2}-th unsignaled send is signaled internally
 * so the send queue cannot fill with requests nobody retires.
 */
@SuppressWarnings("restricted")
final class Endpoint extends CmSetup<VerbsConnection> {
    static final long RECV_BIT = WorkQueues.RECV_BIT;
    static final long CTRL_BIT = WorkQueues.CTRL_BIT;
    private static final ValueLayout.OfInt BE_INT = JAVA_INT.withOrder(ByteOrder.BIG_ENDIAN);
    private static final int INLINE = 64;
    /** Bound on how long a user's close waits for posted sends (see {@link #close()}). */
    static final long LINGER_MS = 500;
    private static final boolean LITTLE = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;
    private static final int WC_BATCH = 32;

    final VerbsNode node;
    final MemorySegment id;
    final ReentrantLock lock = new ReentrantLock();

    private final Arena arena = Arena.ofShared();
    private final int sdepth;
    private final int rdepth;
    private MemorySegment cq = MemorySegment.NULL;
    /** This queue pair's own protection domain and what is registered in it (under {@link #lock}). */
    private final EndpointDomain domain = new EndpointDomain();
    private MemorySegment qp = MemorySegment.NULL;
    /** The setup messages' and keep-alive probes' region and work requests (posted under {@link #lock}). */
    private final ControlRegion control;
    private int inlineCap;
    private boolean qpAlive;
    private boolean closed;
    private boolean destroyed;
    private volatile RemoteRegion peerProbe;
    private final KeepAlive keepAlive;

    private final MemorySegment sendWr;
    private final MemorySegment sendSge;
    private final MemorySegment recvWr;
    private final MemorySegment recvSge;
    private final MemorySegment bad;
    private final MemorySegment wcs;
    /** Views of the work request structs for the posting path (cheaper than segment accessors before C2). */
    private final ByteBuffer sWr;
    private final ByteBuffer sSge;
    private final ByteBuffer rWr;
    private final ByteBuffer rSge;

    private final WorkQueues queues;

    Endpoint(VerbsNode node, MemorySegment id, boolean active, String dialAddress,
             CompletableFuture<AbstractConnection> future, long deadlineNanos) {
        super(active, dialAddress, future, deadlineNanos);
        this.node = node;
        this.id = id.reinterpret(64);
        this.sdepth = node.options().sendQueueDepth();
        this.rdepth = node.options().recvQueueDepth();
        sendWr = arena.allocate(IbvSendWr.SIZE, 8);
        sendSge = arena.allocate(IbvSge.SIZE, 8);
        recvWr = arena.allocate(IbvRecvWr.SIZE, 8);
        recvSge = arena.allocate(IbvSge.SIZE, 8);
        bad = arena.allocate(ADDRESS);
        control = new ControlRegion(arena);
        wcs = arena.allocate(IbvWc.SIZE * WC_BATCH, 8);
        sendWr.set(ADDRESS, IbvSendWr.SG_LIST, sendSge);
        recvWr.set(ADDRESS, IbvRecvWr.SG_LIST, recvSge);
        sWr = sendWr.asByteBuffer().order(ByteOrder.nativeOrder());
        sSge = sendSge.asByteBuffer().order(ByteOrder.nativeOrder());
        rWr = recvWr.asByteBuffer().order(ByteOrder.nativeOrder());
        rSge = recvSge.asByteBuffer().order(ByteOrder.nativeOrder());
        queues = new WorkQueues(node.name(), sdepth, rdepth);
        keepAlive = new KeepAlive(node.options().peerTimeout().toNanos(), System.nanoTime());
    }

    long idKey() {
        return id.address();
    }

    long cqKey() {
        return cq.address();
    }

    // ------------------------------------------------------------------ setup (progress thread)

    /** The CQ of this queue pair alone, on the node's completion channel, armed. */
    @Override
    protected void prepareQueues() throws Throwable {
        MemorySegment st = Lib.state();
        MemorySegment ctx = id.get(ADDRESS, RdmaCmId.VERBS);
        if (!ctx.equals(MemorySegment.NULL) && ctx.address() != node.context().address()) {
            throw new RdmxException("verbs: the route to " + peerLabel() + " leaves through another RDMA device"
                + " than node '" + node.name() + "' (bound to " + node.address() + ")");
        }
        cq = (MemorySegment) Lib.CREATE_CQ.invoke(st, node.context(), sdepth + rdepth + 8, MemorySegment.NULL,
            node.compChannel(), 0);
        if (cq.equals(MemorySegment.NULL)) {
            throw new RdmxException("verbs: ibv_create_cq(" + (sdepth + rdepth + 8) + " entries) failed: errno="
                + Lib.errno(st));
        }
        node.cqCreated(this);
        node.armCq(cq);
    }

    @Override
    protected void allocateDomain() throws Throwable {
        MemorySegment st = Lib.state();
        MemorySegment pd = (MemorySegment) Lib.ALLOC_PD.invoke(st, node.context());
        if (pd.equals(MemorySegment.NULL)) {
            throw new RdmxException("verbs: ibv_alloc_pd for " + peerLabel() + " failed: errno=" + Lib.errno(st));
        }
        domain.allocated(pd);
    }

    @Override
    protected void createQp() throws Throwable {
        MemorySegment st = Lib.state();
        MemorySegment attr = arena.allocate(IbvQpInitAttr.SIZE, 8);
        attr.set(ADDRESS, IbvQpInitAttr.SEND_CQ, cq);
        attr.set(ADDRESS, IbvQpInitAttr.RECV_CQ, cq);
        attr.set(JAVA_INT, IbvQpInitAttr.CAP_MAX_SEND_WR, sdepth + 4);
        attr.set(JAVA_INT, IbvQpInitAttr.CAP_MAX_RECV_WR, rdepth + 2);
        attr.set(JAVA_INT, IbvQpInitAttr.CAP_MAX_SEND_SGE, 1);
        attr.set(JAVA_INT, IbvQpInitAttr.CAP_MAX_RECV_SGE, 1);
        attr.set(JAVA_INT, IbvQpInitAttr.CAP_MAX_INLINE_DATA, INLINE);
        attr.set(JAVA_INT, IbvQpInitAttr.QP_TYPE, Consts.IBV_QPT_RC);
        int rc = (int) Lib.CREATE_QP.invoke(st, id, domain.pd(), attr);
        if (rc != 0) {
            throw new RdmxException("verbs: rdma_create_qp(send " + (sdepth + 4) + ", recv " + (rdepth + 2)
                + ") failed: errno=" + Lib.errno(st));
        }
        inlineCap = attr.get(JAVA_INT, IbvQpInitAttr.CAP_MAX_INLINE_DATA);
        qp = id.get(ADDRESS, RdmaCmId.QP);
    }

    /** The control region; the queue pair is usable from here on. */
    @Override
    protected void registerControl() throws Throwable {
        control.register(domain.pd());
        lock.lock();
        try {
            qpAlive = true;
        } finally {
            unlock();
        }
    }

    @Override
    protected ByteBuffer setupSendArea() {
        return control.sendArea().asByteBuffer();
    }

    @Override
    protected RemoteRegion probeTarget() {
        return control.probeTarget();
    }

    void peerProbe(RemoteRegion target) {
        peerProbe = target;
    }

    /**
     * Keep-alive (progress thread), by the policy of {@link KeepAlive}: an idle connection WRITEs a few bytes to
     * the peer's probe target every quarter of the peer timeout; RC acknowledges it in hardware, so only a peer
     * whose machine, NIC or queue pair is gone fails to. A probe unanswered for the peer timeout fails the
     * connection, naming the peer. While user sends are outstanding they are the probes.
     *
     * @param now {@code System.nanoTime()}
     */
    @Override
    protected void keepAlive(long now) {
        VerbsConnection c = connection();
        RemoteRegion target = peerProbe;
        if (c == null || target == null) {
            return;
        }
        String why = null;
        lock.lock();
        try {
            if (!usable()) {
                return;
            }
            KeepAlive.Decision d = keepAlive.decide(now, queues.sendsOutstanding());
            if (d == KeepAlive.Decision.PEER_SILENT) {
                why = keepAlive.silentPeerReason(c.peerName(), c.peerAddress());
            } else if (d == KeepAlive.Decision.PROBE) {
                int rc;
                try {
                    rc = control.postProbe(node.postSendFn(), qp, target);
                } catch (Throwable t) {
                    throw new IllegalStateException("verbs: post_send call failed", t);
                }
                if (rc == 0) {
                    keepAlive.probePosted(now);
                } else if (rc != More.ENOMEM) {
                    why = "keep-alive WRITE to peer '" + c.peerName() + "' could not be posted: errno=" + rc;
                }
            }
        } finally {
            unlock();
        }
        if (why != null) {
            c.fail(new ConnectionClosedException(c.peerName(), why, null));
        }
    }

    private void probeDone(int status) {
        VerbsConnection c = connection();
        keepAlive.probeCompleted(System.nanoTime());
        if (status != Consts.IBV_WC_SUCCESS && c != null && !closed) {
            c.fail(new ConnectionClosedException(c.peerName(), KeepAlive.unreachableReason(c.peerName(),
                c.peerAddress(), WcStatus.name(status)), null));
        }
    }

    /**
     * Shortens the RNR NAK delay this queue pair asks of a sender whose SEND finds no receive posted. rdma_cm
     * leaves {@code min_rnr_timer} at 0, which encodes 655 ms: a SEND racing the peer's first receives would
     * stall that long. Code 1 is 0.01 ms, so a sender retries almost at once (rnr_retry is unlimited). Called
     * once the queue pair is in RTS (RTS to RTS may change this attribute).
     */
    @Override
    protected void readyToSend() {
        lock.lock();
        try (Arena a = Arena.ofConfined()) {
            if (!usable()) {
                return;
            }
            MemorySegment attr = a.allocate(512, 8);
            attr.set(JAVA_BYTE, More.QP_ATTR_MIN_RNR_TIMER, (byte) 1);
            int rc = (int) Lib.MODIFY_QP.invoke(Lib.state(), qp, attr, More.IBV_QP_MIN_RNR_TIMER);
            if (rc != 0) {
                node.log().debug("verbs: ibv_modify_qp(min_rnr_timer) for {} returned {}", peerLabel(), rc);
            }
        } catch (Throwable t) {
            node.log().debug("verbs: ibv_modify_qp(min_rnr_timer)", t);
        } finally {
            unlock();
        }
    }

    /**
     * Test support: moves the queue pair to the error state without telling the peer (no disconnect), as if this
     * host had frozen: the peer's hardware retries go unanswered.
     */
    void freeze() {
        lock.lock();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = a.allocate(512, 8);
            attr.set(JAVA_INT, More.QP_ATTR_QP_STATE, More.IBV_QPS_ERR);
            Lib.MODIFY_QP.invoke(Lib.state(), qp, attr, More.IBV_QP_STATE);
            closed = true;
        } catch (Throwable t) {
            throw new IllegalStateException("verbs: ibv_modify_qp(ERR) failed", t);
        } finally {
            unlock();
        }
    }

    @Override
    protected void postSetupReceive() throws RdmxException {
        int rc;
        lock.lock();
        try {
            if (!usable()) {
                throw new RdmxException("verbs: connection to " + peerLabel() + " closed during setup");
            }
            rc = control.postReceive(node.postRecvFn(), qp);
        } catch (RdmxException e) {
            throw e;
        } catch (Throwable t) {
            throw new RdmxException("verbs: posting the setup receive for " + peerLabel() + " failed: " + t, t);
        } finally {
            unlock();
        }
        if (rc != 0) {
            throw new RdmxException("verbs: posting the setup receive for " + peerLabel() + " failed: " + rc);
        }
    }

    @Override
    protected void postSetupSend(int length) throws RdmxException {
        lock.lock();
        try {
            if (!usable()) {
                throw new RdmxException("verbs: connection to " + peerLabel() + " closed during setup");
            }
            int rc = control.postSend(node.postSendFn(), qp, length);
            if (rc != 0) {
                throw new RdmxException("verbs: posting the setup message to " + peerLabel() + " failed: " + rc);
            }
        } catch (RdmxException e) {
            throw e;
        } catch (Throwable t) {
            throw new RdmxException("verbs: posting the setup message failed: " + t, t);
        } finally {
            unlock();
        }
    }

    // ------------------------------------------------------------------ registrations in this protection domain

    /** @return this queue pair's protection domain (valid while the endpoint is usable, under {@link #lock}) */
    MemorySegment pd() {
        return domain.pd();
    }

    /**
     * A region's registration in this queue pair's protection domain, made if there is none (remote access if the
     * region allows this peer, see {@link Registrations}). Any thread.
     *
     * @param regs the region's registrations
     * @return the {@code struct ibv_mr}
     * @throws RdmxException if the endpoint is closed or the registration fails
     * @throws IllegalStateException if the region was released
     */
    MemorySegment registrationOf(Registrations regs) throws RdmxException {
        lock.lock();
        try {
            if (!usable()) {
                throw new RdmxException("verbs: connection to " + peerLabel() + " is closed");
            }
            return domain.registrationOf(regs, this);
        } finally {
            unlock();
        }
    }

    /**
     * The local key of a region posted on this queue pair: its registration in this protection domain, made on its
     * first post here. Under {@link #lock}, the endpoint usable.
     */
    private int localKeyOf(RegionImpl local) {
        try {
            return domain.localKeyOf((Registrations) local.handle(), this);
        } catch (RdmxException e) {
            throw new IllegalStateException("verbs: " + local + " cannot be used on the connection to " + peerLabel()
                + ": " + e.getMessage(), e);
        }
    }

    /**
     * A released region's registration here is gone ({@link Registrations#release}); any thread.
     *
     * @param regs the region's registrations
     */
    void forget(Registrations regs) {
        domain.forget(regs);
    }

    // ------------------------------------------------------------------ posting (any thread)

    private boolean usable() {
        return qpAlive && !closed;
    }

    int postSend(Opcode op, long wrId, RegionImpl local, int localOffset, int length, RemoteRegion remote,
                 long remoteOffset, int imm, boolean signaled) throws ConnectionClosedException {
        lock.lock();
        try {
            if (!usable()) {
                connection().throwClosed();
            }
            int rkey = op == Opcode.SEND ? 0 : remote.remoteKey();
            long seq = queues.reserveSend(op, wrId, length, rkey, remoteOffset, signaled);
            if (seq < 0) {
                return Post.SEND_QUEUE_FULL;
            }
            boolean signal = queues.mustSignal(seq);
            int flags = signal ? Consts.IBV_SEND_SIGNALED : 0;
            if (length > 0 && length <= inlineCap && op != Opcode.READ) { // a READ's local buffer is its target
                flags |= More.IBV_SEND_INLINE;
            }
            sWr.putLong((int) IbvSendWr.WR_ID, seq);
            sWr.putInt((int) IbvSendWr.NUM_SGE, length == 0 ? 0 : 1);
            sWr.putInt((int) IbvSendWr.SEND_FLAGS, flags);
            sSge.putLong((int) IbvSge.ADDR, local.address() + localOffset);
            sSge.putInt((int) IbvSge.LENGTH, length);
            sSge.putInt((int) IbvSge.LKEY, length == 0 ? 0 : localKeyOf(local));
            int opcode = WrOpcodes.of(op);
            if (op == Opcode.WRITE_WITH_IMM) {
                sWr.putInt((int) IbvSendWr.IMM_DATA, LITTLE ? Integer.reverseBytes(imm) : imm); // __be32
            }
            sWr.putInt((int) IbvSendWr.OPCODE, opcode);
            if (op != Opcode.SEND) {
                sWr.putLong((int) IbvSendWr.RDMA_REMOTE_ADDR, remote.address() + remoteOffset);
                sWr.putInt((int) IbvSendWr.RDMA_RKEY, remote.remoteKey());
            }
            int rc;
            try {
                rc = (int) Lib.POST_SEND_OP.invokeExact(node.postSendFn(), qp, sendWr, bad);
            } catch (Throwable t) {
                throw new IllegalStateException("verbs: post_send call failed", t);
            }
            if (rc == More.ENOMEM) {
                return Post.SEND_QUEUE_FULL;
            }
            if (rc != 0) {
                failLater("post_send on the connection to " + peerLabel() + " failed: errno=" + rc);
                connection().throwClosed();
            }
            queues.sendPosted(seq, signal);
            return Post.OK;
        } finally {
            unlock();
        }
    }

    int postRecv(long wrId, RegionImpl local, int localOffset, int length) throws ConnectionClosedException {
        lock.lock();
        try {
            if (!usable()) {
                connection().throwClosed();
            }
            long hwId = queues.reserveRecv(wrId, length);
            if (hwId < 0) {
                return Post.RECV_QUEUE_FULL;
            }
            rWr.putLong((int) IbvRecvWr.WR_ID, hwId);
            rWr.putInt((int) IbvRecvWr.NUM_SGE, length == 0 ? 0 : 1);
            rSge.putLong((int) IbvSge.ADDR, local.address() + localOffset);
            rSge.putInt((int) IbvSge.LENGTH, length);
            rSge.putInt((int) IbvSge.LKEY, length == 0 ? 0 : localKeyOf(local));
            int rc;
            try {
                rc = (int) Lib.POST_RECV_OP.invokeExact(node.postRecvFn(), qp, recvWr, bad);
            } catch (Throwable t) {
                throw new IllegalStateException("verbs: post_recv call failed", t);
            }
            if (rc == More.ENOMEM) {
                return Post.RECV_QUEUE_FULL;
            }
            if (rc != 0) {
                failLater("post_recv on the connection to " + peerLabel() + " failed: errno=" + rc);
                connection().throwClosed();
            }
            queues.recvPosted();
            return Post.OK;
        } finally {
            unlock();
        }
    }

    private boolean hasOutstandingSends() {
        lock.lock();
        try {
            return !destroyed && qpAlive && queues.sendsOutstanding();
        } finally {
            unlock();
        }
    }

    private void failLater(String why) {
        VerbsConnection c = connection();
        closed = true;
        node.execute(() -> c.fail(new ConnectionClosedException(c.peerName(), why, null)));
    }

    /**
     * Releases {@link #lock}; the thread that releases it last hands over the completions produced under it
     * ({@link VerbsConnection#postLockReleased}: a handler may post, and a post takes the lock).
     */
    private void unlock() {
        lock.unlock();
        VerbsConnection c = connection();
        if (c != null) {
            c.postLockReleased();
        }
    }

    // ------------------------------------------------------------------ completions (progress thread)

    /**
     * Drains the CQ: the progress thread, or a spinning waiter that polls it itself
     * ({@link VerbsConnection#awaitInput}). Completions go out in poll order whichever thread polled them.
     *
     * @return completions polled
     */
    int drain() {
        int total = 0;
        while (true) {
            int n;
            lock.lock();
            try {
                if (cq.equals(MemorySegment.NULL) || destroyed) {
                    return total;
                }
                try {
                    n = (int) Lib.POLL_CQ_OP.invokeExact(node.pollCqFn(), cq, WC_BATCH, wcs);
                } catch (Throwable t) {
                    throw new IllegalStateException("verbs: poll_cq call failed", t);
                }
                if (n < 0) {
                    node.log().warn("verbs: poll_cq on the connection to {} returned {}", peerLabel(), n);
                    return total;
                }
                total += n;
                for (int i = 0; i < n; i++) {
                    handle((long) i * IbvWc.SIZE); // read in place: no slice object per completion
                }
            } finally {
                unlock();
            }
            if (n < WC_BATCH) {
                return total;
            }
        }
    }

    @Override
    protected void deliverPending() {
        drain();
    }

    /** @param at the completion's offset in {@link #wcs} */
    private void handle(long at) {
        MemorySegment wc = wcs;
        long wrId = wc.get(JAVA_LONG, at + IbvWc.WR_ID);
        int status = wc.get(JAVA_INT, at + IbvWc.STATUS);
        if (wrId == ControlRegion.CTRL_PROBE) {
            probeDone(status);
            return;
        }
        if ((wrId & CTRL_BIT) != 0) {
            boolean received = wrId == ControlRegion.CTRL_RECV;
            boolean ok = status == Consts.IBV_WC_SUCCESS;
            node.flow().onSetupCompletion(this, received, ok ? null : WcStatus.name(status), ok && received
                ? control.received(wc.get(JAVA_INT, at + IbvWc.BYTE_LEN)) : null);
            return;
        }
        VerbsConnection c = connection();
        if (c == null || closed) {
            return; // flushed by the connection's close already
        }
        boolean ok = status == Consts.IBV_WC_SUCCESS;
        boolean recv = (wrId & RECV_BIT) != 0;
        WorkQueues.Failure failure = WcStatus.failure(status, node.softRoce(), recv,
            !recv && status == More.IBV_WC_REM_OP_ERR ? queues.sendOpcode(wrId) : null); // the opcode: rxe's case
        boolean hasImm = ok && (wc.get(JAVA_INT, at + IbvWc.WC_FLAGS) & Consts.IBV_WC_WITH_IMM) != 0;
        queues.complete(c, wrId, ok, failure, ok ? null : WcStatus.name(status), wc.get(JAVA_INT, at + IbvWc.BYTE_LEN),
            hasImm, hasImm ? wc.get(BE_INT, at + IbvWc.IMM_DATA) : 0);
    }

    /**
     * Completes every outstanding request as flushed (the connection went down).
     *
     * @param detail names the peer and the cause
     */
    void flushAll(String detail) {
        lock.lock();
        try {
            closed = true;
            VerbsConnection c = connection();
            if (c != null) {
                queues.flushAll(c, detail);
            }
        } finally {
            unlock();
        }
    }

    // ------------------------------------------------------------------ teardown

    /**
     * Stops posting, disconnects (the peer sees DISCONNECTED) and schedules the destruction. Any thread.
     *
     * <p>Called by a user thread on a healthy connection, it first lingers up to {@value #LINGER_MS} ms for the
     * sends already posted to complete: rdma_cm's disconnect travels apart from the data and may overtake it,
     * and a send completion means the peer has the data, so waiting for them delivers what was posted before
     * the close (a SEND waiting for a receive the peer never posts is flushed once the linger ends).
     */
    @Override
    protected void close() {
        if (Thread.currentThread() != node.progressThread()) {
            long deadline = System.nanoTime() + LINGER_MS * 1_000_000L;
            while (System.nanoTime() - deadline < 0 && hasOutstandingSends()) {
                java.util.concurrent.locks.LockSupport.parkNanos(200_000L);
            }
        }
        boolean torn;
        lock.lock();
        try {
            closed = true;
            // under the lock that the teardown takes first (beginTeardown): once it began, the id may be destroyed,
            // and rdma_disconnect on a destroyed id reads freed memory (a SIGSEGV in librdmacm, seen when a late
            // answer met a connect attempt that had timed out and been torn down)
            torn = destroyed;
            if (!torn) {
                try {
                    Lib.DISCONNECT.invoke(Lib.state(), id);
                } catch (Throwable t) {
                    node.log().debug("verbs: rdma_disconnect", t);
                }
            }
        } finally {
            unlock();
        }
        if (!torn) {
            node.execute(this::destroy);
        }
    }

    /** Destroys the QP, CQ, control region, domain and id (the flow's teardown). Idempotent. */
    void destroy() {
        node.flow().destroy(this);
    }

    /** Stops every use of the queue pair, once: the flow's teardown follows (progress or closing thread). */
    @Override
    protected boolean beginTeardown() {
        lock.lock();
        try {
            if (destroyed) {
                return false;
            }
            destroyed = true;
            closed = true;
            qpAlive = false;
            domain.close(); // none is registered once unusable
        } finally {
            unlock();
        }
        return true;
    }

    /** The queue pair, then its CQ. */
    @Override
    protected void destroyQueuePair() throws Throwable {
        MemorySegment st = Lib.state();
        if (!qp.equals(MemorySegment.NULL)) {
            Lib.DESTROY_QP.invoke(st, id);
        }
        if (!cq.equals(MemorySegment.NULL)) {
            int rc = (int) Lib.DESTROY_CQ.invoke(st, cq);
            if (rc != 0) {
                node.log().warn("verbs: ibv_destroy_cq for {} failed: {}", peerLabel(), rc);
            }
        }
    }

    @Override
    protected void deregisterControl() throws Throwable {
        control.deregister();
    }

    @Override
    protected void destroyDomain() throws Throwable {
        domain.destroy(this);
    }

    @Override
    protected void destroyId() throws Throwable {
        Lib.DESTROY_ID.invoke(Lib.state(), id);
    }

    /** The endpoint's memory (work requests, control region). */
    @Override
    protected void tornDown() {
        arena.close();
    }
}
