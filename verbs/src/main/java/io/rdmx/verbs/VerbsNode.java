package io.rdmx.verbs;

import io.rdmx.transport.internal.RdmaDevices;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import io.rdmx.spi.Platform;
import io.rdmx.transport.Access;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.internal.RdmaCmFlow;
import io.rdmx.transport.internal.RdmaNode;
import io.rdmx.transport.internal.RegionImpl;
import io.rdmx.transport.internal.SetupMessage;
import io.rdmx.verbs.Native.Consts;
import io.rdmx.verbs.Native.IbvCompChannel;
import io.rdmx.verbs.Native.IbvContext;
import io.rdmx.verbs.Native.IbvDeviceAttr;
import io.rdmx.verbs.Native.IbvMr;
import io.rdmx.verbs.Native.More;
import io.rdmx.verbs.Native.RdmaCmEvent;
import io.rdmx.verbs.Native.RdmaCmId;
import io.rdmx.verbs.Native.RdmaEventChannel;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.util.ArrayList;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A verbs node: an rdma_cm listener bound to an IP of an RDMA device, a protection domain, a completion channel,
 * and one progress thread that handles rdma_cm events and CQ events ({@code poll(2)} on both descriptors and an
 * eventfd, so close wakes it at once). Connections are RC queue pairs; after rdma_cm establishes one, the sides
 * exchange names, addresses and region descriptors over it ({@link SetupMessage}): the setup flow is
 * {@link RdmaCmFlow}'s, shared with the disni provider ({@link VerbsCmFlow} makes its calls).
 *
 * <p>Every step is bounded: address and route resolution by rdma_cm timeouts, the whole setup by the connect
 * timeout (active side) or the node's peer timeout (passive side); a setup that does not finish in time is
 * torn down by the progress thread.
 */
@SuppressWarnings("restricted")
public final class VerbsNode extends RdmaNode {
    /** System property: {@code true} makes the progress thread spin on the CQs instead of sleeping. */
    public static final String BUSY_POLL_PROP = "rdmx.verbs.busyPoll";
    /**
     * System property: the local ACK timeout of this node's queue pairs, as the verbs exponent (4.096 us x
     * 2^value: 14 is 67 ms, perftest's default; 17 is about 0.5 s), 1 to 31. How long a sender waits for the
     * peer's acknowledgement before it sends again, so on a link that drops packets (Soft-RoCE over a lossy or
     * congested network) the time each loss costs. Unset: rdma_cm's choice (from the route's packet lifetime; on
     * RoCE about 0.5 s in Linux 6.1).
     */
    public static final String ACK_TIMEOUT_PROP = "rdmx.verbs.ackTimeout";
    private static final Logger LOG = LoggerFactory.getLogger(VerbsNode.class);

    private final Arena arena = Arena.ofShared();
    private final boolean busyPoll = Boolean.getBoolean(BUSY_POLL_PROP);
    /** {@link #ACK_TIMEOUT_PROP}, or -1: rdma_cm's choice. */
    private final int ackTimeout = ackTimeout(System.getProperty(ACK_TIMEOUT_PROP));
    private final RegistrationCache cache;
    private final ConcurrentHashMap<Long, Endpoint> byId = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Long, Endpoint> byCq = new ConcurrentHashMap<>();
    private MemorySegment channel = MemorySegment.NULL;
    /** The rdma_cm setup flow, shared with the disni provider. */
    private final VerbsCmFlow flow;
    private MemorySegment listenId = MemorySegment.NULL;
    private MemorySegment ctx = MemorySegment.NULL;
    private MemorySegment pd = MemorySegment.NULL;
    private MemorySegment compChannel = MemorySegment.NULL;
    private int wakeFd = -1;
    private final MemorySegment wakeOne = arena.allocate(JAVA_LONG);
    private MemorySegment postSendFn;
    private MemorySegment postRecvFn;
    private MemorySegment pollCqFn;
    private MemorySegment reqNotifyFn;
    /**
     * The most RDMA READs (and atomics) this node asks its queue pairs to have in flight, as responder and as
     * requester: the device's {@code max_qp_rd_atom} and {@code max_qp_init_rd_atom}, at most {@value #READ_DEPTH_CAP}
     * (each costs the responder's NIC a context per queue pair). With 0 a NIC refuses every READ.
     */
    private int responderResources = 1;
    private int initiatorDepth = 1;
    /** Bound on {@link #responderResources} and {@link #initiatorDepth}. */
    static final int READ_DEPTH_CAP = 16;
    /** {@code EFAULT}: ibv_reg_mr's errno for pages the kernel will not pin. */
    private static final int EFAULT = 14;
    private String deviceName = "?";
    private boolean softRoce;
    private final Thread progress;
    private volatile boolean stopping;

    VerbsNode(VerbsFabric fabric, NodeOptions options) throws RdmxException {
        super(fabric, options, "verbs");
        this.flow = new VerbsCmFlow(this);
        if (!(ip instanceof Inet4Address)) {
            throw new RdmxException("verbs: node '" + name() + "' needs an IPv4 address, got " + ip);
        }
        int port = 0;
        String bind = options.bindAddress();
        if (bind != null && bind.lastIndexOf(':') > 0 && bind.indexOf(':') == bind.lastIndexOf(':')) {
            port = Integer.parseInt(bind.substring(bind.lastIndexOf(':') + 1));
        }
        wakeOne.set(JAVA_LONG, 0, 1L);
        try {
            open(port);
        } catch (RdmxException e) {
            releaseNative();
            arena.close();
            throw e;
        } catch (Throwable t) {
            releaseNative();
            arena.close();
            throw new RdmxException("verbs: node '" + name() + "' cannot open on " + ip.getHostAddress() + ": " + t, t);
        }
        cache = new RegistrationCache(this);
        progress = new Thread(this::progressLoop, "rdmx-verbs-" + name());
        progress.setDaemon(true);
        progress.start();
    }

    private void open(int port) throws Throwable {
        MemorySegment st = Lib.state();
        channel = nonNull("rdma_create_event_channel", (MemorySegment) Lib.CREATE_EVENT_CHANNEL.invoke(st), st)
            .reinterpret(8);
        nonBlocking(channel.get(JAVA_INT, RdmaEventChannel.FD));
        MemorySegment holder = arena.allocate(ADDRESS);
        check("rdma_create_id", (int) Lib.CREATE_ID.invoke(st, channel, holder, MemorySegment.NULL,
            Consts.RDMA_PS_TCP), st);
        listenId = holder.get(ADDRESS, 0).reinterpret(64);
        int rc = (int) Lib.BIND_ADDR.invoke(st, listenId, sockaddr(arena, ip, port));
        if (rc != 0) {
            throw new RdmxException("verbs: node '" + name() + "' cannot bind to " + ip.getHostAddress() + ":" + port
                + ": errno=" + Lib.errno(st) + " (is it an address of an RDMA device's interface?)");
        }
        ctx = listenId.get(ADDRESS, RdmaCmId.VERBS);
        if (ctx.equals(MemorySegment.NULL)) {
            throw new RdmxException("verbs: " + ip.getHostAddress() + " is not an address of an RDMA device's"
                + " interface (devices: " + RdmaDevices.list() + ")");
        }
        ctx = ctx.reinterpret(512);
        deviceName = Lib.string((MemorySegment) Lib.GET_DEVICE_NAME.invoke(st, ctx.get(ADDRESS, 0)));
        softRoce = softRoce(deviceName);
        MemorySegment attr = arena.allocate(IbvDeviceAttr.SIZE, 8);
        check("ibv_query_device", (int) Lib.QUERY_DEVICE.invoke(st, ctx, attr), st);
        responderResources = readDepth(attr.get(JAVA_INT, IbvDeviceAttr.MAX_QP_RD_ATOM));
        initiatorDepth = readDepth(attr.get(JAVA_INT, IbvDeviceAttr.MAX_QP_INIT_RD_ATOM));
        check("rdma_listen", (int) Lib.LISTEN.invoke(st, listenId, Math.min(options().acceptBacklog(), 1024)), st);
        int p = Short.toUnsignedInt(Short.reverseBytes((short) Lib.GET_SRC_PORT.invoke(st, listenId)));
        bound(p);
        pd = nonNull("ibv_alloc_pd", (MemorySegment) Lib.ALLOC_PD.invoke(st, ctx), st);
        compChannel = nonNull("ibv_create_comp_channel", (MemorySegment) Lib.CREATE_COMP_CHANNEL.invoke(st, ctx), st)
            .reinterpret(16);
        nonBlocking(compChannel.get(JAVA_INT, IbvCompChannel.FD));
        wakeFd = (int) Lib.EVENTFD.invoke(st, 0, More.EFD_NONBLOCK);
        if (wakeFd < 0) {
            throw new RdmxException("verbs: eventfd failed: errno=" + Lib.errno(st));
        }
        postSendFn = ctx.get(ADDRESS, IbvContext.OPS_POST_SEND);
        postRecvFn = ctx.get(ADDRESS, IbvContext.OPS_POST_RECV);
        pollCqFn = ctx.get(ADDRESS, IbvContext.OPS_POLL_CQ);
        reqNotifyFn = ctx.get(ADDRESS, IbvContext.OPS_REQ_NOTIFY_CQ);
    }

    /**
     * @param deviceMax a device's {@code max_qp_rd_atom} or {@code max_qp_init_rd_atom}
     * @return the READ depth asked for: the device's, at most {@value #READ_DEPTH_CAP}, at least 1
     */
    static int readDepth(int deviceMax) {
        return Math.max(1, Math.min(READ_DEPTH_CAP, deviceMax));
    }

    /**
     * @param v the value of {@link #ACK_TIMEOUT_PROP}, or null
     * @return the exponent, or -1 when unset
     * @throws IllegalArgumentException naming the key and the value, when it is not an integer from 1 to 31
     */
    static int ackTimeout(String v) {
        if (v == null || v.isBlank()) {
            return -1;
        }
        int t;
        try {
            t = Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(ACK_TIMEOUT_PROP + "=" + v + " is not an integer (1 to 31)", e);
        }
        if (t < 1 || t > 31) {
            throw new IllegalArgumentException(ACK_TIMEOUT_PROP + "=" + v + " is out of range [1, 31] (4.096 us x "
                + "2^value; 0, an infinite wait, is refused)");
        }
        return t;
    }

    private static MemorySegment nonNull(String call, MemorySegment p, MemorySegment st) throws RdmxException {
        if (p.equals(MemorySegment.NULL)) {
            throw new RdmxException("verbs: " + call + " failed: errno=" + Lib.errno(st));
        }
        return p;
    }

    private static void check(String call, int rc, MemorySegment st) throws RdmxException {
        if (rc != 0) {
            throw new RdmxException("verbs: " + call + " failed: errno=" + Lib.errno(st));
        }
    }

    private static void nonBlocking(int fd) throws Throwable {
        MemorySegment st = Lib.state();
        int flags = (int) Lib.FCNTL.invoke(st, fd, More.F_GETFL, 0);
        if (flags < 0 || (int) Lib.FCNTL.invoke(st, fd, More.F_SETFL, flags | More.O_NONBLOCK) < 0) {
            throw new RdmxException("verbs: fcntl(O_NONBLOCK) failed: errno=" + Lib.errno(st));
        }
    }

    private static MemorySegment sockaddr(Arena arena, InetAddress a, int port) {
        MemorySegment sa = arena.allocate(16, 8);
        sa.set(JAVA_SHORT, 0, (short) 2);
        sa.set(JAVA_SHORT.withOrder(ByteOrder.BIG_ENDIAN), 2, (short) port);
        MemorySegment.copy(MemorySegment.ofArray(a.getAddress()), 0, sa, 4, 4);
        return sa;
    }

    // ------------------------------------------------------------------ accessors for Endpoint

    /** @return the RDMA device this node uses */
    public String deviceName() {
        return deviceName;
    }

    /** @return the queue pairs' local ACK timeout exponent ({@link #ACK_TIMEOUT_PROP}), or -1: rdma_cm's choice */
    int ackTimeout() {
        return ackTimeout;
    }

    /** @return RDMA READs this node's queue pairs accept in flight from their peer ({@code responder_resources}) */
    int responderResources() {
        return responderResources;
    }

    /** @return RDMA READs this node's queue pairs may have in flight to their peer ({@code initiator_depth}) */
    int initiatorDepth() {
        return initiatorDepth;
    }

    /** @return true on Soft-RoCE (rdma_rxe), whose completion statuses differ in one documented case */
    boolean softRoce() {
        return softRoce;
    }

    Logger log() {
        return LOG;
    }

    MemorySegment context() {
        return ctx;
    }

    MemorySegment compChannel() {
        return compChannel;
    }

    MemorySegment postSendFn() {
        return postSendFn;
    }

    MemorySegment postRecvFn() {
        return postRecvFn;
    }

    MemorySegment pollCqFn() {
        return pollCqFn;
    }

    VerbsCmFlow flow() {
        return flow;
    }

    /** @return the node's endpoints, set up or setting up (a concurrent view) */
    Iterable<Endpoint> endpoints() {
        return byId.values();
    }

    Thread progressThread() {
        return progress;
    }

    /** @return the registration cache (for tests and {@code rdmx info}) */
    public RegistrationCache registrationCache() {
        return cache;
    }

    void armCq(MemorySegment cq) throws RdmxException {
        try {
            int rc = (int) Lib.REQ_NOTIFY_CQ_OP.invokeExact(reqNotifyFn, cq, 0);
            if (rc != 0) {
                throw new RdmxException("verbs: ibv_req_notify_cq failed: " + rc);
            }
        } catch (RdmxException e) {
            throw e;
        } catch (Throwable t) {
            throw new RdmxException("verbs: ibv_req_notify_cq failed: " + t, t);
        }
    }

    /** Wakes the progress thread for a task (its eventfd). */
    @Override
    protected void wake() {
        if (wakeFd < 0) {
            return;
        }
        try {
            Lib.WRITE.invoke(Lib.state(), wakeFd, wakeOne, 8L);
        } catch (Throwable t) {
            LOG.debug("verbs: wake", t);
        }
    }

    void forget(Endpoint ep) {
        byId.remove(ep.idKey(), ep);
        if (ep.cqKey() != 0) {
            byCq.remove(ep.cqKey(), ep);
        }
    }

    // ------------------------------------------------------------------ memory

    @Override
    protected Allocation allocate(int length, int access, int remoteKey) throws RdmxException {
        checkOpen();
        return cache.allocate(length, access);
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
        Endpoint ep = ((VerbsConnection) grantee).endpoint();
        Arena memArena = Arena.ofShared();
        try {
            MemorySegment mem = memArena.allocate(length, 4096);
            Registrations regs = new Registrations(this, mem, access, ep, false);
            MemorySegment mr = ep.registrationOf(regs);
            Runnable release = () -> {
                regs.release();
                memArena.close();
            };
            return new Allocation(mem.asByteBuffer(), release, mem.address(), localKey(mr), remoteKey(mr), regs);
        } catch (RdmxException | RuntimeException e) {
            memArena.close();
            throw e;
        }
    }

    /** A range of a file, mapped read-only: see {@link FileRegions}. */
    @Override
    protected Allocation allocateFile(MappedByteBuffer mapped, int remoteKey, AbstractConnection grantee)
        throws RdmxException {
        checkOpen();
        return FileRegions.allocate(this, pd, mapped, grantee);
    }

    /** A node-wide region's key on one connection: its registration in that queue pair's protection domain. */
    @Override
    protected RemoteRegion describe(RegionImpl region, AbstractConnection via) throws RdmxException {
        MemorySegment mr = ((VerbsConnection) via).endpoint().registrationOf((Registrations) region.handle());
        return new RemoteRegion(region.address(), region.length(), remoteKey(mr), region.name());
    }

    /**
     * Registers memory with the node's protection domain (its home registration: no queue pair is in that domain,
     * so its keys reach nothing until the memory is registered in a connection's domain, see
     * {@link Registrations}).
     *
     * @param memory the memory
     * @param access SPI access flags
     * @return the {@code struct ibv_mr}
     * @throws RdmxException with the errno and the usual cause
     */
    MemorySegment register(MemorySegment memory, int access) throws RdmxException {
        return register(pd, memory, access, false);
    }

    /**
     * The {@code ibv_access_flags} of a registration: {@code LOCAL_WRITE} always (a region may be the target of a
     * RECV or a READ; the NIC needs it for {@code REMOTE_WRITE} too) but on memory mapped read-only, where
     * {@code ibv_reg_mr} cannot take it; {@code REMOTE_WRITE} and {@code REMOTE_READ} as the SPI bits say.
     *
     * @param access SPI access flags ({@link Access})
     * @param readOnlyMemory whether the memory is mapped read-only (a file region)
     * @return the flags
     */
    static int accessFlags(int access, boolean readOnlyMemory) {
        int flags = readOnlyMemory ? 0 : Consts.IBV_ACCESS_LOCAL_WRITE;
        if ((access & Access.REMOTE_WRITE) != 0) {
            if (readOnlyMemory) {
                throw new IllegalArgumentException("read-only memory cannot be remotely writable");
            }
            flags |= Consts.IBV_ACCESS_REMOTE_WRITE;
        }
        if ((access & Access.REMOTE_READ) != 0) {
            flags |= Consts.IBV_ACCESS_REMOTE_READ;
        }
        return flags;
    }

    /**
     * Registers memory with a protection domain.
     *
     * @param domain the {@code struct ibv_pd}
     * @param memory the memory
     * @param access SPI access flags
     * @param readOnlyMemory whether the memory is mapped read-only ({@link #accessFlags})
     * @return the {@code struct ibv_mr}
     * @throws RdmxException with the errno and the usual cause
     */
    MemorySegment register(MemorySegment domain, MemorySegment memory, int access, boolean readOnlyMemory)
        throws RdmxException {
        return register(domain, memory, access, readOnlyMemory, false);
    }

    /**
     * Registers memory with a protection domain; with {@code nullIfUnpinnable}, returns null where the kernel
     * refuses to pin the pages ({@code EFAULT}) instead of throwing.
     */
    MemorySegment register(MemorySegment domain, MemorySegment memory, int access, boolean readOnlyMemory,
                           boolean nullIfUnpinnable) throws RdmxException {
        int flags = accessFlags(access, readOnlyMemory);
        MemorySegment st = Lib.state();
        MemorySegment mr;
        try {
            mr = (MemorySegment) Lib.REG_MR.invoke(st, domain, memory, memory.byteSize(), flags);
        } catch (Throwable t) {
            throw new RdmxException("verbs: ibv_reg_mr failed: " + t, t);
        }
        if (mr.equals(MemorySegment.NULL)) {
            int err = Lib.errno(st);
            if (err == EFAULT && nullIfUnpinnable) {
                return null;
            }
            throw new RdmxException("verbs: ibv_reg_mr of " + memory.byteSize() + " bytes at node '" + name()
                + "' failed: errno=" + err + (err == More.ENOMEM || err == 1
                ? " (locked memory limit: raise 'ulimit -l' / memlock for this user)" : ""));
        }
        return mr.reinterpret(64);
    }

    static int localKey(MemorySegment mr) {
        return mr.get(JAVA_INT, IbvMr.LKEY);
    }

    static int remoteKey(MemorySegment mr) {
        return mr.get(JAVA_INT, IbvMr.RKEY);
    }

    void deregister(MemorySegment mr) {
        try {
            int rc = (int) Lib.DEREG_MR.invoke(Lib.state(), mr);
            if (rc != 0) {
                LOG.warn("verbs: ibv_dereg_mr at node '{}' failed: {}", name(), rc);
            }
        } catch (Throwable t) {
            LOG.warn("verbs: ibv_dereg_mr at node '{}' failed", name(), t);
        }
    }

    // ------------------------------------------------------------------ connect

    private void abandon(Endpoint ep) {
        if (ep != null && ep.connection() == null) {
            execute(ep::destroy);
        }
    }

    @Override
    protected Runnable dial(String peerAddress, InetSocketAddress peer, CompletableFuture<AbstractConnection> f,
                            long deadline, int resolveMs) {
        Endpoint ep = dialEndpoint(peerAddress, peer, f, deadline, resolveMs);
        return () -> abandon(ep);
    }

    private Endpoint dialEndpoint(String peerAddress, InetSocketAddress peer, CompletableFuture<AbstractConnection> f,
                                  long deadline, int ms) {
        MemorySegment st = Lib.state();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment holder = a.allocate(ADDRESS);
            int rc = (int) Lib.CREATE_ID.invoke(st, channel, holder, MemorySegment.NULL, Consts.RDMA_PS_TCP);
            if (rc != 0) {
                f.completeExceptionally(new RdmxException("verbs: rdma_create_id failed: errno=" + Lib.errno(st)));
                return null;
            }
            Endpoint ep = new Endpoint(this, holder.get(ADDRESS, 0), true, peerAddress, f, deadline);
            byId.put(ep.idKey(), ep);
            MemorySegment src = sockaddr(a, ip, 0);
            MemorySegment dst = sockaddr(a, peer.getAddress(), peer.getPort());
            rc = (int) Lib.RESOLVE_ADDR.invoke(st, ep.id, src, dst, ms);
            if (rc != 0) {
                f.completeExceptionally(new RdmxException("connect from '" + name() + "' to address=" + peerAddress
                    + " failed: rdma_resolve_addr errno=" + Lib.errno(st)));
                execute(ep::destroy);
            }
            return ep;
        } catch (Throwable t) {
            f.completeExceptionally(new RdmxException("connect from '" + name() + "' to address=" + peerAddress
                + " failed: " + t, t));
            return null;
        }
    }

    // ------------------------------------------------------------------ progress thread

    private void progressLoop() {
        Platform.hooks().bindCurrentThread("io", "verbs", address());
        MemorySegment fds = arena.allocate(24, 8);
        MemorySegment drainBuf = arena.allocate(8, 8);
        fds.set(JAVA_INT, 0, channel.get(JAVA_INT, RdmaEventChannel.FD));
        fds.set(JAVA_INT, 8, compChannel.get(JAVA_INT, IbvCompChannel.FD));
        fds.set(JAVA_INT, 16, wakeFd);
        for (int i = 0; i < 3; i++) {
            fds.set(JAVA_SHORT, i * 8 + 4, (short) More.POLLIN);
        }
        MemorySegment st = Lib.state();
        long nextSweep = System.nanoTime();
        while (!stopping) {
            try {
                for (int i = 0; i < 3; i++) {
                    fds.set(JAVA_SHORT, i * 8 + 6, (short) 0);
                }
                int n = (int) Lib.POLL_FDS.invoke(st, fds, 3L, busyPoll ? 0 : 100);
                // completions first: data that arrived before a disconnect is delivered before the flush
                if (n > 0 && fds.get(JAVA_SHORT, 14) != 0) {
                    cqEvents();
                }
                if (n > 0 && fds.get(JAVA_SHORT, 6) != 0) {
                    cmEvents();
                }
                if (busyPoll) {
                    for (Endpoint ep : byCq.values()) {
                        ep.drain();
                    }
                }
                if (n > 0 && fds.get(JAVA_SHORT, 22) != 0) {
                    Lib.READ.invoke(st, wakeFd, drainBuf, 8L);
                }
                runTasks();
                long now = System.nanoTime();
                if (now - nextSweep >= 0) {
                    nextSweep = now + 50_000_000L;
                    flow.sweep(now);
                }
            } catch (Throwable t) {
                LOG.error("verbs: progress thread of node '{}'", name(), t);
            }
        }
    }

    private void cqEvents() throws Throwable {
        MemorySegment st = Lib.state();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cqHolder = a.allocate(ADDRESS);
            MemorySegment ctxHolder = a.allocate(ADDRESS);
            while (true) {
                int rc = (int) Lib.GET_CQ_EVENT.invoke(st, compChannel, cqHolder, ctxHolder);
                if (rc != 0) {
                    return; // EAGAIN: no more events
                }
                MemorySegment cq = cqHolder.get(ADDRESS, 0);
                Lib.ACK_CQ_EVENTS.invoke(st, cq, 1);
                Endpoint ep = byCq.get(cq.address());
                if (ep != null) {
                    armCq(cq);
                    ep.drain();
                }
            }
        }
    }

    private void cmEvents() throws Throwable {
        MemorySegment st = Lib.state();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment holder = a.allocate(ADDRESS);
            while (true) {
                int rc = (int) Lib.GET_CM_EVENT.invoke(st, channel, holder);
                if (rc != 0) {
                    return;
                }
                MemorySegment ev = holder.get(ADDRESS, 0).reinterpret(64);
                int type = ev.get(JAVA_INT, RdmaCmEvent.EVENT);
                int status = ev.get(JAVA_INT, RdmaCmEvent.STATUS);
                MemorySegment id = ev.get(ADDRESS, RdmaCmEvent.ID);
                Lib.ACK_CM_EVENT.invoke(st, ev);
                try {
                    cmEvent(type, status, id);
                } catch (RuntimeException e) {
                    LOG.warn("verbs: node '{}' failed to handle {}", name(), eventName(type), e);
                }
            }
        }
    }

    static String eventName(int type) {
        try {
            return Lib.string((MemorySegment) Lib.EVENT_STR.invoke(Lib.state(), type));
        } catch (Throwable t) {
            return "rdma_cm event " + type;
        }
    }

    private void cmEvent(int type, int status, MemorySegment id) {
        if (type == Consts.RDMA_CM_EVENT_CONNECT_REQUEST) {
            Endpoint ep = new Endpoint(this, id, false, null, null,
                System.nanoTime() + options().peerTimeout().toNanos());
            byId.put(ep.idKey(), ep);
            flow.incoming(ep, stopping);
            return;
        }
        Endpoint ep = byId.get(id.address());
        if (ep != null) { // else an endpoint given up already, or TIMEWAIT_EXIT after destroy
            flow.onEvent(ep, type, status);
        }
    }

    /** Routes the events of a new endpoint's CQ to it. */
    void cqCreated(Endpoint ep) {
        byCq.put(ep.cqKey(), ep);
    }

    // ------------------------------------------------------------------ close

    /**
     * Test support: every queue pair of this node stops answering, without a disconnect (a frozen host);
     * peers detect it through their keep-alive probes.
     */
    public void freeze() {
        for (Endpoint ep : byId.values()) {
            if (ep.connection() != null) {
                ep.freeze();
            }
        }
    }

    /** Test support: the node dies like a crashed process (the kernel sends the peers a disconnect). */
    public void kill() {
        close();
    }

    @Override
    protected void closeTransport() {
        stopping = true;
        failDialing("node '" + name() + "' closed while connecting");
        wake();
        try {
            progress.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (progress.isAlive()) {
            LOG.warn("verbs: progress thread of node '{}' did not stop; leaking its native resources", name());
            return;
        }
        runTasks();
        for (Endpoint ep : new ArrayList<>(byId.values())) {
            ep.destroy();
        }
        cache.close();
        releaseNative();
        arena.close();
    }

    private void releaseNative() {
        MemorySegment st = Lib.state();
        try {
            if (!listenId.equals(MemorySegment.NULL)) {
                Lib.DESTROY_ID.invoke(st, listenId);
            }
            if (!compChannel.equals(MemorySegment.NULL)) {
                Lib.DESTROY_COMP_CHANNEL.invoke(st, compChannel);
            }
            if (!pd.equals(MemorySegment.NULL)) {
                int rc = (int) Lib.DEALLOC_PD.invoke(st, pd);
                if (rc != 0) {
                    LOG.warn("verbs: ibv_dealloc_pd at node '{}' failed: {} (resources still registered)", name(), rc);
                }
            }
            if (!channel.equals(MemorySegment.NULL)) {
                Lib.DESTROY_EVENT_CHANNEL.invoke(st, channel);
            }
            if (wakeFd >= 0) {
                Lib.CLOSE.invoke(st, wakeFd);
                wakeFd = -1;
            }
        } catch (Throwable t) {
            LOG.warn("verbs: releasing the native resources of node '{}' failed", name(), t);
        }
        listenId = MemorySegment.NULL;
        compChannel = MemorySegment.NULL;
        pd = MemorySegment.NULL;
        channel = MemorySegment.NULL;
    }
}
