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
    RECV
}
