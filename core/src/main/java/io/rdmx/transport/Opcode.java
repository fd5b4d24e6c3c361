package io.rdmx.transport;

/** Work request and completion opcodes. */
public enum Opcode {
    /** One-sided write into a remote region; the peer's CPU is not involved. */
    WRITE,
    /** One-sided write that also consumes a RECV at the peer and delivers a 32-bit immediate. */
    WRITE_WITH_IMM,
    /** Two-sided message into a RECV buffer the peer posted. */
    SEND,
    /** A posted receive buffer; completes when a SEND or WRITE_WITH_IMM arrives. */
    RECV,
    /**
     * One-sided read of a peer's region into a local one; no application thread of the peer is involved. The
     * peer's region must have been registered with {@link Access#REMOTE_READ}, and the local region with
     * {@link Access#LOCAL_WRITE}. The completion (this side only) carries the length read. Where the data comes
     * from, by provider: verbs and disni, the peer's NIC ({@code IBV_WR_RDMA_READ}); loopback, a copy from the peer's
     * region by the posting thread; shm, a copy by the posting thread from the peer's mapped region file for a region
     * of the peer's memory, and for anything else (a {@link Node#registerFile file-backed} region, whose path the
     * reader never opens) a request frame as on tcp; tcp, the peer's I/O thread answers a request frame from the
     * region. A READ posted after a WRITE on the same connection sees that WRITE; READs complete in posting order
     * with the connection's other requests. A refused READ completes {@link Status#REMOTE_ACCESS_ERROR}; on loopback,
     * shm and tcp the connection stays up.
     */
    READ
}
