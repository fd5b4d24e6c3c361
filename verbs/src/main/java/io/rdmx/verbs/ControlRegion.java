package io.rdmx.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.internal.KeepAlive;
import io.rdmx.transport.internal.WorkQueues;
import io.rdmx.verbs.Native.Consts;
import io.rdmx.verbs.Native.IbvMr;
import io.rdmx.verbs.Native.IbvRecvWr;
import io.rdmx.verbs.Native.IbvSendWr;
import io.rdmx.verbs.Native.IbvSge;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * One queue pair's control region and the work requests that use it: the setup messages' SEND and RECV and the
 * keep-alive probes' WRITE. Registered in the queue pair's own domain for remote WRITE, so the peer can probe it:
 * <pre>
 *   0                    CTRL_HALF                    2*CTRL_HALF - PROBE_BYTES         2*CTRL_HALF
 *   +--------------------+----------------------------+---------------------------------+
 *   | setup receive      | setup send                 | keep-alive target (peer probes) |
 *   +--------------------+----------------------------+---------------------------------+
 * </pre>
 * Hardware ids: {@link #CTRL_RECV}, {@link #CTRL_SEND}, {@link #CTRL_PROBE} (all with {@link WorkQueues#CTRL_BIT}).
 * Posted under the endpoint's lock ({@link Endpoint}), which also guards these work request structs.
 */
@SuppressWarnings("restricted")
final class ControlRegion {
    static final long CTRL_RECV = WorkQueues.CTRL_BIT | 1;
    static final long CTRL_SEND = WorkQueues.CTRL_BIT | 2;
    static final long CTRL_PROBE = WorkQueues.CTRL_BIT | 3;
    /** Bytes at the end of the region that the peer's keep-alive probes WRITE. */
    static final int PROBE_BYTES = KeepAlive.TARGET_BYTES;
    /** Bytes of each half (receive, send) of the region. */
    static final int CTRL_HALF = 64 * 1024;

    private final Arena arena;
    private final MemorySegment sendWr;
    private final MemorySegment sendSge;
    private final MemorySegment recvWr;
    private final MemorySegment recvSge;
    private final MemorySegment bad;
    private MemorySegment ctrl;
    private MemorySegment mr = MemorySegment.NULL;
    private int lkey;

    /** @param arena the endpoint's memory, closed after its teardown */
    ControlRegion(Arena arena) {
        this.arena = arena;
        sendWr = arena.allocate(IbvSendWr.SIZE, 8);
        sendSge = arena.allocate(IbvSge.SIZE, 8);
        recvWr = arena.allocate(IbvRecvWr.SIZE, 8);
        recvSge = arena.allocate(IbvSge.SIZE, 8);
        bad = arena.allocate(ADDRESS);
        sendWr.set(ADDRESS, IbvSendWr.SG_LIST, sendSge);
        recvWr.set(ADDRESS, IbvRecvWr.SG_LIST, recvSge);
    }

    /**
     * Allocates the region and registers it in a protection domain, for local and remote WRITE.
     *
     * @param pd the queue pair's {@code struct ibv_pd}
     * @throws Throwable if the call does; RdmxException if the registration fails
     */
    void register(MemorySegment pd) throws Throwable {
        MemorySegment st = Lib.state();
        ctrl = arena.allocate(2L * CTRL_HALF, 4096);
        mr = ((MemorySegment) Lib.REG_MR.invoke(st, pd, ctrl, ctrl.byteSize(),
            Consts.IBV_ACCESS_LOCAL_WRITE | Consts.IBV_ACCESS_REMOTE_WRITE)).reinterpret(64);
        if (mr.equals(MemorySegment.NULL)) {
            throw new RdmxException("verbs: ibv_reg_mr of the control region failed: errno=" + Lib.errno(st)
                + " (locked memory limit? ulimit -l)");
        }
        lkey = mr.get(JAVA_INT, IbvMr.LKEY);
    }

    /** @return the send half, but for the keep-alive target at its end: where a setup message is encoded */
    MemorySegment sendArea() {
        return ctrl.asSlice(CTRL_HALF, CTRL_HALF - PROBE_BYTES);
    }

    /** @return the setup message received, {@code length} bytes from the receive half's start */
    ByteBuffer received(int length) {
        return ctrl.asSlice(0, length).asByteBuffer();
    }

    /** @return where the peer WRITEs its keep-alive probes */
    RemoteRegion probeTarget() {
        return new RemoteRegion(probeSource(), PROBE_BYTES, mr.get(JAVA_INT, IbvMr.RKEY));
    }

    /** The end of the region: the peer's probe target, and the source of this side's probes. */
    private long probeSource() {
        return ctrl.address() + 2L * CTRL_HALF - PROBE_BYTES;
    }

    /** Posts the receive of the next setup message; returns the provider's code (0: posted). */
    int postReceive(MemorySegment postRecvFn, MemorySegment qp) throws Throwable {
        recvSge.set(JAVA_LONG, IbvSge.ADDR, ctrl.address());
        recvSge.set(JAVA_INT, IbvSge.LENGTH, CTRL_HALF);
        recvSge.set(JAVA_INT, IbvSge.LKEY, lkey);
        recvWr.set(JAVA_LONG, IbvRecvWr.WR_ID, CTRL_RECV);
        recvWr.set(JAVA_INT, IbvRecvWr.NUM_SGE, 1);
        return (int) Lib.POST_RECV_OP.invokeExact(postRecvFn, qp, recvWr, bad);
    }

    /** Posts (signaled SEND) the setup message encoded in {@link #sendArea()}; returns the provider's code. */
    int postSend(MemorySegment postSendFn, MemorySegment qp, int length) throws Throwable {
        return send(postSendFn, qp, CTRL_SEND, Consts.IBV_WR_SEND, ctrl.address() + CTRL_HALF, length, null);
    }

    /** Posts a keep-alive probe (signaled WRITE) to the peer's target; returns the provider's code. */
    int postProbe(MemorySegment postSendFn, MemorySegment qp, RemoteRegion target) throws Throwable {
        return send(postSendFn, qp, CTRL_PROBE, Consts.IBV_WR_RDMA_WRITE, probeSource(), KeepAlive.PROBE_LENGTH,
            target);
    }

    private int send(MemorySegment postSendFn, MemorySegment qp, long wrId, int opcode, long addr, int length,
                     RemoteRegion target) throws Throwable {
        sendSge.set(JAVA_LONG, IbvSge.ADDR, addr);
        sendSge.set(JAVA_INT, IbvSge.LENGTH, length);
        sendSge.set(JAVA_INT, IbvSge.LKEY, lkey);
        sendWr.set(JAVA_LONG, IbvSendWr.WR_ID, wrId);
        sendWr.set(JAVA_INT, IbvSendWr.NUM_SGE, 1);
        sendWr.set(JAVA_INT, IbvSendWr.OPCODE, opcode);
        sendWr.set(JAVA_INT, IbvSendWr.SEND_FLAGS, Consts.IBV_SEND_SIGNALED);
        if (target != null) {
            sendWr.set(JAVA_LONG, IbvSendWr.RDMA_REMOTE_ADDR, target.address());
            sendWr.set(JAVA_INT, IbvSendWr.RDMA_RKEY, target.remoteKey());
        }
        return (int) Lib.POST_SEND_OP.invokeExact(postSendFn, qp, sendWr, bad);
    }

    /** Deregisters the region, if registered (the teardown, after the queue pair is gone). */
    void deregister() throws Throwable {
        if (!mr.equals(MemorySegment.NULL)) {
            Lib.DEREG_MR.invoke(Lib.state(), mr);
        }
    }
}
