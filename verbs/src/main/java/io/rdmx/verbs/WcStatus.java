package io.rdmx.verbs;

import io.rdmx.transport.Opcode;
import io.rdmx.transport.Status;
import io.rdmx.transport.internal.WorkQueues;
import io.rdmx.verbs.Native.Consts;
import io.rdmx.verbs.Native.More;
import java.lang.foreign.MemorySegment;

/** Work completion statuses ({@code enum ibv_wc_status}): their SPI meaning and libibverbs' names. */
final class WcStatus {
    private WcStatus() {
    }

    /**
     * Maps a failed completion of a user request, with Soft-RoCE's two deviations: rxe completes a SEND larger
     * than the receive buffer as a malformed WQE ({@code IBV_WC_LOC_QP_OP_ERR}, copy_data's -EINVAL in
     * rxe_resp.c) instead of {@code IBV_WC_LOC_LEN_ERR}, and answers that SEND with {@code IBV_WC_REM_OP_ERR}
     * instead of {@code IBV_WC_REM_INV_REQ_ERR}. Our SGEs are checked, so the length is the cause.
     *
     * @param status the {@code ibv_wc_status}
     * @param softRoce whether the device is rxe
     * @param recv whether the request is a receive
     * @param sendOp the opcode of a send-queue request, null for a receive
     * @return the failure
     */
    static WorkQueues.Failure failure(int status, boolean softRoce, boolean recv, Opcode sendOp) {
        if (softRoce && recv && status == More.IBV_WC_LOC_QP_OP_ERR) {
            return WorkQueues.Failure.LOCAL_LENGTH;
        }
        if (softRoce && !recv && status == More.IBV_WC_REM_OP_ERR && sendOp == Opcode.SEND) {
            return WorkQueues.Failure.REMOTE_INVALID;
        }
        return failure(status);
    }

    static WorkQueues.Failure failure(int status) {
        switch (status) {
            case Consts.IBV_WC_REM_ACCESS_ERR:
                return WorkQueues.Failure.REMOTE_ACCESS;
            case Consts.IBV_WC_LOC_LEN_ERR:
                return WorkQueues.Failure.LOCAL_LENGTH;
            case Consts.IBV_WC_REM_INV_REQ_ERR:
                return WorkQueues.Failure.REMOTE_INVALID;
            case Consts.IBV_WC_WR_FLUSH_ERR:
                return WorkQueues.Failure.FLUSHED;
            default:
                return WorkQueues.Failure.OTHER;
        }
    }

    /**
     * Maps a work completion status.
     *
     * @param status {@code enum ibv_wc_status}
     * @return the SPI status
     */
    static Status map(int status) {
        return status == Consts.IBV_WC_SUCCESS ? Status.SUCCESS : WorkQueues.status(failure(status));
    }

    /** @return libibverbs' name of a status, with its number */
    static String name(int status) {
        try {
            return Lib.string((MemorySegment) Lib.WC_STATUS_STR.invoke(Lib.state(), status)) + " (" + status + ")";
        } catch (Throwable t) {
            return "ibv_wc_status " + status;
        }
    }
}
