package io.rdmx.disni;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaConnParam;
import com.ibm.disni.verbs.RdmaEventChannel;
import io.rdmx.transport.Access;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.ProtocolException;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.internal.AbstractNode;
import io.rdmx.transport.internal.KeepAlive;
import io.rdmx.transport.internal.RegionImpl;
import io.rdmx.transport.internal.RdmaDevices;
import io.rdmx.transport.internal.SetupAuth;
import io.rdmx.transport.internal.SetupMessage;
import io.rdmx.transport.internal.WorkQueues;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
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
final class DisniNode extends AbstractNode {
    /** System property: entries of the node's shared CQ (bounds outstanding requests over all connections). */
    static final String CQ_SIZE_PROP = "rdmx.disni.cqSize";
    static final int WC_SUCCESS = 0;
    static final int WC_WITH_IMM = 2;
    static final int WC_LOC_QP_OP_ERR = 2;
    static final int WC_REM_OP_ERR = 11;
    private static final Logger LOG = LoggerFactory.getLogger(DisniNode.class);
    private static final int CTRL = 64 * 1024;
    private static final long CTRL_RECV = WorkQueues.CTRL_BIT | 1;
    private static final long CTRL_SEND = WorkQueues.CTRL_BIT | 2;
    /** The hardware id of keep-alive probes. */
    static final long CTRL_PROBE = WorkQueues.CTRL_BIT | 3;
    private static final int[] EVENT_MS = {100};
    /** The smallest CQ a node tries before giving up. */
    private static final int MIN_CQ = 256;

    private final InetAddress ip;
    private final RdmaEventChannel channel;
    private final RdmaCmId listenId;
    private final IbvContext ctx;
    private final IbvPd pd;
    private final IbvCompChannel compChannel;
    private final IbvCQ cq;
    private final int cqSize;
    private final String address;
    /** Whether the device is Soft-RoCE (rxe), whose completion statuses deviate (see the four-argument failure). */
    private final boolean softRoce;
    private final Map<RdmaCmId, Setup> setups = new ConcurrentHashMap<>();
    private final Map<Integer, Setup> byQp = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final Thread cmThread;
    private final Thread cqThread;
    private volatile boolean stopping;
    private int reservedCqEntries;

    /** The cluster-secret handshake of setup messages (off without a secret). */
    private final SetupAuth auth;

    /** A queue pair from rdma_cm's first event until it is torn down. */
    private final class Setup {
        final RdmaCmId id;
        final boolean active;
        final String dialAddress;
        final CompletableFuture<AbstractConnection> future;
        final long deadline;
        IbvQP qp;
        /** The queue pair's own protection domain. */
        Domain domain;
        ByteBuffer ctrl;
        IbvMr ctrlMr;
        volatile DisniConnection conn;
        boolean destroyed;
        /** Setup under a cluster secret: this side's nonce. */
        byte[] nonce;
        /** Passive side under a secret: the peer's HELLO, once our CHALLENGE answered it. */
        SetupMessage hello;
        /** Active side under a secret: the peer proved itself and we sent our PROVE. */
        boolean proved;

        Setup(RdmaCmId id, boolean active, String dialAddress, CompletableFuture<AbstractConnection> future,
              long deadline) {
            this.id = id;
            this.active = active;
            this.dialAddress = dialAddress;
            this.future = future;
            this.deadline = deadline;
        }
    }

    DisniNode(DisniFabric fabric, NodeOptions options) throws RdmxException {
        super(fabric, options);
        this.auth = new SetupAuth(options);
        try {
            ip = RdmaDevices.select(options.bindAddress(), System.getProperty(RdmaDevices.DEVICE_PROP),
                RdmaDevices.list());
        } catch (RdmxException e) {
            throw new RdmxException("disni: " + e.getMessage());
        }
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
            address = ip.getHostAddress() + ":" + bound.getPort();
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
                return Files.exists(RdmaDevices.SYSFS.resolve(d.name()).resolve("parent"))
                    && Files.isDirectory(Path.of("/sys/module/rdma_rxe"));
            }
        }
        return false;
    }

    boolean softRoce() {
        return softRoce;
    }

    void execute(Runnable task) {
        tasks.add(task);
    }

    private void runTasks() {
        Runnable r;
        while ((r = tasks.poll()) != null) {
            try {
                r.run();
            } catch (RuntimeException e) {
                LOG.warn("disni: task at node '{}' failed", name(), e);
            }
        }
    }

    @Override
    public String address() {
        return address;
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

    /** The node-wide exported regions as the peer of one setup reaches them: each registered in its domain. */
    private List<RemoteRegion> exportedTo(Setup s) throws RdmxException {
        List<RegionImpl> live = exportedRegionList();
        List<RemoteRegion> out = new ArrayList<>(live.size());
        for (RegionImpl r : live) {
            try {
                IbvMr mr = s.domain.registrationOf((Registrations) r.handle());
                out.add(new RemoteRegion(r.address(), r.length(), mr.getRkey(), r.name()));
            } catch (IllegalStateException released) {
                // released since it was listed: not exported
            }
        }
        return out;
    }

    /**
     * Registers memory with a protection domain.
     *
     * @param domain the domain
     * @param mem the memory
     * @param access SPI access flags
     * @return the registration
     * @throws RdmxException naming the usual cause
     */
    IbvMr register(IbvPd domain, ByteBuffer mem, int access) throws RdmxException {
        int flags = IbvMr.IBV_ACCESS_LOCAL_WRITE;
        if ((access & Access.REMOTE_WRITE) != 0) {
            flags |= IbvMr.IBV_ACCESS_REMOTE_WRITE;
        }
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
    public AbstractConnection connect(String peerAddress, Duration timeout) throws RdmxException {
        InetSocketAddress dst;
        try {
            dst = RdmaDevices.parseAddress(peerAddress);
        } catch (RdmxException e) {
            throw new RdmxException("disni: " + e.getMessage());
        }
        return dialOnce(peerAddress, timeout, (future, deadline) -> {
            try {
                RdmaCmId id = channel.createId(RdmaCm.RDMA_PS_TCP);
                setups.put(id, new Setup(id, true, peerAddress, future, deadline));
                id.resolveAddr(new InetSocketAddress(ip, 0), dst, (int) Math.max(1, Math.min(5000,
                    timeout.toMillis())));
            } catch (IOException e) {
                throw new RdmxException("connect from '" + name() + "' to address=" + peerAddress + " failed: "
                    + e.getMessage(), e);
            }
            return () -> { }; // the rdma_cm thread's sweep tears the abandoned setup down
        });
    }

    // ------------------------------------------------------------------ rdma_cm events

    private void cmLoop() {
        while (!stopping) {
            try {
                RdmaCmEvent ev = channel.getCmEvent(EVENT_MS[0]);
                if (ev != null) {
                    int type = ev.getEvent();
                    RdmaCmId id = ev.getConnIdPriv();
                    ev.ackEvent();
                    cmEvent(type, id);
                }
                sweep();
                runTasks();
            } catch (IOException | RuntimeException e) {
                if (!stopping) {
                    LOG.warn("disni: rdma_cm event thread of node '{}'", name(), e);
                }
            }
        }
    }

    private void cmEvent(int type, RdmaCmId id) {
        RdmaCmEvent.EventType[] types = RdmaCmEvent.EventType.values();
        RdmaCmEvent.EventType t = type >= 0 && type < types.length ? types[type] : null;
        if (t == RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_REQUEST) {
            Setup s = new Setup(id, false, null, null, System.nanoTime() + options().peerTimeout().toNanos());
            setups.put(id, s);
            try {
                createQp(s);
                id.accept(connParam());
            } catch (IOException e) {
                setupFailed(s, "accept failed: " + e.getMessage());
            }
            return;
        }
        Setup s = setups.get(id);
        if (s == null) {
            return;
        }
        try {
            if (t == RdmaCmEvent.EventType.RDMA_CM_EVENT_ADDR_RESOLVED) {
                id.resolveRoute(5000);
            } else if (t == RdmaCmEvent.EventType.RDMA_CM_EVENT_ROUTE_RESOLVED) {
                createQp(s);
                id.connect(connParam());
            } else if (t == RdmaCmEvent.EventType.RDMA_CM_EVENT_ESTABLISHED) {
                if (s.active) {
                    if (auth.enabled()) {
                        // with a secret nothing about memory goes out before the peer proved it: Nc only
                        s.nonce = SetupAuth.nonce();
                        sendSetup(s, new SetupMessage(SetupMessage.HELLO, name(), address, List.of(), null, null,
                            s.nonce));
                    } else {
                        sendSetup(s, new SetupMessage(SetupMessage.HELLO, name(), address, exportedTo(s), null,
                            probeTarget(s)));
                    }
                }
            } else if (t == RdmaCmEvent.EventType.RDMA_CM_EVENT_DISCONNECTED) {
                DisniConnection c = s.conn;
                if (c != null) {
                    c.fail(new ConnectionClosedException(c.peerName(), "peer '" + c.peerName() + "' ("
                        + c.peerAddress() + ") disconnected from '" + name() + "'", null));
                } else {
                    setupFailed(s, "the peer disconnected during setup");
                }
            } else if (t != RdmaCmEvent.EventType.RDMA_CM_EVENT_TIMEWAIT_EXIT) {
                setupFailed(s, String.valueOf(t) + (t == RdmaCmEvent.EventType.RDMA_CM_EVENT_REJECTED
                    ? ": no rdmx node listens there" : ""));
            }
        } catch (IOException e) {
            setupFailed(s, e.getMessage());
        }
    }

    /**
     * rdma_cm's connection parameters: retries only. DiSNI 2.1 refuses to set the RDMA READ depths (its setters
     * throw "Operation currently not supported"): libdisni sets both to the device's {@code max_qp_rd_atom}.
     */
    static RdmaConnParam connParam() throws IOException {
        RdmaConnParam p = new RdmaConnParam();
        p.setRetry_count((byte) 7);
        p.setRnr_retry_count((byte) 7);
        return p;
    }

    private void createQp(Setup s) throws IOException {
        int sq = options().sendQueueDepth() + 4;
        int rq = options().recvQueueDepth() + 2;
        synchronized (this) {
            if (reservedCqEntries + sq + rq > cqSize) {
                throw new RdmxException("disni: node '" + name() + "' CQ of " + cqSize + " entries is full ("
                    + CQ_SIZE_PROP + ")");
            }
            reservedCqEntries += sq + rq;
        }
        IbvQPInitAttr attr = new IbvQPInitAttr();
        attr.cap().setMax_send_wr(sq);
        attr.cap().setMax_recv_wr(rq);
        attr.cap().setMax_send_sge(1);
        attr.cap().setMax_recv_sge(1);
        attr.setQp_type(IbvQP.IBV_QPT_RC);
        attr.setSend_cq(cq);
        attr.setRecv_cq(cq);
        s.domain = new Domain(ctx.allocPd());
        s.qp = s.id.createQP(s.domain.pd(), attr);
        byQp.put(s.qp.getQp_num(), s);
        s.ctrl = ByteBuffer.allocateDirect(2 * CTRL);
        // remote WRITE: the peer's keep-alive probes land at the end of the region
        s.ctrlMr = register(s.domain.pd(), s.ctrl, Access.ALL);
        postRecv(s.qp, CTRL_RECV, s.ctrlMr.getAddr(), CTRL, s.ctrlMr.getLkey());
    }

    static void postRecv(IbvQP qp, long hwId, long addr, int length, int lkey) throws IOException {
        qp.postRecv(List.of(DisniConnection.recvWr(hwId, addr, length, lkey)), null).execute().free();
    }

    private void sendSetup(Setup s, SetupMessage m) throws IOException {
        int len;
        try {
            len = m.encode(s.ctrl.duplicate().limit(2 * CTRL - KeepAlive.TARGET_BYTES).position(CTRL).slice());
        } catch (ProtocolException e) {
            throw new RdmxException(e.getMessage());
        }
        IbvSendWR wr = new IbvSendWR();
        wr.setWr_id(CTRL_SEND);
        wr.setOpcode(IbvSendWR.IBV_WR_SEND);
        wr.setSend_flags(IbvSendWR.IBV_SEND_SIGNALED);
        IbvSge sge = new IbvSge();
        sge.setAddr(s.ctrlMr.getAddr() + CTRL);
        sge.setLength(len);
        sge.setLkey(s.ctrlMr.getLkey());
        LinkedList<IbvSge> sges = new LinkedList<>();
        sges.add(sge);
        wr.setSg_list(sges);
        wr.setNum_sge(1);
        s.qp.postSend(List.of(wr), null).execute().free();
    }

    /** @return where the peer WRITEs its keep-alive probes: the end of {@code s}'s control region */
    private static RemoteRegion probeTarget(Setup s) {
        return new RemoteRegion(probeSource(s), KeepAlive.TARGET_BYTES, s.ctrlMr.getRkey());
    }

    /** @return the address of the end of {@code s}'s control region, also the source of its own probes */
    private static long probeSource(Setup s) {
        return s.ctrlMr.getAddr() + 2L * CTRL - KeepAlive.TARGET_BYTES;
    }

    private void setupFailed(Setup s, String why) {
        if (s.future != null) {
            s.future.completeExceptionally(new RdmxException("connect from '" + name() + "' to address="
                + s.dialAddress + " failed: " + why));
        } else {
            LOG.debug("disni: node '{}' drops an incoming setup: {}", name(), why);
        }
        destroy(s);
    }

    /** Times out setups and drives the keep-alive of connections (rdma_cm thread). */
    private void sweep() {
        long now = System.nanoTime();
        for (Setup s : setups.values()) {
            DisniConnection c = s.conn;
            if (c != null) {
                c.keepAlive(now);
            } else if (now - s.deadline > 0 || (s.future != null && s.future.isDone())) {
                setupFailed(s, "timed out");
            }
        }
    }

    private void onSetupMessage(Setup s, int byteLen) {
        SetupMessage m;
        try {
            m = SetupMessage.decode(s.ctrl.duplicate().limit(byteLen));
        } catch (ProtocolException e) {
            execute(() -> setupFailed(s, e.getMessage()));
            return;
        }
        try {
            if (!s.active) {
                String refusal;
                if (s.hello != null) {
                    refusal = m.kind != SetupMessage.PROVE ? "expected a proof after the challenge"
                        : auth.checkProve(s.hello.auth, s.nonce, s.hello, m, name()) ? null
                        : "cluster secret mismatch: peer '" + s.hello.name + "' failed authentication with '" + name()
                        + "'";
                } else {
                    refusal = m.kind != SetupMessage.HELLO ? "expected a hello" : auth.mismatch(name(), m);
                    if (refusal == null && auth.enabled()) {
                        // our proof first, nothing about our memory: the peer proves itself before it learns a key
                        s.hello = m;
                        s.nonce = SetupAuth.nonce();
                        postRecv(s.qp, CTRL_RECV, s.ctrlMr.getAddr(), CTRL, s.ctrlMr.getLkey()); // for its PROVE
                        sendSetup(s, new SetupMessage(SetupMessage.CHALLENGE, name(), address, List.of(), null, null,
                            auth.challenge(m.auth, s.nonce, name(), m.name, address)));
                        return;
                    }
                }
                if (refusal == null && !isOpen()) {
                    refusal = "node '" + name() + "' is closing";
                }
                DisniConnection c = null;
                if (refusal == null) {
                    c = new DisniConnection(this, m.name, m.address, m.regions, s.id, s.qp, s.domain,
                        probeSource(s), s.ctrlMr.getLkey(), m.probe);
                    if (auth.enabled()) {
                        c.trustAddress(); // the peer's proof covered the address it announced
                    }
                    if (!addConnection(c)) {
                        refusal = "a connection between '" + m.name + "' and '" + name() + "' already exists";
                        c = null;
                    }
                }
                if (refusal != null) {
                    sendSetup(s, new SetupMessage(SetupMessage.REFUSE, name(), address, List.of(), refusal));
                    return;
                }
                sendSetup(s, new SetupMessage(SetupMessage.ACCEPT, name(), address, exportedTo(s), null,
                    probeTarget(s)));
                s.conn = c;
                if (!offerAccepted(c)) {
                    DisniConnection full = c;
                    execute(() -> full.fail(new ConnectionClosedException(full.peerName(), "node '" + name()
                        + "' accept backlog is full", null)));
                }
            } else if (auth.enabled() && !s.proved && m.kind != SetupMessage.REFUSE) {
                // under a secret the peer proves itself first, and learns our regions only from our proof on
                if (m.kind != SetupMessage.CHALLENGE || !auth.checkChallenge(s.nonce, m, name())) {
                    String why = m.kind != SetupMessage.CHALLENGE ? "cluster secret mismatch: node '" + name()
                        + "' has a secret, peer '" + m.name + "' answered kind " + m.kind + " without proving it"
                        : "cluster secret mismatch: peer '" + m.name + "' failed authentication with '" + name() + "'";
                    execute(() -> setupFailed(s, why));
                    return;
                }
                s.proved = true;
                postRecv(s.qp, CTRL_RECV, s.ctrlMr.getAddr(), CTRL, s.ctrlMr.getLkey()); // for its ACCEPT
                sendSetup(s, new SetupMessage(SetupMessage.PROVE, name(), address, exportedTo(s), null,
                    probeTarget(s), auth.prove(s.nonce, SetupAuth.nonceOf(m), name(), m.name, address)));
            } else if (m.kind == SetupMessage.ACCEPT) {
                DisniConnection c = new DisniConnection(this, m.name, s.dialAddress, m.regions, s.id, s.qp, s.domain,
                    probeSource(s), s.ctrlMr.getLkey(), m.probe);
                c.trustAddress(); // dialed there
                if (!addConnection(c)) {
                    s.future.completeExceptionally(new RdmxException("connect from '" + name() + "': a connection"
                        + " to '" + m.name + "' already exists"));
                    execute(() -> destroy(s));
                    return;
                }
                s.conn = c;
                s.future.complete(c);
            } else {
                s.future.completeExceptionally(new RdmxException("connect from '" + name() + "' to address="
                    + s.dialAddress + " refused by '" + m.name + "': " + m.reason));
                execute(() -> destroy(s));
            }
        } catch (IOException e) {
            execute(() -> setupFailed(s, e.getMessage()));
        }
    }

    // ------------------------------------------------------------------ completions

    private void cqLoop() {
        IbvWC[] wcs = new IbvWC[32];
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new IbvWC();
        }
        var poll = (com.ibm.disni.verbs.SVCPollCq) null;
        while (!stopping) {
            try {
                if (!compChannel.getCqEvent(cq, EVENT_MS[0])) {
                    continue;
                }
                cq.ackEvents(1);
                cq.reqNotification(false).execute().free();
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
            } catch (IOException | RuntimeException e) {
                if (!stopping) {
                    LOG.warn("disni: CQ thread of node '{}'", name(), e);
                }
            }
        }
        if (poll != null) {
            poll.free();
        }
    }

    private void completion(IbvWC wc) {
        Setup s = byQp.get(wc.getQp_num());
        if (s == null) {
            return;
        }
        long wrId = wc.getWr_id();
        if (wrId == CTRL_PROBE) {
            DisniConnection c = s.conn;
            if (c != null) {
                c.probeDone(wc.getStatus());
            }
            return;
        }
        if ((wrId & WorkQueues.CTRL_BIT) != 0) {
            if (wc.getStatus() != WC_SUCCESS) {
                if (s.conn == null) {
                    execute(() -> setupFailed(s, "setup message failed: ibv_wc_status " + wc.getStatus()));
                }
            } else if (wrId == CTRL_RECV) {
                onSetupMessage(s, wc.getByte_len());
            }
            return;
        }
        DisniConnection c = s.conn;
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
        for (Setup s : setups.values()) {
            if (s.conn == c) {
                execute(() -> destroy(s));
            }
        }
    }

    private void destroy(Setup s) {
        synchronized (s) {
            if (s.destroyed) {
                return;
            }
            s.destroyed = true;
        }
        setups.remove(s.id, s);
        try {
            if (s.qp != null) {
                byQp.remove(s.qp.getQp_num(), s);
                s.id.destroyQP();
                synchronized (this) {
                    reservedCqEntries -= options().sendQueueDepth() + 4 + options().recvQueueDepth() + 2;
                }
            }
            if (s.ctrlMr != null) {
                deregister(s.ctrlMr);
            }
            if (s.domain != null) {
                s.domain.destroy(); // its registrations, then the domain
            }
            s.id.destroyId();
        } catch (IOException e) {
            LOG.warn("disni: teardown at node '{}' failed", name(), e);
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
        for (Setup s : setups.values()) {
            destroy(s);
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
