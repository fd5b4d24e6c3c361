package io.rdmx.disni;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaEventChannel;
import io.rdmx.transport.Access;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.internal.KeepAlive;
import io.rdmx.transport.internal.RegionImpl;
import io.rdmx.transport.internal.RdmaDevices;
import io.rdmx.transport.internal.RdmaCmFlow;
import io.rdmx.transport.internal.RdmaNode;
import io.rdmx.transport.internal.SetupMessage;
import io.rdmx.transport.internal.WorkQueues;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A DiSNI node: rdma_cm through DiSNI's event channel, a protection domain per queue pair (keys are honoured on
 * the connection whose peer was told them, as on {@code verbs}: {@link Registrations}), and one CQ shared by the node's
 * queue pairs (DiSNI waits for completion events per CQ), sized by {@value #CQ_SIZE_PROP} (65536 entries, or the
 * largest {@code 2^k - 1} below that the device accepts: DiSNI cannot query its {@code max_cqe}). Two threads: the
 * rdma_cm event thread and the CQ thread, each waiting with a 100 ms bound so close stops them. Connection
 * setup is the {@code verbs} provider's: rdma_cm connect/accept, then {@link SetupMessage} over the queue pair.
 *
 * <p>Each queue pair has a control region, registered for remote WRITE so the peer can probe it:
 * <pre>
 *   0                    CTRL                         2*CTRL - KeepAlive.TARGET_BYTES     2*CTRL
 *   +--------------------+----------------------------+-----------------------------------+
 *   | setup receive      | setup send                 | keep-alive target (peer's probes) |
 *   +--------------------+----------------------------+-----------------------------------+
 * </pre>
 * Once connected, the rdma_cm thread's sweep drives the keep-alive of every connection
 * ({@link DisniConnection#keepAlive}, the policy of {@link KeepAlive}): a peer that stops answering without a
 * disconnect fails its connection within the peer timeout, as on {@code verbs}.
 */
final class DisniNode extends RdmaNode {
    /** System property: entries of the node's shared CQ (bounds outstanding requests over all connections). */
    static final String CQ_SIZE_PROP = "rdmx.disni.cqSize";
    static final int WC_SUCCESS = 0;
    static final int WC_WITH_IMM = 2;
    static final int WC_LOC_QP_OP_ERR = 2;
    static final int WC_REM_OP_ERR = 11;
    static final Logger LOG = LoggerFactory.getLogger(DisniNode.class);
    /** Bytes of each half (receive, send) of a queue pair's control region. */
    static final int CTRL = 64 * 1024;
    static final long CTRL_RECV = WorkQueues.CTRL_BIT | 1;
    static final long CTRL_SEND = WorkQueues.CTRL_BIT | 2;
    /** The hardware id of keep-alive probes. */
    static final long CTRL_PROBE = WorkQueues.CTRL_BIT | 3;
    private static final int[] EVENT_MS = {100};
    /** The smallest CQ a node tries before giving up. */
    private static final int MIN_CQ = 256;

    /** Whether this process warned that file regions are copied (a kernel that cannot pin read-only mappings). */
    private static final AtomicBoolean WARNED_FILE_COPY = new AtomicBoolean();
    private final RdmaEventChannel channel;
    private final RdmaCmId listenId;
    private final IbvContext ctx;
    private final IbvPd pd;
    private final IbvCompChannel compChannel;
    private final IbvCQ cq;
    /** Serializes the polls of {@link #cq} ({@link #drainCq}); guards {@link #poll} and {@link #wcs}. */
    private final Object pollLock = new Object();
    private final IbvWC[] wcs = newWcs(32);
    private com.ibm.disni.verbs.SVCPollCq poll;
    private final int cqSize;
    /** Whether the device is Soft-RoCE (rxe), whose completion statuses deviate (see the four-argument failure). */
    private final boolean softRoce;
    private final Map<RdmaCmId, DisniSetup> setups = new ConcurrentHashMap<>();
    private final Map<Integer, DisniSetup> byQp = new ConcurrentHashMap<>();
    private final Thread cmThread;
    private final Thread cqThread;
    private volatile boolean stopping;
    private int reservedCqEntries;

    /** The rdma_cm setup flow, shared with the verbs provider. */
    private final DisniCmFlow flow;

    DisniNode(DisniFabric fabric, NodeOptions options) throws RdmxException {
        super(fabric, options, "disni");
        this.flow = new DisniCmFlow(this);
        try {
            channel = RdmaEventChannel.createEventChannel();
            listenId = channel.createId(RdmaCm.RDMA_PS_TCP);
            listenId.bindAddr(new InetSocketAddress(ip, 0));
            listenId.listen(Math.min(options.acceptBacklog(), 1024));
            ctx = listenId.getVerbs();
            if (ctx == null) {
                throw new RdmxException("disni: " + ip.getHostAddress() + " is not an address of an RDMA device");
            }
            pd = ctx.allocPd();
            compChannel = ctx.createCompChannel();
            int entries = Integer.getInteger(CQ_SIZE_PROP, 65536);
            IbvCQ created = null;
            while (created == null) {
                try {
                    created = ctx.createCQ(compChannel, entries, 0);
                } catch (IOException e) {
                    // DiSNI cannot query the device's max_cqe (rxe's is 32767): fit under it, as ibv_create_cq says
                    int smaller = smallerCq(entries);
                    if (smaller < MIN_CQ) {
                        throw e;
                    }
                    LOG.debug("disni: node '{}': a CQ of {} entries is refused ({}), trying {}", options.name(),
                        entries, e.getMessage(), smaller);
                    entries = smaller;
                }
            }
            cq = created;
            cqSize = entries;
            cq.reqNotification(false).execute().free();
            InetSocketAddress bound = (InetSocketAddress) listenId.getSource();
            bound(bound.getPort());
        } catch (IOException e) {
            throw new RdmxException("disni: node '" + options.name() + "' cannot open on " + ip.getHostAddress() + ": "
                + e.getMessage(), e);
        }
        softRoce = softRoce(ip);
        cmThread = new Thread(this::cmLoop, "rdmx-disni-cm-" + name());
        cqThread = new Thread(this::cqLoop, "rdmx-disni-cq-" + name());
        cmThread.setDaemon(true);
        cqThread.setDaemon(true);
        cmThread.start();
        cqThread.start();
    }

    /**
     * The next CQ size to try after {@code entries} was refused: devices' limits are mostly {@code 2^k - 1}
     * (rxe: 32767), so 65536 is followed by 65535, then 32767, 16383 and so on.
     *
     * @param entries the refused size
     * @return a smaller size
     */
    static int smallerCq(int entries) {
        boolean allOnes = (entries & (entries + 1)) == 0;
        return allOnes ? entries >>> 1 : Integer.highestOneBit(entries) - 1;
    }

    /**
     * Maps a failed completion of a user request, with Soft-RoCE's two deviations (as the verbs provider does): rxe
     * completes a receive too small for the SEND that arrived as a malformed WQE ({@code IBV_WC_LOC_QP_OP_ERR},
     * copy_data's -EINVAL in rxe_resp.c) instead of {@code IBV_WC_LOC_LEN_ERR}, and that SEND with
     * {@code IBV_WC_REM_OP_ERR} instead of {@code IBV_WC_REM_INV_REQ_ERR}. Our SGEs are checked, so the length is
     * the cause.
     *
     * @param status the {@code ibv_wc_status}
     * @param softRoce whether the device is rxe
     * @param recv whether the request is a receive
     * @param sendOp the opcode of a send-queue request, null for a receive
     * @return the failure
     */
    static WorkQueues.Failure failure(int status, boolean softRoce, boolean recv, Opcode sendOp) {
        if (softRoce && recv && status == WC_LOC_QP_OP_ERR) {
            return WorkQueues.Failure.LOCAL_LENGTH;
        }
        if (softRoce && !recv && status == WC_REM_OP_ERR && sendOp == Opcode.SEND) {
            return WorkQueues.Failure.REMOTE_INVALID;
        }
        return failure(status);
    }

    static WorkQueues.Failure failure(int status) {
        switch (status) {
            case 10:
                return WorkQueues.Failure.REMOTE_ACCESS;
            case 9:
                return WorkQueues.Failure.REMOTE_INVALID;
            case 1:
                return WorkQueues.Failure.LOCAL_LENGTH;
            case 5:
                return WorkQueues.Failure.FLUSHED;
            default:
                return WorkQueues.Failure.OTHER;
        }
    }

    /** @return whether the RDMA device whose interface has {@code ip} is an rxe device (as verbs decides it) */
    private static boolean softRoce(InetAddress ip) {
        for (RdmaDevices.Device d : RdmaDevices.list()) {
            if (ip.equals(d.address())) {
                return softRoce(d.name());
            }
        }
        return false;
    }

    boolean softRoce() {
        return softRoce;
    }

    // ------------------------------------------------------------------ memory

    /**
     * Memory registered in the node's protection domain: its home registration, which no queue pair is in, so its
     * keys reach nothing until the memory is registered in a connection's domain ({@link Registrations}).
     */
    @Override
    protected Allocation allocate(int length, int access, int remoteKey) throws RdmxException {
        checkOpen();
        ByteBuffer mem = ByteBuffer.allocateDirect(length);
        IbvMr mr = register(pd, mem, access);
        Registrations regs = new Registrations(this, mem, access, null);
        return new Allocation(mem, () -> {
            regs.release();
            deregister(mr);
        }, mr.getAddr(), mr.getLkey(), mr.getRkey(), regs);
    }

    /**
     * A region granted to one connection: registered in that connection's protection domain alone (with remote
     * access), so its key is honoured on that queue pair only; used on another connection (as a local source) it is
     * registered there for local access only. Its descriptor carries this key.
     */
    @Override
    protected Allocation allocateGranted(int length, int access, int remoteKey, AbstractConnection grantee)
        throws RdmxException {
        checkOpen();
        Domain d = ((DisniConnection) grantee).domain();
        ByteBuffer mem = ByteBuffer.allocateDirect(length);
        Registrations regs = new Registrations(this, mem, access, d);
        IbvMr mr = d.registrationOf(regs);
        return new Allocation(mem, regs::release, mr.getAddr(), mr.getLkey(), mr.getRkey(), regs);
    }

    /** A node-wide region's key on one connection: its registration in that queue pair's protection domain. */
    @Override
    protected RemoteRegion describe(RegionImpl region, AbstractConnection via) throws RdmxException {
        IbvMr mr = ((DisniConnection) via).domain().registrationOf((Registrations) region.handle());
        return new RemoteRegion(region.address(), region.length(), mr.getRkey(), region.name());
    }

    /**
     * A range of a file, mapped read-only by the node, registered with {@code IBV_ACCESS_REMOTE_READ} alone (no
     * {@code LOCAL_WRITE}: {@code ibv_reg_mr} cannot take it on pages it may not write): a home registration in the
     * node's domain (a node-wide region's keys), and one per connection's domain as it is described there, or, granted,
     * in the grantee's domain alone (its keys), as {@link #allocate} does. The release deregisters every registration,
     * so the keys die at once; the mapping goes with its buffer, as the node's default does (the file stays).
     *
     * <p>Linux before 6.2 pins every registration for writing, which a read-only shared mapping refuses ("Bad
     * address"): there, as on {@code verbs}, the range is copied once into a direct buffer of its own, registered for
     * REMOTE_READ (warned once per process); the region's buffer shows that copy, read-only.
     */
    @Override
    protected Allocation allocateFile(MappedByteBuffer mapped, int remoteKey, AbstractConnection grantee)
        throws RdmxException {
        checkOpen();
        ByteBuffer mem = mapped;
        ByteBuffer view = mapped;
        IbvMr home;
        try {
            home = register(pd, mapped, Access.REMOTE_READ);
        } catch (RdmxException e) {
            if (e.getCause() == null || !String.valueOf(e.getCause().getMessage()).contains("Bad address")) {
                throw e;
            }
            if (WARNED_FILE_COPY.compareAndSet(false, true)) {
                LOG.warn("disni: node '{}': the kernel ({}) cannot register a read-only file mapping (ibv_reg_mr: Bad"
                    + " address; Linux before 6.2 pins it for writing): file regions are copied into registered"
                    + " memory when registered", name(), System.getProperty("os.version"));
            }
            mem = ByteBuffer.allocateDirect(mapped.capacity());
            mem.put(0, mapped, 0, mapped.capacity());
            view = mem.asReadOnlyBuffer();
            home = register(pd, mem, Access.REMOTE_READ);
        }
        try {
            IbvMr keys = home;
            Registrations regs;
            if (grantee != null) {
                Domain d = ((DisniConnection) grantee).domain();
                regs = new Registrations(this, mem, Access.REMOTE_READ, d);
                keys = d.registrationOf(regs);
            } else {
                regs = new Registrations(this, mem, Access.REMOTE_READ, null);
            }
            IbvMr homeMr = home;
            return new Allocation(view, () -> {
                regs.release();
                deregister(homeMr);
            }, keys.getAddr(), keys.getLkey(), keys.getRkey(), regs);
        } catch (RdmxException | RuntimeException e) {
            deregister(home);
            throw e;
        }
    }

    /**
     * The {@code ibv_access_flags} of a registration, as on {@code verbs}: {@code LOCAL_WRITE} always but on a
     * read-only buffer (a file region), {@code REMOTE_WRITE} and {@code REMOTE_READ} as the SPI bits say.
     *
     * @param access SPI access flags
     * @param readOnlyMemory whether the memory is read-only
     * @return the flags
     */
    static int accessFlags(int access, boolean readOnlyMemory) {
        int flags = readOnlyMemory ? 0 : IbvMr.IBV_ACCESS_LOCAL_WRITE;
        if ((access & Access.REMOTE_WRITE) != 0) {
            if (readOnlyMemory) {
                throw new IllegalArgumentException("read-only memory cannot be remotely writable");
            }
            flags |= IbvMr.IBV_ACCESS_REMOTE_WRITE;
        }
        if ((access & Access.REMOTE_READ) != 0) {
            flags |= IbvMr.IBV_ACCESS_REMOTE_READ;
        }
        return flags;
    }

    /**
     * Registers memory with a protection domain.
     *
     * @param domain the domain
     * @param mem the memory (a read-only buffer is registered without {@code LOCAL_WRITE})
     * @param access SPI access flags
     * @return the registration
     * @throws RdmxException naming the usual cause
     */
    IbvMr register(IbvPd domain, ByteBuffer mem, int access) throws RdmxException {
        int flags = accessFlags(mem.isReadOnly() ? access & ~Access.LOCAL_WRITE : access, mem.isReadOnly());
        try {
            var call = domain.regMr(mem, flags).execute();
            IbvMr mr = call.getMr();
            call.free();
            return mr;
        } catch (IOException e) {
            throw new RdmxException("disni: ibv_reg_mr of " + mem.capacity() + " bytes at node '" + name()
                + "' failed: " + e.getMessage() + " (locked memory limit? ulimit -l)", e);
        }
    }

    void deregister(IbvMr mr) {
        try {
            mr.deregMr().execute().free();
        } catch (IOException e) {
            LOG.warn("disni: ibv_dereg_mr at node '{}' failed", name(), e);
        }
    }

    // ------------------------------------------------------------------ connect

    @Override
    protected Runnable dial(String peerAddress, InetSocketAddress peer, CompletableFuture<AbstractConnection> future,
                            long deadline, int resolveMs) throws RdmxException {
        try {
            RdmaCmId id = channel.createId(RdmaCm.RDMA_PS_TCP);
            setups.put(id, new DisniSetup(this, id, true, peerAddress, future, deadline));
            id.resolveAddr(new InetSocketAddress(ip, 0), peer, resolveMs);
        } catch (IOException e) {
            throw new RdmxException("connect from '" + name() + "' to address=" + peerAddress + " failed: "
                + e.getMessage(), e);
        }
        return () -> { }; // the rdma_cm thread's sweep tears the abandoned setup down
    }

    // ------------------------------------------------------------------ rdma_cm events

    private void cmLoop() {
        while (!stopping) {
            try {
                RdmaCmEvent ev = channel.getCmEvent(EVENT_MS[0]);
                if (ev != null) {
                    int type = ev.getEvent();
                    int status = ev.getStatus();
                    RdmaCmId id = ev.getConnIdPriv();
                    ev.ackEvent();
                    cmEvent(type, status, id);
                }
                flow.sweep(System.nanoTime());
                runTasks();
            } catch (IOException | RuntimeException e) {
                if (!stopping) {
                    LOG.warn("disni: rdma_cm event thread of node '{}'", name(), e);
                }
            }
        }
    }

    private void cmEvent(int type, int status, RdmaCmId id) {
        if (type == RdmaCmFlow.CONNECT_REQUEST) {
            DisniSetup s = new DisniSetup(this, id, false, null, null,
                System.nanoTime() + options().peerTimeout().toNanos());
            setups.put(id, s);
            flow.incoming(s, stopping);
            return;
        }
        DisniSetup s = setups.get(id);
        if (s != null) {
            flow.onEvent(s, type, status);
        }
    }

    DisniCmFlow flow() {
        return flow;
    }

    /** @return the node's setups, set up or setting up (a concurrent view) */
    Iterable<DisniSetup> setups() {
        return setups.values();
    }

    IbvContext context() {
        return ctx;
    }

    IbvCQ cq() {
        return cq;
    }

    /**
     * Reserves the entries of the shared CQ a new queue pair needs.
     *
     * @throws RdmxException if they are not free
     */
    void reserveCq() throws RdmxException {
        int need = options().sendQueueDepth() + 4 + options().recvQueueDepth() + 2;
        synchronized (this) {
            if (reservedCqEntries + need > cqSize) {
                throw new RdmxException("disni: node '" + name() + "' CQ of " + cqSize + " entries is full ("
                    + CQ_SIZE_PROP + ")");
            }
            reservedCqEntries += need;
        }
    }

    /** Frees the entries {@link #reserveCq} reserved. */
    synchronized void releaseCq() {
        reservedCqEntries -= options().sendQueueDepth() + 4 + options().recvQueueDepth() + 2;
    }

    /** Routes the completions of a new queue pair to its setup. */
    void qpCreated(DisniSetup s) {
        byQp.put(s.qpNum, s);
    }

    /** Forgets a setup being torn down. */
    void forget(DisniSetup s) {
        setups.remove(s.id, s);
        if (s.qp != null) {
            byQp.remove(s.qpNum, s);
        }
    }

    private static IbvWC[] newWcs(int n) {
        IbvWC[] w = new IbvWC[n];
        for (int i = 0; i < n; i++) {
            w[i] = new IbvWC();
        }
        return w;
    }

    static void postRecv(IbvQP qp, long hwId, long addr, int length, int lkey) throws IOException {
        qp.postRecv(List.of(DisniConnection.recvWr(hwId, addr, length, lkey)), null).execute().free();
    }

    // ------------------------------------------------------------------ completions

    private void cqLoop() {
        while (!stopping) {
            try {
                if (!compChannel.getCqEvent(cq, EVENT_MS[0])) {
                    continue;
                }
                cq.ackEvents(1);
                cq.reqNotification(false).execute().free();
                drainCq();
            } catch (IOException | RuntimeException e) {
                if (!stopping) {
                    LOG.warn("disni: CQ thread of node '{}'", name(), e);
                }
            }
        }
        synchronized (pollLock) {
            if (poll != null) {
                poll.free();
                poll = null;
            }
        }
    }

    /**
     * Polls the node's CQ empty, handing each completion to its queue pair in poll order: the CQ thread, or the
     * rdma_cm thread before it fails a connection whose peer disconnected ({@link DisniSetup#deliverPending}), so
     * what completed before the disconnect (a READ the peer refused, data the peer sent) is delivered as it
     * completed, not flushed: the two threads would otherwise race.
     *
     * @throws IOException if DiSNI's poll fails
     */
    void drainCq() throws IOException {
        synchronized (pollLock) {
            if (stopping) {
                return;
            }
            if (poll == null) {
                poll = cq.poll(wcs, wcs.length);
            }
            int n;
            do {
                n = poll.execute().getPolls();
                for (int i = 0; i < n; i++) {
                    completion(wcs[i]);
                }
            } while (n == wcs.length);
        }
    }

    private void completion(IbvWC wc) {
        DisniSetup s = byQp.get(wc.getQp_num());
        if (s == null) {
            return;
        }
        long wrId = wc.getWr_id();
        if (wrId == CTRL_PROBE) {
            DisniConnection c = s.connection();
            if (c != null) {
                c.probeDone(wc.getStatus());
            }
            return;
        }
        if ((wrId & WorkQueues.CTRL_BIT) != 0) {
            boolean ok = wc.getStatus() == WC_SUCCESS;
            boolean received = wrId == CTRL_RECV;
            flow.onSetupCompletion(s, received, ok ? null : "ibv_wc_status " + wc.getStatus(),
                ok && received ? s.ctrl.duplicate().limit(wc.getByte_len()) : null);
            return;
        }
        DisniConnection c = s.connection();
        if (c != null) {
            c.complete(wrId, wc.getStatus(), wc.getByte_len(), wc.getWc_flags(), wc.getImm_data());
        }
    }

    // ------------------------------------------------------------------ close

    void disconnect(DisniConnection c) {
        try {
            c.id().disconnect();
        } catch (IOException e) {
            LOG.debug("disni: rdma_disconnect", e);
        }
        for (DisniSetup s : setups.values()) {
            if (s.connection() == c) {
                execute(() -> flow.destroy(s));
            }
        }
    }

    @Override
    protected void closeTransport() {
        stopping = true;
        failDialing("node '" + name() + "' closed while connecting");
        try {
            cmThread.join(5000);
            cqThread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        runTasks();
        for (DisniSetup s : setups.values()) {
            flow.destroy(s);
        }
        try {
            cq.destroyCQ();
            compChannel.destroyCompChannel();
            pd.deallocPd();
            listenId.destroyId();
            channel.destroyEventChannel();
        } catch (Exception e) {
            LOG.warn("disni: releasing the resources of node '{}' failed", name(), e);
        }
    }
}
