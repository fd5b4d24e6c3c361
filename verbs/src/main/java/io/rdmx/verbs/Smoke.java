package io.rdmx.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import io.rdmx.verbs.Native.Consts;
import io.rdmx.verbs.Native.IbvContext;
import io.rdmx.verbs.Native.IbvMr;
import io.rdmx.verbs.Native.IbvQpInitAttr;
import io.rdmx.verbs.Native.IbvRecvWr;
import io.rdmx.verbs.Native.IbvSendWr;
import io.rdmx.verbs.Native.IbvSge;
import io.rdmx.verbs.Native.IbvWc;
import io.rdmx.verbs.Native.RdmaCmEvent;
import io.rdmx.verbs.Native.RdmaCmId;
import io.rdmx.verbs.Native.RdmaConnParam;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.nio.ByteOrder;

/**
 * A smoke test of the FFM binding on a real RDMA device (run inside the Soft-RoCE VM by
 * {@code scripts/softroce-test.sh}): in one process, an rdma_cm server and client connect over {@code rxe0},
 * the client WRITEs 1 MiB into the server's registered region, SENDs a message into a posted receive, and
 * WRITEs with an immediate; every byte and the immediate are checked. Prints {@code VERBS SMOKE OK} or exits 1.
 */
@SuppressWarnings("restricted") // native access is the point of this module; run with --enable-native-access
public final class Smoke {
    private static final long SIZE = 1 << 20;

    private final Arena arena = Arena.ofShared();
    private final MemorySegment st = Lib.callState(arena);

    private Smoke() {
    }

    /**
     * @param args the server address (an address of the RDMA device's interface) and port
     * @throws Throwable on failure
     */
    public static void main(String[] args) throws Throwable {
        try {
            new Smoke().run(InetAddress.getByName(args[0]).getAddress(), Integer.parseInt(args[1]));
        } catch (Throwable t) {
            System.out.println("VERBS SMOKE FAILED: " + t);
            for (StackTraceElement e : t.getStackTrace()) {
                System.out.println("    at " + e);
            }
            System.exit(1);
        }
        System.exit(0);
    }

    private static final boolean TRACE = Boolean.getBoolean("rdmx.verbs.trace");

    private static void step(String s) {
        if (TRACE) {
            System.out.println("step: " + s);
            System.out.flush();
        }
    }

    private int check(String call, int rc) {
        step(call + " rc=" + rc);
        if (rc != 0) {
            throw new IllegalStateException(call + " failed: rc=" + rc + " errno=" + Lib.errno(st));
        }
        return rc;
    }

    private MemorySegment nonNull(String call, MemorySegment p) {
        if (p.equals(MemorySegment.NULL)) {
            throw new IllegalStateException(call + " returned NULL, errno=" + Lib.errno(st));
        }
        return p;
    }

    private MemorySegment sockaddr(byte[] ip, int port) {
        MemorySegment sa = arena.allocate(16);
        sa.set(JAVA_SHORT, 0, (short) 2);
        sa.set(JAVA_SHORT.withOrder(ByteOrder.BIG_ENDIAN), 2, (short) port);
        MemorySegment.copy(MemorySegment.ofArray(ip), 0, sa, 4, 4);
        return sa;
    }

    private static MemorySegment deref(MemorySegment p, long offset) {
        return p.reinterpret(offset + 8).get(ADDRESS, offset);
    }

    private MemorySegment event(MemorySegment channel, int expected) throws Throwable {
        step("waiting for rdma_cm event " + expected);
        MemorySegment holder = arena.allocate(ADDRESS);
        check("rdma_get_cm_event", (int) Lib.GET_CM_EVENT.invoke(st, channel, holder));
        MemorySegment ev = holder.get(ADDRESS, 0).reinterpret(64);
        int type = ev.get(JAVA_INT, RdmaCmEvent.EVENT);
        int status = ev.get(JAVA_INT, RdmaCmEvent.STATUS);
        MemorySegment id = ev.get(ADDRESS, RdmaCmEvent.ID);
        check("rdma_ack_cm_event", (int) Lib.ACK_CM_EVENT.invoke(st, ev));
        if (type != expected) {
            throw new IllegalStateException("rdma_cm event " + type + " (status " + status + "), expected "
                + expected);
        }
        return id;
    }

    private MemorySegment[] qp(MemorySegment id) throws Throwable {
        MemorySegment ctx = deref(id, RdmaCmId.VERBS);
        MemorySegment pd = nonNull("ibv_alloc_pd", (MemorySegment) Lib.ALLOC_PD.invoke(st, ctx));
        MemorySegment cq = nonNull("ibv_create_cq", (MemorySegment) Lib.CREATE_CQ.invoke(st, ctx, 64,
            MemorySegment.NULL, MemorySegment.NULL, 0));
        MemorySegment attr = arena.allocate(IbvQpInitAttr.SIZE);
        attr.set(ADDRESS, IbvQpInitAttr.SEND_CQ, cq);
        attr.set(ADDRESS, IbvQpInitAttr.RECV_CQ, cq);
        attr.set(JAVA_INT, IbvQpInitAttr.CAP_MAX_SEND_WR, 16);
        attr.set(JAVA_INT, IbvQpInitAttr.CAP_MAX_RECV_WR, 16);
        attr.set(JAVA_INT, IbvQpInitAttr.CAP_MAX_SEND_SGE, 1);
        attr.set(JAVA_INT, IbvQpInitAttr.CAP_MAX_RECV_SGE, 1);
        attr.set(JAVA_INT, IbvQpInitAttr.QP_TYPE, Consts.IBV_QPT_RC);
        check("rdma_create_qp", (int) Lib.CREATE_QP.invoke(st, id, pd, attr));
        return new MemorySegment[] {ctx, pd, cq, deref(id, RdmaCmId.QP)};
    }

    private MemorySegment mr(MemorySegment pd, MemorySegment buf) throws Throwable {
        return nonNull("ibv_reg_mr", (MemorySegment) Lib.REG_MR.invoke(st, pd, buf, buf.byteSize(),
            Consts.IBV_ACCESS_LOCAL_WRITE | Consts.IBV_ACCESS_REMOTE_WRITE)).reinterpret(48);
    }

    private MemorySegment connParam() {
        MemorySegment p = arena.allocate(RdmaConnParam.SIZE);
        p.set(JAVA_BYTE, RdmaConnParam.RESPONDER_RESOURCES, (byte) 1);
        p.set(JAVA_BYTE, RdmaConnParam.INITIATOR_DEPTH, (byte) 1);
        p.set(JAVA_BYTE, RdmaConnParam.RETRY_COUNT, (byte) 7);
        p.set(JAVA_BYTE, RdmaConnParam.RNR_RETRY_COUNT, (byte) 7);
        return p;
    }

    private MemorySegment sge(MemorySegment mr, MemorySegment buf) {
        MemorySegment sge = arena.allocate(IbvSge.SIZE);
        sge.set(JAVA_LONG, IbvSge.ADDR, buf.address());
        sge.set(JAVA_INT, IbvSge.LENGTH, (int) buf.byteSize());
        sge.set(JAVA_INT, IbvSge.LKEY, mr.get(JAVA_INT, IbvMr.LKEY));
        return sge;
    }

    private void postRecv(MemorySegment ctx, MemorySegment qp, MemorySegment mr, MemorySegment buf, long wrId)
        throws Throwable {
        MemorySegment sge = sge(mr, buf);
        MemorySegment wr = arena.allocate(IbvRecvWr.SIZE);
        wr.set(JAVA_LONG, IbvRecvWr.WR_ID, wrId);
        wr.set(ADDRESS, IbvRecvWr.SG_LIST, sge);
        wr.set(JAVA_INT, IbvRecvWr.NUM_SGE, 1);
        MemorySegment bad = arena.allocate(ADDRESS);
        MemorySegment fn = deref(ctx, IbvContext.OPS_POST_RECV);
        int rc = (int) Lib.POST_RECV_OP.invoke(fn, qp, wr, bad);
        if (rc != 0) {
            throw new IllegalStateException("post_recv failed: " + rc);
        }
    }

    private void postSend(MemorySegment ctx, MemorySegment qp, MemorySegment mr, MemorySegment buf, int opcode,
                          long remoteAddr, int rkey, int imm, long wrId) throws Throwable {
        MemorySegment sge = sge(mr, buf);
        MemorySegment wr = arena.allocate(IbvSendWr.SIZE);
        wr.set(JAVA_LONG, IbvSendWr.WR_ID, wrId);
        wr.set(ADDRESS, IbvSendWr.SG_LIST, sge);
        wr.set(JAVA_INT, IbvSendWr.NUM_SGE, 1);
        wr.set(JAVA_INT, IbvSendWr.OPCODE, opcode);
        wr.set(JAVA_INT, IbvSendWr.SEND_FLAGS, Consts.IBV_SEND_SIGNALED);
        wr.set(JAVA_INT.withOrder(ByteOrder.BIG_ENDIAN), IbvSendWr.IMM_DATA, imm);
        wr.set(JAVA_LONG, IbvSendWr.RDMA_REMOTE_ADDR, remoteAddr);
        wr.set(JAVA_INT, IbvSendWr.RDMA_RKEY, rkey);
        MemorySegment bad = arena.allocate(ADDRESS);
        MemorySegment fn = deref(ctx, IbvContext.OPS_POST_SEND);
        int rc = (int) Lib.POST_SEND_OP.invoke(fn, qp, wr, bad);
        if (rc != 0) {
            throw new IllegalStateException("post_send opcode " + opcode + " failed: " + rc);
        }
    }

    /** Polls one completion (bounded), checks its status, returns opcode and immediate. */
    private long[] poll(MemorySegment ctx, MemorySegment cq, String what) throws Throwable {
        MemorySegment wc = arena.allocate(IbvWc.SIZE);
        MemorySegment fn = deref(ctx, IbvContext.OPS_POLL_CQ);
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (System.nanoTime() < deadline) {
            int n = (int) Lib.POLL_CQ_OP.invoke(fn, cq, 1, wc);
            if (n < 0) {
                throw new IllegalStateException("poll_cq failed: " + n);
            }
            if (n == 1) {
                int status = wc.get(JAVA_INT, IbvWc.STATUS);
                if (status != Consts.IBV_WC_SUCCESS) {
                    throw new IllegalStateException(what + ": completion status " + status);
                }
                return new long[] {wc.get(JAVA_INT, IbvWc.OPCODE), wc.get(JAVA_INT.withOrder(ByteOrder.BIG_ENDIAN),
                    IbvWc.IMM_DATA), wc.get(JAVA_INT, IbvWc.BYTE_LEN)};
            }
            Thread.onSpinWait();
        }
        throw new IllegalStateException(what + ": no completion within 30 s");
    }

    private void run(byte[] ip, int port) throws Throwable {
        step("start");
        MemorySegment chS = nonNull("rdma_create_event_channel", (MemorySegment) Lib.CREATE_EVENT_CHANNEL.invoke(st));
        MemorySegment chC = nonNull("rdma_create_event_channel", (MemorySegment) Lib.CREATE_EVENT_CHANNEL.invoke(st));
        MemorySegment holder = arena.allocate(ADDRESS);
        check("rdma_create_id", (int) Lib.CREATE_ID.invoke(st, chS, holder, MemorySegment.NULL, Consts.RDMA_PS_TCP));
        MemorySegment listen = holder.get(ADDRESS, 0).reinterpret(64);
        check("rdma_bind_addr", (int) Lib.BIND_ADDR.invoke(st, listen, sockaddr(ip, port)));
        check("rdma_listen", (int) Lib.LISTEN.invoke(st, listen, 4));
        check("rdma_create_id", (int) Lib.CREATE_ID.invoke(st, chC, holder, MemorySegment.NULL, Consts.RDMA_PS_TCP));
        MemorySegment client = holder.get(ADDRESS, 0).reinterpret(64);
        check("rdma_resolve_addr", (int) Lib.RESOLVE_ADDR.invoke(st, client, MemorySegment.NULL, sockaddr(ip, port),
            5000));
        event(chC, Consts.RDMA_CM_EVENT_ADDR_RESOLVED);
        check("rdma_resolve_route", (int) Lib.RESOLVE_ROUTE.invoke(st, client, 5000));
        event(chC, Consts.RDMA_CM_EVENT_ROUTE_RESOLVED);
        MemorySegment[] c = qp(client);
        check("rdma_connect", (int) Lib.CONNECT.invoke(st, client, connParam()));
        MemorySegment conn = event(chS, Consts.RDMA_CM_EVENT_CONNECT_REQUEST).reinterpret(64);
        MemorySegment[] s = qp(conn);
        MemorySegment target = arena.allocate(SIZE, 4096);
        MemorySegment recvBuf = arena.allocate(4096, 4096);
        MemorySegment mrT = mr(s[1], target);
        MemorySegment mrR = mr(s[1], recvBuf);
        postRecv(s[0], s[3], mrR, recvBuf, 1);
        postRecv(s[0], s[3], mrR, recvBuf, 2);
        check("rdma_accept", (int) Lib.ACCEPT.invoke(st, conn, connParam()));
        // The client's side completes the handshake (RTU) while it processes its event: take it first.
        event(chC, Consts.RDMA_CM_EVENT_ESTABLISHED);
        event(chS, Consts.RDMA_CM_EVENT_ESTABLISHED);

        MemorySegment src = arena.allocate(SIZE, 4096);
        for (long i = 0; i < SIZE; i += 8) {
            src.set(JAVA_LONG, i, i * 0x9E3779B97F4A7C15L);
        }
        MemorySegment msg = arena.allocate(64, 4096);
        msg.setString(0, "hello over rxe");
        MemorySegment mrS = mr(c[1], src);
        MemorySegment mrM = mr(c[1], msg);
        long remote = mrT.get(JAVA_LONG, IbvMr.ADDR);
        int rkey = mrT.get(JAVA_INT, IbvMr.RKEY);
        postSend(c[0], c[3], mrS, src, Consts.IBV_WR_RDMA_WRITE, remote, rkey, 0, 10);
        postSend(c[0], c[3], mrM, msg, Consts.IBV_WR_SEND, 0, 0, 0, 11);
        long[] w1 = poll(c[0], c[2], "client WRITE");
        long[] w2 = poll(c[0], c[2], "client SEND");
        long[] r1 = poll(s[0], s[2], "server RECV");
        if (w1[0] != Consts.IBV_WC_RDMA_WRITE || w2[0] != Consts.IBV_WC_SEND || r1[0] != Consts.IBV_WC_RECV) {
            throw new IllegalStateException("unexpected opcodes " + w1[0] + " " + w2[0] + " " + r1[0]);
        }
        if (target.mismatch(src) != -1) {
            throw new IllegalStateException("WRITE data differs at byte " + target.mismatch(src));
        }
        if (!recvBuf.getString(0).equals("hello over rxe")) {
            throw new IllegalStateException("SEND data wrong: " + recvBuf.getString(0));
        }
        postSend(c[0], c[3], mrM, msg, Consts.IBV_WR_RDMA_WRITE_WITH_IMM, remote, rkey, 0xC0FFEE, 12);
        poll(c[0], c[2], "client WRITE_WITH_IMM");
        long[] r2 = poll(s[0], s[2], "server RECV of the immediate");
        if (r2[0] != Consts.IBV_WC_RECV_RDMA_WITH_IMM || r2[1] != 0xC0FFEE) {
            throw new IllegalStateException("WRITE_WITH_IMM: opcode " + r2[0] + " imm 0x" + Long.toHexString(r2[1]));
        }
        check("rdma_disconnect", (int) Lib.DISCONNECT.invoke(st, client));
        System.out.println("VERBS SMOKE OK: rdma_cm connect/accept, 1 MiB WRITE, SEND into a posted RECV and"
            + " WRITE_WITH_IMM (imm 0xc0ffee) over java.lang.foreign, data checked");
    }
}
