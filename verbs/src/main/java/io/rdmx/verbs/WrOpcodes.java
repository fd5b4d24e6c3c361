package io.rdmx.verbs;

import io.rdmx.transport.Opcode;
import io.rdmx.verbs.Native.Consts;

/** The {@code enum ibv_wr_opcode} of each send-queue request of the SPI. */
final class WrOpcodes {
    private WrOpcodes() {
    }

    /**
     * The work request opcode of a send-queue request.
     *
     * <p>A READ needs no {@code IBV_SEND_FENCE}: it sees every WRITE posted before it on the same queue pair without
     * one. On RC the requester transmits a send queue's requests in order and the responder executes them in PSN
     * order (IBA vol. 1, the transport layer's transaction ordering rules, ch. 9; rxe_resp.c handles one request at
     * a time, in PSN order, too), so the peer's NIC has placed the earlier WRITE in memory before it reads it for
     * the READ. The fence indicator serves the opposite case: a request that must wait until earlier READs or
     * atomics have completed, which no READ here needs.
     *
     * @param op WRITE, WRITE_WITH_IMM, READ or SEND
     * @return its {@code ibv_wr_opcode}
     */
    static int of(Opcode op) {
        switch (op) {
            case WRITE:
                return Consts.IBV_WR_RDMA_WRITE;
            case WRITE_WITH_IMM:
                return Consts.IBV_WR_RDMA_WRITE_WITH_IMM;
            case READ:
                return Consts.IBV_WR_RDMA_READ;
            case SEND:
                return Consts.IBV_WR_SEND;
            default:
                throw new IllegalArgumentException(op + " is not a send-queue request");
        }
    }
}
