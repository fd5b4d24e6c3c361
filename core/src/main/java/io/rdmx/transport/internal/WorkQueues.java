package io.rdmx.transport.internal;

import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.Status;

/**
 * The bookkeeping of an RDMA queue pair's posted requests, shared by the hardware providers ({@code verbs},
 * {@code disni}): which user request each send and receive slot holds, in posting order, so completions map
 * back to user ids, errors name what failed, and a close flushes exactly what is outstanding.
 *
 * <p>Hardware work request ids are sequence numbers: sends carry theirs, receives {@link #RECV_BIT} plus
 * theirs, a provider's own setup messages {@link #CTRL_BIT}. RC completes each queue in order, so a signaled
 * send completion also retires the unsignaled sends before it; every {@code depth/2}-th unsignaled send is
 * signaled internally ({@link #reserveSend}) so the queue cannot fill with requests nobody retires.
 *
 * <p>Not thread-safe: callers hold their endpoint's lock.
 */
public final class WorkQueues {
    /** Marks a receive's hardware id. */
    public static final long RECV_BIT = 1L << 61;
    /** Marks a provider's own (setup) requests. */
    public static final long CTRL_BIT = 1L << 62;

    /** Why a completion failed, as a provider reads it from the hardware. */
    public enum Failure {
        /** The peer refused a WRITE or a READ: key, bounds or access (IBV_WC_REM_ACCESS_ERR). */
        REMOTE_ACCESS,
        /** The peer's receive was too small for a SEND (IBV_WC_REM_INV_REQ_ERR). */
        REMOTE_INVALID,
        /** A SEND did not fit the local receive buffer (IBV_WC_LOC_LEN_ERR). */
        LOCAL_LENGTH,
        /** Flushed: the queue pair went to the error state (IBV_WC_WR_FLUSH_ERR). */
        FLUSHED,
        /** Anything else: retries exceeded, protection errors. */
        OTHER
    }

    private final String localName;
    private final int sdepth;
    private final int rdepth;
    private final long[] sWrId;
    private final Opcode[] sOp;
    private final int[] sLen;
    private final int[] sRkey;
    private final long[] sRoff;
    private final boolean[] sSignaled;
    private long sPosted;
    private long sDone;
    private long lastSignaled = -1;
    private final long[] rWrId;
    private final int[] rLen;
    private long rPosted;
    private long rDone;

    /**
     * @param localName the local node's name, for messages
     * @param sendDepth user send requests outstanding at most
     * @param recvDepth user receives outstanding at most
     */
    public WorkQueues(String localName, int sendDepth, int recvDepth) {
        this.localName = localName;
        this.sdepth = sendDepth;
        this.rdepth = recvDepth;
        sWrId = new long[sendDepth];
        sOp = new Opcode[sendDepth];
        sLen = new int[sendDepth];
        sRkey = new int[sendDepth];
        sRoff = new long[sendDepth];
        sSignaled = new boolean[sendDepth];
        rWrId = new long[recvDepth];
        rLen = new int[recvDepth];
    }

    /**
     * Takes the next send slot.
     *
     * @param op opcode
     * @param wrId the user's id
     * @param length bytes
     * @param rkey the target's remote key (WRITE*)
     * @param remoteOffset the target offset (WRITE*)
     * @param signaled whether the user wants a success completion
     * @return the hardware id to post with, or -1 when the send queue is full; {@link #mustSignal} tells
     *     whether to request a completion
     */
    public long reserveSend(Opcode op, long wrId, int length, int rkey, long remoteOffset, boolean signaled) {
        long seq = sPosted;
        if (seq - sDone >= sdepth) {
            return -1;
        }
        int slot = (int) (seq % sdepth);
        sWrId[slot] = wrId;
        sOp[slot] = op;
        sLen[slot] = length;
        sRkey[slot] = rkey;
        sRoff[slot] = remoteOffset;
        sSignaled[slot] = signaled;
        return seq;
    }

    /**
     * @param seq a reserved send
     * @return whether the hardware must signal it (the user asked, or it retires unsignaled ones)
     */
    public boolean mustSignal(long seq) {
        return sSignaled[(int) (seq % sdepth)] || seq - Math.max(lastSignaled, sDone - 1) >= sdepth / 2;
    }

    /**
     * Records that a reserved send was posted.
     *
     * @param seq its hardware id
     * @param signal whether it was posted signaled
     */
    public void sendPosted(long seq, boolean signal) {
        sPosted = seq + 1;
        if (signal) {
            lastSignaled = seq;
        }
    }

    /**
     * Takes the next receive slot.
     *
     * @param wrId the user's id
     * @param length the buffer's length
     * @return the hardware id to post with, or -1 when the receive queue is full
     */
    public long reserveRecv(long wrId, int length) {
        long seq = rPosted;
        if (seq - rDone >= rdepth) {
            return -1;
        }
        int slot = (int) (seq % rdepth);
        rWrId[slot] = wrId;
        rLen[slot] = length;
        return RECV_BIT | seq;
    }

    /** Records that the reserved receive was posted. */
    public void recvPosted() {
        rPosted++;
    }

    /**
     * @param seq a send's hardware id
     * @return the opcode it was posted with
     */
    public Opcode sendOpcode(long seq) {
        return sOp[(int) (seq % sdepth)];
    }

    /** @return true while sends are posted and not completed */
    public boolean sendsOutstanding() {
        return sDone < sPosted;
    }

    /**
     * Handles one completion of a user request (not {@link #CTRL_BIT}): emits it on the connection; a failure
     * also moves the connection down, naming the peer and what failed.
     *
     * @param c the connection
     * @param hwId the completion's work request id
     * @param ok whether it succeeded
     * @param failure why not (when not ok)
     * @param statusName the hardware's name for the status, for messages
     * @param byteLength bytes received (receives)
     * @param hasImm whether an immediate arrived
     * @param imm the immediate
     */
    public void complete(AbstractConnection c, long hwId, boolean ok, Failure failure, String statusName,
                         int byteLength, boolean hasImm, int imm) {
        if ((hwId & RECV_BIT) != 0) {
            long seq = hwId & ~RECV_BIT;
            int slot = (int) (seq % rdepth);
            rDone = seq + 1;
            if (ok) {
                c.emit(Opcode.RECV, rWrId[slot], Status.SUCCESS, byteLength, hasImm ? imm : 0, hasImm, null);
                return;
            }
            String detail = failure == Failure.LOCAL_LENGTH
                ? "a SEND from peer '" + c.peerName() + "' did not fit the receive buffer length=" + rLen[slot]
                    + " posted by '" + localName + "' (" + statusName + ")"
                : "receive on the connection to peer '" + c.peerName() + "' failed: " + statusName;
            c.emit(Opcode.RECV, rWrId[slot], status(failure), 0, 0, false, detail);
            c.fail(new ConnectionClosedException(c.peerName(), "connection from '" + localName + "' to peer '"
                + c.peerName() + "' failed: " + detail, null));
            return;
        }
        int slot = (int) (hwId % sdepth);
        sDone = hwId + 1;
        if (ok) {
            if (sSignaled[slot]) {
                c.emit(sOp[slot], sWrId[slot], Status.SUCCESS, sLen[slot], 0, false, null);
            }
            return;
        }
        String detail = sendFailure(c.peerName(), slot, failure, statusName);
        c.emit(sOp[slot], sWrId[slot], status(failure), 0, 0, false, detail);
        c.fail(new ConnectionClosedException(c.peerName(), "connection from '" + localName + "' to peer '"
            + c.peerName() + "' failed: " + detail, null));
    }

    private String sendFailure(String peerName, int slot, Failure failure, String statusName) {
        Opcode op = sOp[slot];
        String peer = "peer '" + peerName + "'";
        if (failure == Failure.REMOTE_ACCESS) {
            return op + " rkey=0x" + Integer.toHexString(sRkey[slot]) + " offset=" + sRoff[slot] + " length="
                + sLen[slot] + " refused by " + peer + ": no live, remotely "
                + (op == Opcode.READ ? "readable" : "writable") + " region covers it (" + statusName + ")";
        }
        if (failure == Failure.REMOTE_INVALID) {
            return op + " length=" + sLen[slot] + " refused by " + peer
                + ": larger than the receive buffer it posted (" + statusName + ")";
        }
        return op + " to " + peer + " failed: " + statusName;
    }

    /**
     * @param failure a failure
     * @return its SPI status
     */
    public static Status status(Failure failure) {
        switch (failure) {
            case REMOTE_ACCESS:
                return Status.REMOTE_ACCESS_ERROR;
            case REMOTE_INVALID:
                return Status.REMOTE_INVALID_REQUEST;
            case LOCAL_LENGTH:
                return Status.LOCAL_LENGTH_ERROR;
            case FLUSHED:
                return Status.FLUSHED;
            default:
                return Status.TRANSPORT_ERROR;
        }
    }

    /**
     * Completes every outstanding request as flushed.
     *
     * @param c the connection
     * @param detail names the peer and the cause
     */
    public void flushAll(AbstractConnection c, String detail) {
        for (long s = sDone; s < sPosted; s++) {
            int slot = (int) (s % sdepth);
            c.emit(sOp[slot], sWrId[slot], Status.FLUSHED, 0, 0, false, detail);
        }
        sDone = sPosted;
        for (long s = rDone; s < rPosted; s++) {
            c.emit(Opcode.RECV, rWrId[(int) (s % rdepth)], Status.FLUSHED, 0, 0, false, detail);
        }
        rDone = rPosted;
    }
}
