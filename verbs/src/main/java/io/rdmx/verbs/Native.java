package io.rdmx.verbs;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Offsets, sizes and constants of the rdma-core structs and enums the verbs provider uses (x86_64, aarch64 and
 * ppc64le share them: LP64, natural alignment). Names follow the C declarations; each group names its header.
 */
public final class Native {
    private Native() {
    }

    /** {@code struct ibv_sge} (infiniband/verbs.h). */
    public static final class IbvSge {
        /** {@code uint64_t addr}. */
        public static final long ADDR = 0;
        /** {@code uint32_t length}. */
        public static final long LENGTH = 8;
        /** {@code uint32_t lkey}. */
        public static final long LKEY = 12;
        /** sizeof. */
        public static final long SIZE = 16;

        private IbvSge() {
        }
    }

    /** {@code struct ibv_send_wr} (infiniband/verbs.h). */
    public static final class IbvSendWr {
        /** {@code uint64_t wr_id}. */
        public static final long WR_ID = 0;
        /** {@code struct ibv_send_wr *next}. */
        public static final long NEXT = 8;
        /** {@code struct ibv_sge *sg_list}. */
        public static final long SG_LIST = 16;
        /** {@code int num_sge}. */
        public static final long NUM_SGE = 24;
        /** {@code enum ibv_wr_opcode opcode}. */
        public static final long OPCODE = 28;
        /** {@code unsigned int send_flags}. */
        public static final long SEND_FLAGS = 32;
        /** {@code __be32 imm_data} (anonymous union). */
        public static final long IMM_DATA = 36;
        /** {@code wr.rdma.remote_addr}. */
        public static final long RDMA_REMOTE_ADDR = 40;
        /** {@code wr.rdma.rkey}. */
        public static final long RDMA_RKEY = 48;
        /** sizeof. */
        public static final long SIZE = 128;

        private IbvSendWr() {
        }
    }

    /** {@code struct ibv_recv_wr} (infiniband/verbs.h). */
    public static final class IbvRecvWr {
        /** {@code uint64_t wr_id}. */
        public static final long WR_ID = 0;
        /** {@code struct ibv_recv_wr *next}. */
        public static final long NEXT = 8;
        /** {@code struct ibv_sge *sg_list}. */
        public static final long SG_LIST = 16;
        /** {@code int num_sge}. */
        public static final long NUM_SGE = 24;
        /** sizeof. */
        public static final long SIZE = 32;

        private IbvRecvWr() {
        }
    }

    /** {@code struct ibv_wc} (infiniband/verbs.h). */
    public static final class IbvWc {
        /** {@code uint64_t wr_id}. */
        public static final long WR_ID = 0;
        /** {@code enum ibv_wc_status status}. */
        public static final long STATUS = 8;
        /** {@code enum ibv_wc_opcode opcode}. */
        public static final long OPCODE = 12;
        /** {@code uint32_t vendor_err}. */
        public static final long VENDOR_ERR = 16;
        /** {@code uint32_t byte_len}. */
        public static final long BYTE_LEN = 20;
        /** {@code __be32 imm_data} (anonymous union). */
        public static final long IMM_DATA = 24;
        /** {@code uint32_t qp_num}. */
        public static final long QP_NUM = 28;
        /** {@code unsigned int wc_flags}. */
        public static final long WC_FLAGS = 36;
        /** sizeof. */
        public static final long SIZE = 48;

        private IbvWc() {
        }
    }

    /** {@code struct ibv_mr} (infiniband/verbs.h). */
    public static final class IbvMr {
        /** {@code void *addr}. */
        public static final long ADDR = 16;
        /** {@code size_t length}. */
        public static final long LENGTH = 24;
        /** {@code uint32_t lkey}. */
        public static final long LKEY = 36;
        /** {@code uint32_t rkey}. */
        public static final long RKEY = 40;

        private IbvMr() {
        }
    }

    /**
     * {@code struct ibv_context} (infiniband/verbs.h): the ops table of the static inline verbs, called through
     * its function pointers.
     */
    public static final class IbvContext {
        /** {@code ops.poll_cq}. */
        public static final long OPS_POLL_CQ = 96;
        /** {@code ops.req_notify_cq}. */
        public static final long OPS_REQ_NOTIFY_CQ = 104;
        /** {@code ops.post_send}. */
        public static final long OPS_POST_SEND = 208;
        /** {@code ops.post_recv}. */
        public static final long OPS_POST_RECV = 216;

        private IbvContext() {
        }
    }

    /** {@code struct ibv_qp_init_attr} (infiniband/verbs.h). */
    public static final class IbvQpInitAttr {
        /** {@code struct ibv_cq *send_cq}. */
        public static final long SEND_CQ = 8;
        /** {@code struct ibv_cq *recv_cq}. */
        public static final long RECV_CQ = 16;
        /** {@code cap.max_send_wr}. */
        public static final long CAP_MAX_SEND_WR = 32;
        /** {@code cap.max_recv_wr}. */
        public static final long CAP_MAX_RECV_WR = 36;
        /** {@code cap.max_send_sge}. */
        public static final long CAP_MAX_SEND_SGE = 40;
        /** {@code cap.max_recv_sge}. */
        public static final long CAP_MAX_RECV_SGE = 44;
        /** {@code cap.max_inline_data}. */
        public static final long CAP_MAX_INLINE_DATA = 48;
        /** {@code enum ibv_qp_type qp_type}. */
        public static final long QP_TYPE = 52;
        /** {@code int sq_sig_all}. */
        public static final long SQ_SIG_ALL = 56;
        /** sizeof. */
        public static final long SIZE = 64;

        private IbvQpInitAttr() {
        }
    }

    /** {@code struct ibv_device_attr} (infiniband/verbs.h): the RDMA READ depths a queue pair may be given. */
    public static final class IbvDeviceAttr {
        /** {@code int max_qp_rd_atom}: READs (and atomics) a queue pair may have in flight as the responder. */
        public static final long MAX_QP_RD_ATOM = 144;
        /** {@code int max_qp_init_rd_atom}: READs (and atomics) a queue pair may have in flight as the requester. */
        public static final long MAX_QP_INIT_RD_ATOM = 156;
        /** sizeof. */
        public static final long SIZE = 232;

        private IbvDeviceAttr() {
        }
    }

    /** {@code struct rdma_cm_id} (rdma/rdma_cma.h). */
    public static final class RdmaCmId {
        /** {@code struct ibv_context *verbs}. */
        public static final long VERBS = 0;
        /** {@code struct rdma_event_channel *channel}. */
        public static final long CHANNEL = 8;
        /** {@code void *context}. */
        public static final long CONTEXT = 16;
        /** {@code struct ibv_qp *qp}. */
        public static final long QP = 24;

        private RdmaCmId() {
        }
    }

    /** {@code struct rdma_cm_event} (rdma/rdma_cma.h). */
    public static final class RdmaCmEvent {
        /** {@code struct rdma_cm_id *id}. */
        public static final long ID = 0;
        /** {@code struct rdma_cm_id *listen_id}. */
        public static final long LISTEN_ID = 8;
        /** {@code enum rdma_cm_event_type event}. */
        public static final long EVENT = 16;
        /** {@code int status}. */
        public static final long STATUS = 20;
        /** {@code param.conn.private_data}. */
        public static final long CONN_PRIVATE_DATA = 24;
        /** {@code param.conn.private_data_len}. */
        public static final long CONN_PRIVATE_DATA_LEN = 32;

        private RdmaCmEvent() {
        }
    }

    /** {@code struct rdma_conn_param} (rdma/rdma_cma.h). */
    public static final class RdmaConnParam {
        /** {@code const void *private_data}. */
        public static final long PRIVATE_DATA = 0;
        /** {@code uint8_t private_data_len}. */
        public static final long PRIVATE_DATA_LEN = 8;
        /** {@code uint8_t responder_resources}. */
        public static final long RESPONDER_RESOURCES = 9;
        /** {@code uint8_t initiator_depth}. */
        public static final long INITIATOR_DEPTH = 10;
        /** {@code uint8_t retry_count}. */
        public static final long RETRY_COUNT = 12;
        /** {@code uint8_t rnr_retry_count}. */
        public static final long RNR_RETRY_COUNT = 13;
        /** sizeof. */
        public static final long SIZE = 24;

        private RdmaConnParam() {
        }
    }

    /** Enum values and flags (infiniband/verbs.h, rdma/rdma_cma.h). */
    public static final class Consts {
        /** {@code IBV_WR_RDMA_WRITE}. */
        public static final int IBV_WR_RDMA_WRITE = 0;
        /** {@code IBV_WR_RDMA_WRITE_WITH_IMM}. */
        public static final int IBV_WR_RDMA_WRITE_WITH_IMM = 1;
        /** {@code IBV_WR_SEND}. */
        public static final int IBV_WR_SEND = 2;
        /** {@code IBV_WR_RDMA_READ}. */
        public static final int IBV_WR_RDMA_READ = 4;
        /** {@code IBV_SEND_SIGNALED}. */
        public static final int IBV_SEND_SIGNALED = 2;
        /** {@code IBV_WC_SUCCESS}. */
        public static final int IBV_WC_SUCCESS = 0;
        /** {@code IBV_WC_LOC_LEN_ERR}. */
        public static final int IBV_WC_LOC_LEN_ERR = 1;
        /** {@code IBV_WC_WR_FLUSH_ERR}. */
        public static final int IBV_WC_WR_FLUSH_ERR = 5;
        /** {@code IBV_WC_REM_INV_REQ_ERR}. */
        public static final int IBV_WC_REM_INV_REQ_ERR = 9;
        /** {@code IBV_WC_REM_ACCESS_ERR}. */
        public static final int IBV_WC_REM_ACCESS_ERR = 10;
        /** {@code IBV_WC_SEND}. */
        public static final int IBV_WC_SEND = 0;
        /** {@code IBV_WC_RDMA_WRITE}. */
        public static final int IBV_WC_RDMA_WRITE = 1;
        /** {@code IBV_WC_RDMA_READ}. */
        public static final int IBV_WC_RDMA_READ = 2;
        /** {@code IBV_WC_RECV}. */
        public static final int IBV_WC_RECV = 128;
        /** {@code IBV_WC_RECV_RDMA_WITH_IMM}. */
        public static final int IBV_WC_RECV_RDMA_WITH_IMM = 129;
        /** {@code IBV_WC_WITH_IMM}. */
        public static final int IBV_WC_WITH_IMM = 2;
        /** {@code IBV_ACCESS_LOCAL_WRITE}. */
        public static final int IBV_ACCESS_LOCAL_WRITE = 1;
        /** {@code IBV_ACCESS_REMOTE_WRITE}. */
        public static final int IBV_ACCESS_REMOTE_WRITE = 2;
        /** {@code IBV_ACCESS_REMOTE_READ}. */
        public static final int IBV_ACCESS_REMOTE_READ = 4;
        /** {@code IBV_QPT_RC}. */
        public static final int IBV_QPT_RC = 2;
        /** {@code RDMA_PS_TCP}. */
        public static final int RDMA_PS_TCP = 0x0106;
        /** {@code RDMA_CM_EVENT_ADDR_RESOLVED}. */
        public static final int RDMA_CM_EVENT_ADDR_RESOLVED = 0;
        /** {@code RDMA_CM_EVENT_ROUTE_RESOLVED}. */
        public static final int RDMA_CM_EVENT_ROUTE_RESOLVED = 2;
        /** {@code RDMA_CM_EVENT_CONNECT_REQUEST}. */
        public static final int RDMA_CM_EVENT_CONNECT_REQUEST = 4;
        /** {@code RDMA_CM_EVENT_REJECTED}. */
        public static final int RDMA_CM_EVENT_REJECTED = 8;
        /** {@code RDMA_CM_EVENT_ESTABLISHED}. */
        public static final int RDMA_CM_EVENT_ESTABLISHED = 9;
        /** {@code RDMA_CM_EVENT_DISCONNECTED}. */
        public static final int RDMA_CM_EVENT_DISCONNECTED = 10;

        private Consts() {
        }
    }

    /** {@code struct rdma_event_channel}. */
    public static final class RdmaEventChannel {
        /** {@code fd}. */
        public static final long FD = 0;

        private RdmaEventChannel() {
        }
    }

    /** {@code struct ibv_comp_channel}. */
    public static final class IbvCompChannel {
        /** {@code fd}. */
        public static final long FD = 8;

        private IbvCompChannel() {
        }
    }

    /** Constants not needed by the smoke test. */
    public static final class More {
        /** {@code offsetof(struct ibv_qp_attr, qp_state)}. */
        public static final long QP_ATTR_QP_STATE = 0;
        /** {@code offsetof(struct ibv_qp_attr, min_rnr_timer)}. */
        public static final long QP_ATTR_MIN_RNR_TIMER = 128;
        /** {@code IBV_QP_MIN_RNR_TIMER}. */
        public static final int IBV_QP_MIN_RNR_TIMER = 1 << 15;
        /** {@code IBV_QPS_ERR}. */
        public static final int IBV_QPS_ERR = 6;
        /** {@code IBV_QP_STATE}. */
        public static final int IBV_QP_STATE = 1;
        /** {@code IBV_SEND_INLINE}. */
        public static final int IBV_SEND_INLINE = 8;
        /** {@code RDMA_MAX_RESP_RES}: rdma_accept takes the requester's initiator depth, capped by the device. */
        public static final int RDMA_MAX_RESP_RES = 0xFF;
        /** {@code RDMA_MAX_INIT_DEPTH}: rdma_accept takes the requester's responder resources, capped likewise. */
        public static final int RDMA_MAX_INIT_DEPTH = 0xFF;
        /** {@code RDMA_OPTION_ID}: the level of rdma_set_option's options of the id itself. */
        public static final int RDMA_OPTION_ID = 0;
        /** {@code RDMA_OPTION_ID_ACK_TIMEOUT}: the queue pair's local ACK timeout (a {@code uint8_t}). */
        public static final int RDMA_OPTION_ID_ACK_TIMEOUT = 3;
        /** {@code IBV_WC_LOC_QP_OP_ERR}. */
        public static final int IBV_WC_LOC_QP_OP_ERR = 2;
        /** {@code IBV_WC_REM_OP_ERR}. */
        public static final int IBV_WC_REM_OP_ERR = 11;
        /** {@code IBV_WC_RETRY_EXC_ERR}. */
        public static final int IBV_WC_RETRY_EXC_ERR = 12;
        /** {@code IBV_WC_RNR_RETRY_EXC_ERR}. */
        public static final int IBV_WC_RNR_RETRY_EXC_ERR = 13;
        /** {@code RDMA_CM_EVENT_ADDR_ERROR}. */
        public static final int RDMA_CM_EVENT_ADDR_ERROR = 1;
        /** {@code RDMA_CM_EVENT_ROUTE_ERROR}. */
        public static final int RDMA_CM_EVENT_ROUTE_ERROR = 3;
        /** {@code RDMA_CM_EVENT_CONNECT_ERROR}. */
        public static final int RDMA_CM_EVENT_CONNECT_ERROR = 6;
        /** {@code RDMA_CM_EVENT_UNREACHABLE}. */
        public static final int RDMA_CM_EVENT_UNREACHABLE = 7;
        /** {@code RDMA_CM_EVENT_DEVICE_REMOVAL}. */
        public static final int RDMA_CM_EVENT_DEVICE_REMOVAL = 11;
        /** {@code RDMA_CM_EVENT_TIMEWAIT_EXIT}. */
        public static final int RDMA_CM_EVENT_TIMEWAIT_EXIT = 15;
        /** {@code O_NONBLOCK} (x86_64 and aarch64 Linux). */
        public static final int O_NONBLOCK = 04000;
        /** {@code F_SETFL}. */
        public static final int F_SETFL = 4;
        /** {@code F_GETFL}. */
        public static final int F_GETFL = 3;
        /** {@code POLLIN}. */
        public static final int POLLIN = 1;
        /** {@code EFD_NONBLOCK}. */
        public static final int EFD_NONBLOCK = 04000;
        /** {@code EAGAIN}. */
        public static final int EAGAIN = 11;
        /** {@code ENOMEM}. */
        public static final int ENOMEM = 12;

        private More() {
        }
    }

    /**
     * Every checked value, keyed by the C expression that must equal it (an {@code offsetof}, a
     * {@code sizeof}, or an enum constant). The header test compiles these expressions.
     *
     * @return expression to Java value, in declaration order
     */
    public static Map<String, Long> checked() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("offsetof(struct ibv_sge, addr)", IbvSge.ADDR);
        m.put("offsetof(struct ibv_sge, length)", IbvSge.LENGTH);
        m.put("offsetof(struct ibv_sge, lkey)", IbvSge.LKEY);
        m.put("sizeof(struct ibv_sge)", IbvSge.SIZE);
        m.put("offsetof(struct ibv_send_wr, wr_id)", IbvSendWr.WR_ID);
        m.put("offsetof(struct ibv_send_wr, next)", IbvSendWr.NEXT);
        m.put("offsetof(struct ibv_send_wr, sg_list)", IbvSendWr.SG_LIST);
        m.put("offsetof(struct ibv_send_wr, num_sge)", IbvSendWr.NUM_SGE);
        m.put("offsetof(struct ibv_send_wr, opcode)", IbvSendWr.OPCODE);
        m.put("offsetof(struct ibv_send_wr, send_flags)", IbvSendWr.SEND_FLAGS);
        m.put("offsetof(struct ibv_send_wr, imm_data)", IbvSendWr.IMM_DATA);
        m.put("offsetof(struct ibv_send_wr, wr.rdma.remote_addr)", IbvSendWr.RDMA_REMOTE_ADDR);
        m.put("offsetof(struct ibv_send_wr, wr.rdma.rkey)", IbvSendWr.RDMA_RKEY);
        m.put("sizeof(struct ibv_send_wr)", IbvSendWr.SIZE);
        m.put("offsetof(struct ibv_recv_wr, wr_id)", IbvRecvWr.WR_ID);
        m.put("offsetof(struct ibv_recv_wr, next)", IbvRecvWr.NEXT);
        m.put("offsetof(struct ibv_recv_wr, sg_list)", IbvRecvWr.SG_LIST);
        m.put("offsetof(struct ibv_recv_wr, num_sge)", IbvRecvWr.NUM_SGE);
        m.put("sizeof(struct ibv_recv_wr)", IbvRecvWr.SIZE);
        m.put("offsetof(struct ibv_wc, wr_id)", IbvWc.WR_ID);
        m.put("offsetof(struct ibv_wc, status)", IbvWc.STATUS);
        m.put("offsetof(struct ibv_wc, opcode)", IbvWc.OPCODE);
        m.put("offsetof(struct ibv_wc, vendor_err)", IbvWc.VENDOR_ERR);
        m.put("offsetof(struct ibv_wc, byte_len)", IbvWc.BYTE_LEN);
        m.put("offsetof(struct ibv_wc, imm_data)", IbvWc.IMM_DATA);
        m.put("offsetof(struct ibv_wc, qp_num)", IbvWc.QP_NUM);
        m.put("offsetof(struct ibv_wc, wc_flags)", IbvWc.WC_FLAGS);
        m.put("sizeof(struct ibv_wc)", IbvWc.SIZE);
        m.put("offsetof(struct ibv_mr, addr)", IbvMr.ADDR);
        m.put("offsetof(struct ibv_mr, length)", IbvMr.LENGTH);
        m.put("offsetof(struct ibv_mr, lkey)", IbvMr.LKEY);
        m.put("offsetof(struct ibv_mr, rkey)", IbvMr.RKEY);
        m.put("offsetof(struct ibv_context, ops.poll_cq)", IbvContext.OPS_POLL_CQ);
        m.put("offsetof(struct ibv_context, ops.req_notify_cq)", IbvContext.OPS_REQ_NOTIFY_CQ);
        m.put("offsetof(struct ibv_context, ops.post_send)", IbvContext.OPS_POST_SEND);
        m.put("offsetof(struct ibv_context, ops.post_recv)", IbvContext.OPS_POST_RECV);
        m.put("offsetof(struct ibv_qp_init_attr, send_cq)", IbvQpInitAttr.SEND_CQ);
        m.put("offsetof(struct ibv_qp_init_attr, recv_cq)", IbvQpInitAttr.RECV_CQ);
        m.put("offsetof(struct ibv_qp_init_attr, cap.max_send_wr)", IbvQpInitAttr.CAP_MAX_SEND_WR);
        m.put("offsetof(struct ibv_qp_init_attr, cap.max_recv_wr)", IbvQpInitAttr.CAP_MAX_RECV_WR);
        m.put("offsetof(struct ibv_qp_init_attr, cap.max_send_sge)", IbvQpInitAttr.CAP_MAX_SEND_SGE);
        m.put("offsetof(struct ibv_qp_init_attr, cap.max_recv_sge)", IbvQpInitAttr.CAP_MAX_RECV_SGE);
        m.put("offsetof(struct ibv_qp_init_attr, cap.max_inline_data)", IbvQpInitAttr.CAP_MAX_INLINE_DATA);
        m.put("offsetof(struct ibv_qp_init_attr, qp_type)", IbvQpInitAttr.QP_TYPE);
        m.put("offsetof(struct ibv_qp_init_attr, sq_sig_all)", IbvQpInitAttr.SQ_SIG_ALL);
        m.put("sizeof(struct ibv_qp_init_attr)", IbvQpInitAttr.SIZE);
        m.put("offsetof(struct ibv_device_attr, max_qp_rd_atom)", IbvDeviceAttr.MAX_QP_RD_ATOM);
        m.put("offsetof(struct ibv_device_attr, max_qp_init_rd_atom)", IbvDeviceAttr.MAX_QP_INIT_RD_ATOM);
        m.put("sizeof(struct ibv_device_attr)", IbvDeviceAttr.SIZE);
        m.put("offsetof(struct rdma_cm_id, verbs)", RdmaCmId.VERBS);
        m.put("offsetof(struct rdma_cm_id, channel)", RdmaCmId.CHANNEL);
        m.put("offsetof(struct rdma_cm_id, context)", RdmaCmId.CONTEXT);
        m.put("offsetof(struct rdma_cm_id, qp)", RdmaCmId.QP);
        m.put("offsetof(struct rdma_cm_event, id)", RdmaCmEvent.ID);
        m.put("offsetof(struct rdma_cm_event, listen_id)", RdmaCmEvent.LISTEN_ID);
        m.put("offsetof(struct rdma_cm_event, event)", RdmaCmEvent.EVENT);
        m.put("offsetof(struct rdma_cm_event, status)", RdmaCmEvent.STATUS);
        m.put("offsetof(struct rdma_cm_event, param.conn.private_data)", RdmaCmEvent.CONN_PRIVATE_DATA);
        m.put("offsetof(struct rdma_cm_event, param.conn.private_data_len)", RdmaCmEvent.CONN_PRIVATE_DATA_LEN);
        m.put("offsetof(struct rdma_conn_param, private_data)", RdmaConnParam.PRIVATE_DATA);
        m.put("offsetof(struct rdma_conn_param, private_data_len)", RdmaConnParam.PRIVATE_DATA_LEN);
        m.put("offsetof(struct rdma_conn_param, responder_resources)", RdmaConnParam.RESPONDER_RESOURCES);
        m.put("offsetof(struct rdma_conn_param, initiator_depth)", RdmaConnParam.INITIATOR_DEPTH);
        m.put("offsetof(struct rdma_conn_param, retry_count)", RdmaConnParam.RETRY_COUNT);
        m.put("offsetof(struct rdma_conn_param, rnr_retry_count)", RdmaConnParam.RNR_RETRY_COUNT);
        m.put("sizeof(struct rdma_conn_param)", RdmaConnParam.SIZE);
        m.put("IBV_WR_RDMA_WRITE", (long) Consts.IBV_WR_RDMA_WRITE);
        m.put("IBV_WR_RDMA_WRITE_WITH_IMM", (long) Consts.IBV_WR_RDMA_WRITE_WITH_IMM);
        m.put("IBV_WR_SEND", (long) Consts.IBV_WR_SEND);
        m.put("IBV_WR_RDMA_READ", (long) Consts.IBV_WR_RDMA_READ);
        m.put("IBV_SEND_SIGNALED", (long) Consts.IBV_SEND_SIGNALED);
        m.put("IBV_WC_SUCCESS", (long) Consts.IBV_WC_SUCCESS);
        m.put("IBV_WC_LOC_LEN_ERR", (long) Consts.IBV_WC_LOC_LEN_ERR);
        m.put("IBV_WC_WR_FLUSH_ERR", (long) Consts.IBV_WC_WR_FLUSH_ERR);
        m.put("IBV_WC_REM_INV_REQ_ERR", (long) Consts.IBV_WC_REM_INV_REQ_ERR);
        m.put("IBV_WC_REM_ACCESS_ERR", (long) Consts.IBV_WC_REM_ACCESS_ERR);
        m.put("IBV_WC_SEND", (long) Consts.IBV_WC_SEND);
        m.put("IBV_WC_RDMA_WRITE", (long) Consts.IBV_WC_RDMA_WRITE);
        m.put("IBV_WC_RDMA_READ", (long) Consts.IBV_WC_RDMA_READ);
        m.put("IBV_WC_RECV", (long) Consts.IBV_WC_RECV);
        m.put("IBV_WC_RECV_RDMA_WITH_IMM", (long) Consts.IBV_WC_RECV_RDMA_WITH_IMM);
        m.put("IBV_WC_WITH_IMM", (long) Consts.IBV_WC_WITH_IMM);
        m.put("IBV_ACCESS_LOCAL_WRITE", (long) Consts.IBV_ACCESS_LOCAL_WRITE);
        m.put("IBV_ACCESS_REMOTE_WRITE", (long) Consts.IBV_ACCESS_REMOTE_WRITE);
        m.put("IBV_ACCESS_REMOTE_READ", (long) Consts.IBV_ACCESS_REMOTE_READ);
        m.put("IBV_QPT_RC", (long) Consts.IBV_QPT_RC);
        m.put("RDMA_PS_TCP", (long) Consts.RDMA_PS_TCP);
        m.put("RDMA_CM_EVENT_ADDR_RESOLVED", (long) Consts.RDMA_CM_EVENT_ADDR_RESOLVED);
        m.put("RDMA_CM_EVENT_ROUTE_RESOLVED", (long) Consts.RDMA_CM_EVENT_ROUTE_RESOLVED);
        m.put("RDMA_CM_EVENT_CONNECT_REQUEST", (long) Consts.RDMA_CM_EVENT_CONNECT_REQUEST);
        m.put("RDMA_CM_EVENT_REJECTED", (long) Consts.RDMA_CM_EVENT_REJECTED);
        m.put("RDMA_CM_EVENT_ESTABLISHED", (long) Consts.RDMA_CM_EVENT_ESTABLISHED);
        m.put("RDMA_CM_EVENT_DISCONNECTED", (long) Consts.RDMA_CM_EVENT_DISCONNECTED);
        m.put("offsetof(struct rdma_event_channel, fd)", RdmaEventChannel.FD);
        m.put("offsetof(struct ibv_comp_channel, fd)", IbvCompChannel.FD);
        m.put("IBV_SEND_INLINE", (long) More.IBV_SEND_INLINE);
        m.put("offsetof(struct ibv_qp_attr, qp_state)", More.QP_ATTR_QP_STATE);
        m.put("IBV_QPS_ERR", (long) More.IBV_QPS_ERR);
        m.put("offsetof(struct ibv_qp_attr, min_rnr_timer)", More.QP_ATTR_MIN_RNR_TIMER);
        m.put("IBV_QP_MIN_RNR_TIMER", (long) More.IBV_QP_MIN_RNR_TIMER);
        m.put("IBV_QP_STATE", (long) More.IBV_QP_STATE);
        m.put("RDMA_MAX_RESP_RES", (long) More.RDMA_MAX_RESP_RES);
        m.put("RDMA_MAX_INIT_DEPTH", (long) More.RDMA_MAX_INIT_DEPTH);
        m.put("RDMA_OPTION_ID", (long) More.RDMA_OPTION_ID);
        m.put("RDMA_OPTION_ID_ACK_TIMEOUT", (long) More.RDMA_OPTION_ID_ACK_TIMEOUT);
        m.put("IBV_WC_LOC_QP_OP_ERR", (long) More.IBV_WC_LOC_QP_OP_ERR);
        m.put("IBV_WC_REM_OP_ERR", (long) More.IBV_WC_REM_OP_ERR);
        m.put("IBV_WC_RETRY_EXC_ERR", (long) More.IBV_WC_RETRY_EXC_ERR);
        m.put("IBV_WC_RNR_RETRY_EXC_ERR", (long) More.IBV_WC_RNR_RETRY_EXC_ERR);
        m.put("RDMA_CM_EVENT_ADDR_ERROR", (long) More.RDMA_CM_EVENT_ADDR_ERROR);
        m.put("RDMA_CM_EVENT_ROUTE_ERROR", (long) More.RDMA_CM_EVENT_ROUTE_ERROR);
        m.put("RDMA_CM_EVENT_CONNECT_ERROR", (long) More.RDMA_CM_EVENT_CONNECT_ERROR);
        m.put("RDMA_CM_EVENT_UNREACHABLE", (long) More.RDMA_CM_EVENT_UNREACHABLE);
        m.put("RDMA_CM_EVENT_DEVICE_REMOVAL", (long) More.RDMA_CM_EVENT_DEVICE_REMOVAL);
        m.put("RDMA_CM_EVENT_TIMEWAIT_EXIT", (long) More.RDMA_CM_EVENT_TIMEWAIT_EXIT);
        m.put("O_NONBLOCK", (long) More.O_NONBLOCK);
        m.put("F_SETFL", (long) More.F_SETFL);
        m.put("F_GETFL", (long) More.F_GETFL);
        m.put("POLLIN", (long) More.POLLIN);
        m.put("EFD_NONBLOCK", (long) More.EFD_NONBLOCK);
        m.put("EAGAIN", (long) More.EAGAIN);
        m.put("ENOMEM", (long) More.ENOMEM);
        m.put("sizeof(struct pollfd)", 8L);
        return m;
    }
}
