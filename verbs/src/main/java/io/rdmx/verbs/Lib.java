package io.rdmx.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * Downcall handles into libibverbs and librdmacm ({@code java.lang.foreign}). The named functions capture
 * errno: their first parameter is a call-state segment ({@link #callState}), read with {@link #errno}.
 * The static inline verbs ({@code ibv_post_send}, {@code ibv_post_recv}, {@code ibv_poll_cq}) are called through
 * the function pointers of {@code struct ibv_context}'s ops table.
 */
@SuppressWarnings("restricted") // native access is the point of this module; run with --enable-native-access
public final class Lib {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final StructLayout STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final Linker.Option CAPTURE = Linker.Option.captureCallState("errno");

    private static final SymbolLookup IBV = SymbolLookup.libraryLookup("libibverbs.so.1", Arena.global());
    private static final SymbolLookup CM = SymbolLookup.libraryLookup("librdmacm.so.1", Arena.global());

    /** {@code struct rdma_event_channel *rdma_create_event_channel(void)}. */
    public static final MethodHandle CREATE_EVENT_CHANNEL = fn(CM, "rdma_create_event_channel",
        FunctionDescriptor.of(ADDRESS));
    /** {@code int rdma_create_id(channel, id**, context, ps)}. */
    public static final MethodHandle CREATE_ID = fn(CM, "rdma_create_id",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT));
    /** {@code int rdma_bind_addr(id, sockaddr*)}. */
    public static final MethodHandle BIND_ADDR = fn(CM, "rdma_bind_addr",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    /** {@code int rdma_listen(id, backlog)}. */
    public static final MethodHandle LISTEN = fn(CM, "rdma_listen", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    /** {@code int rdma_resolve_addr(id, src, dst, timeout_ms)}. */
    public static final MethodHandle RESOLVE_ADDR = fn(CM, "rdma_resolve_addr",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT));
    /** {@code int rdma_resolve_route(id, timeout_ms)}. */
    public static final MethodHandle RESOLVE_ROUTE = fn(CM, "rdma_resolve_route",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    /** {@code int rdma_get_cm_event(channel, event**)}. */
    public static final MethodHandle GET_CM_EVENT = fn(CM, "rdma_get_cm_event",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    /** {@code int rdma_ack_cm_event(event)}. */
    public static final MethodHandle ACK_CM_EVENT = fn(CM, "rdma_ack_cm_event",
        FunctionDescriptor.of(JAVA_INT, ADDRESS));
    /** {@code int rdma_create_qp(id, pd, ibv_qp_init_attr*)}. */
    public static final MethodHandle CREATE_QP = fn(CM, "rdma_create_qp",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
    /** {@code int rdma_connect(id, conn_param*)}. */
    public static final MethodHandle CONNECT = fn(CM, "rdma_connect",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    /** {@code int rdma_accept(id, conn_param*)}. */
    public static final MethodHandle ACCEPT = fn(CM, "rdma_accept", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    /** {@code int rdma_set_option(id, level, optname, optval*, optlen)}. */
    public static final MethodHandle SET_OPTION = fn(CM, "rdma_set_option",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS, JAVA_LONG));
    /** {@code int rdma_disconnect(id)}. */
    public static final MethodHandle DISCONNECT = fn(CM, "rdma_disconnect", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    /** {@code struct ibv_pd *ibv_alloc_pd(context)}. */
    public static final MethodHandle ALLOC_PD = fn(IBV, "ibv_alloc_pd", FunctionDescriptor.of(ADDRESS, ADDRESS));
    /** {@code struct ibv_cq *ibv_create_cq(context, cqe, cq_context, channel, comp_vector)}. */
    public static final MethodHandle CREATE_CQ = fn(IBV, "ibv_create_cq",
        FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
    /** {@code struct ibv_mr *ibv_reg_mr(pd, addr, length, access)}. */
    public static final MethodHandle REG_MR = fn(IBV, "ibv_reg_mr",
        FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT));

    /** {@code int rdma_reject(id, private_data, len)}. */
    public static final MethodHandle REJECT = fn(CM, "rdma_reject",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_BYTE));
    /** {@code void rdma_destroy_qp(id)}. */
    public static final MethodHandle DESTROY_QP = fnVoid(CM, "rdma_destroy_qp", ADDRESS);
    /** {@code int rdma_destroy_id(id)}. */
    public static final MethodHandle DESTROY_ID = fn(CM, "rdma_destroy_id", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    /** {@code void rdma_destroy_event_channel(channel)}. */
    public static final MethodHandle DESTROY_EVENT_CHANNEL = fnVoid(CM, "rdma_destroy_event_channel", ADDRESS);
    /** {@code __be16 rdma_get_src_port(id)}: network byte order. */
    public static final MethodHandle GET_SRC_PORT = fn(CM, "rdma_get_src_port",
        FunctionDescriptor.of(JAVA_SHORT, ADDRESS));
    /** {@code int ibv_dealloc_pd(pd)}. */
    public static final MethodHandle DEALLOC_PD = fn(IBV, "ibv_dealloc_pd", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    /** {@code int ibv_dereg_mr(mr)}. */
    public static final MethodHandle DEREG_MR = fn(IBV, "ibv_dereg_mr", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    /** {@code int ibv_destroy_cq(cq)}. */
    public static final MethodHandle DESTROY_CQ = fn(IBV, "ibv_destroy_cq", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    /** {@code struct ibv_comp_channel *ibv_create_comp_channel(context)}. */
    public static final MethodHandle CREATE_COMP_CHANNEL = fn(IBV, "ibv_create_comp_channel",
        FunctionDescriptor.of(ADDRESS, ADDRESS));
    /** {@code int ibv_destroy_comp_channel(channel)}. */
    public static final MethodHandle DESTROY_COMP_CHANNEL = fn(IBV, "ibv_destroy_comp_channel",
        FunctionDescriptor.of(JAVA_INT, ADDRESS));
    /** {@code int ibv_get_cq_event(channel, cq**, context**)}. */
    public static final MethodHandle GET_CQ_EVENT = fn(IBV, "ibv_get_cq_event",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
    /** {@code void ibv_ack_cq_events(cq, nevents)}. */
    public static final MethodHandle ACK_CQ_EVENTS = fnVoid(IBV, "ibv_ack_cq_events", ADDRESS, JAVA_INT);
    /** {@code const char *ibv_wc_status_str(status)}. */
    public static final MethodHandle WC_STATUS_STR = fn(IBV, "ibv_wc_status_str",
        FunctionDescriptor.of(ADDRESS, JAVA_INT));
    /** {@code int ibv_modify_qp(qp, ibv_qp_attr*, attr_mask)}. */
    public static final MethodHandle MODIFY_QP = fn(IBV, "ibv_modify_qp",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
    /** {@code int ibv_query_device(context, ibv_device_attr*)}. */
    public static final MethodHandle QUERY_DEVICE = fn(IBV, "ibv_query_device",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    /** {@code const char *ibv_get_device_name(device)}. */
    public static final MethodHandle GET_DEVICE_NAME = fn(IBV, "ibv_get_device_name",
        FunctionDescriptor.of(ADDRESS, ADDRESS));
    /** {@code const char *rdma_event_str(event)}. */
    public static final MethodHandle EVENT_STR = fn(CM, "rdma_event_str", FunctionDescriptor.of(ADDRESS, JAVA_INT));
    /** libc {@code int poll(struct pollfd*, nfds_t, int timeout_ms)}. */
    public static final MethodHandle POLL_FDS = fn(LINKER.defaultLookup(), "poll",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    /** libc {@code int fcntl(fd, cmd, int arg)} (variadic). */
    public static final MethodHandle FCNTL = LINKER.downcallHandle(
        LINKER.defaultLookup().find("fcntl").orElseThrow(), FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT,
            JAVA_INT), CAPTURE, Linker.Option.firstVariadicArg(2));
    /** libc {@code int eventfd(initval, flags)}. */
    public static final MethodHandle EVENTFD = fn(LINKER.defaultLookup(), "eventfd",
        FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    /** libc {@code ssize_t read(fd, buf, n)}. */
    public static final MethodHandle READ = fn(LINKER.defaultLookup(), "read",
        FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    /** libc {@code ssize_t write(fd, buf, n)}. */
    public static final MethodHandle WRITE = fn(LINKER.defaultLookup(), "write",
        FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    /** libc {@code int close(fd)}. */
    public static final MethodHandle CLOSE = fn(LINKER.defaultLookup(), "close",
        FunctionDescriptor.of(JAVA_INT, JAVA_INT));

    /**
     * The data-path verbs are short and never block (a provider's post at most rings a doorbell): they are
     * called as critical functions, without the Java-to-native thread state transition.
     */
    private static final Linker.Option FAST = Linker.Option.critical(false);
    private static final FunctionDescriptor POST = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS);
    private static final FunctionDescriptor POLL = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS);
    /** {@code ops.post_send(qp, wr, bad_wr**)}: first argument is the function address. */
    public static final MethodHandle POST_SEND_OP = LINKER.downcallHandle(POST, FAST);
    /** {@code ops.post_recv(qp, wr, bad_wr**)}. */
    public static final MethodHandle POST_RECV_OP = LINKER.downcallHandle(POST, FAST);
    /** {@code ops.poll_cq(cq, num_entries, wc*)}. */
    public static final MethodHandle POLL_CQ_OP = LINKER.downcallHandle(POLL, FAST);

    private Lib() {
    }

    private static MethodHandle fnVoid(SymbolLookup lib, String name, MemoryLayout... args) {
        return fn(lib, name, FunctionDescriptor.ofVoid(args));
    }

    /** {@code ops.req_notify_cq(cq, solicited_only)}. */
    public static final MethodHandle REQ_NOTIFY_CQ_OP = LINKER.downcallHandle(
        FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));

    /**
     * Reads a C string returned by a native call.
     *
     * @param p the pointer
     * @return the string, or "?" for NULL
     */
    public static String string(MemorySegment p) {
        return p.equals(MemorySegment.NULL) ? "?" : p.reinterpret(256).getString(0);
    }

    private static MethodHandle fn(SymbolLookup lib, String name, FunctionDescriptor fd) {
        MemorySegment sym = lib.find(name).orElseThrow(() -> new UnsatisfiedLinkError("symbol " + name));
        return LINKER.downcallHandle(sym, fd, CAPTURE);
    }

    private static final ThreadLocal<MemorySegment> STATES = ThreadLocal.withInitial(
        () -> Arena.ofAuto().allocate(STATE));

    /** @return this thread's call-state segment (errno of its last captured call) */
    public static MemorySegment state() {
        return STATES.get();
    }

    /** @return the errno of this thread's last captured call */
    public static int errno() {
        return errno(STATES.get());
    }

    /** @return a call-state segment to pass as the first argument of every captured call */
    public static MemorySegment callState(Arena arena) {
        return arena.allocate(STATE);
    }

    /**
     * @param state the call state of the last call
     * @return its errno
     */
    public static int errno(MemorySegment state) {
        return (int) ERRNO.get(state, 0L);
    }
}
