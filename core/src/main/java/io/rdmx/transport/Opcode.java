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
     * from, by provider: verbs and disni, the peer's NIC ({@code IBV_WR_RDMA_READ}); loopback and shm, a copy from
     * the peer's (mapped) region by the posting side; tcp, the peer's I/O thread answers a request frame from the
     * region. A READ posted after a WRITE on the same connection sees that WRITE.
     */
    READ
}
