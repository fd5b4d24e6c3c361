package io.rdmx.transport.wire;

import io.rdmx.transport.Opcode;
import io.rdmx.transport.RemoteRegion;

/**
 * Layout of a stream-protocol frame. All fields little endian.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------+---------------+-------------------------------+
 *  |    version    |     type      |             flags             |  0
 *  +---------------+---------------+-------------------------------+
 *  |               frame length (bytes, header included)           |  4
 *  +---------------------------------------------------------------+
 *  |               sequence number (64): the request's, or the     |  8
 *  |               highest one acknowledged (ACK)                  |
 *  +---------------------------------------------------------------+
 *  WRITE only (flags: WITH_IMM, PLACED, UNSIGNALED; SEND: UNSIGNALED):
 *  +---------------------------------------------------------------+
 *  |               remote key (32)                                 | 16
 *  +---------------------------------------------------------------+
 *  |               immediate (32)                                  | 20
 *  +---------------------------------------------------------------+
 *  |               remote offset (64)                              | 24
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |               data length (32)                                | 32
 *  +---------------------------------------------------------------+
 *  |               reserved (32)                                   | 36
 *  +---------------------------------------------------------------+
 *  |  payload: WRITE data (absent when PLACED), SEND data, HELLO,   | 40 (WRITE) / 16
 *  |  AUTH proof, READY regions, NAK status + message, ERROR message|
 *  +---------------------------------------------------------------+
 *  READ (a request in the sequence, as WRITE; no payload, frame length 40): the WRITE header's fields, the
 *  immediate and data length read as reserved (0) and length:
 *  +---------------------------------------------------------------+
 *  |               remote key (32): the owner's region to read     | 16
 *  +---------------------------------------------------------------+
 *  |               reserved (32)                                   | 20
 *  +---------------------------------------------------------------+
 *  |               remote offset (64)                              | 24
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |               length (32): bytes to read                      | 32
 *  +---------------------------------------------------------------+
 *  |               reserved (32)                                   | 36
 *  +---------------------------------------------------------------+
 *  READ_ANSWER (owner to reader; not in the sequence: the sequence number is the READ's it answers):
 *  +-------------------------------+-------------------------------+
 *  |        status (16)            |        reserved (16)          | 16
 *  +-------------------------------+-------------------------------+
 *  |               payload length (32)                             | 20
 *  +---------------------------------------------------------------+
 *  |  payload: the bytes read (status SUCCESS), or the refusal's    | 24
 *  |  message (UTF-8, at most 4096)                                |
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * <p>READ. The owner's I/O thread answers a READ when it reaches it in the sequence (so after every WRITE posted
 * before it on the connection is placed: a READ sees them), straight from the region's memory in one gathering
 * write of the answer's header and the region's bytes (no handler thread, no copy), then counts the READ as
 * handled: the cumulative ACK that covers it follows the answer on the stream, and the reader completes its READ
 * by that ACK, in posting order with its other requests. A READ the owner refuses (unknown key, a region not
 * readable or not granted to this connection, out of bounds, a length past any region) is answered with
 * status REMOTE_ACCESS_ERROR and a message; the connection stays up. A READ_ANSWER that does not answer the
 * reader's oldest unanswered READ (its sequence number), or whose length is not the READ's, is a protocol error.
 *
 * <p>The handshake. Nothing about a node's memory (region descriptors) leaves it before the peer is
 * authenticated, and an unauthenticated peer costs a small, bounded amount of work:
 * <pre>
 *   connecting side (C)                                  accepting side (A)
 *   HELLO(nonce Nc, name, address)          ------&gt;
 *                                           &lt;------      HELLO(nonce Na, name, address)
 *                                           &lt;------      AUTH(proof of A)          only with a cluster secret
 *   checks A's proof with its own Nc
 *   AUTH(proof of C)                        ------&gt;                                only with a cluster secret
 *   READY(C's region descriptors)           ------&gt;      checks C's proof with its own Na
 *                                           &lt;------      READY(A's region descriptors)
 * </pre>
 * A proof is {@code HMAC-SHA256(secret, label || Nc || Na || prover's name || verifier's name || prover's
 * address)} (see
 * {@link AuthProof}): the label differs per direction, both nonces are in both proofs, and each side checks the
 * proof against the nonce it chose itself, so a proof obtained on one connection (or reflected from the
 * verifier itself) is worthless on another. The prover's address (from its HELLO) is in its proof: an accepted
 * connection is reused for a dial to that address only when the peer proved it so; without a secret only a
 * connection dialed to an address is ever reused for it. A peer may not claim the name of the node it connects to. During
 * the handshake a frame of a type the current step does not expect is refused on its header, before any of
 * its payload is buffered (so nothing larger than {@link #MAX_HELLO_FRAME} is buffered before authentication),
 * the node reads through small buffers, a handshake must finish within the handshake timeout, and a node
 * serves at most a bounded number of pending handshakes at once.
 *
 * <p>Then WRITE and SEND frames carry requests in posting order, each with the next sequence number; the
 * receiver answers with cumulative ACKs once a request is placed (a SEND once it is in a posted receive), or a
 * NAK that fails the request and the connection. ACKs are batched: at most one per read from the socket, and
 * none for a batch of only UNSIGNALED frames (a later ACK covers them). PING keeps a quiet connection alive; ERROR explains why the
 * sender is closing the connection.
 *
 * <pre>
 *  HELLO payload: nonce (16) | name length (16) | name (UTF-8, at most 64) | address length (16) |
 *                 address (UTF-8, at most 1024)
 *  READY payload: region count (16, at most 4096) | count x { address (64) | length (32) | remote key (32) |
 *                 name length (8) | name (UTF-8, at most 64; empty = unnamed) }
 *  AUTH payload:  proof (32)
 *  NAK payload:   status (16) | message (UTF-8, at most 4096)
 *  ERROR payload: message (UTF-8, at most 4096)
 * </pre>
 */
public final class FrameDescriptor {
    /** Protocol version carried by every frame. */
    public static final int VERSION = 3;

    /** Offset of the version byte. */
    public static final int VERSION_OFFSET = 0;
    /** Offset of the type byte. */
    public static final int TYPE_OFFSET = 1;
    /** Offset of the flags. */
    public static final int FLAGS_OFFSET = 2;
    /** Offset of the frame length. */
    public static final int LENGTH_OFFSET = 4;
    /** Offset of the sequence number. */
    public static final int SEQ_OFFSET = 8;
    /** Length of the common header. */
    public static final int HEADER_LENGTH = 16;

    /** WRITE: offset of the remote key. */
    public static final int WRITE_KEY_OFFSET = 16;
    /** WRITE: offset of the immediate. */
    public static final int WRITE_IMM_OFFSET = 20;
    /** WRITE: offset of the remote offset. */
    public static final int WRITE_REMOTE_OFFSET_OFFSET = 24;
    /** WRITE: offset of the data length. */
    public static final int WRITE_DATA_LENGTH_OFFSET = 32;
    /** Length of a WRITE header. */
    public static final int WRITE_HEADER_LENGTH = 40;
    /** Length of a READ frame: the WRITE header's fields ({@link #WRITE_KEY_OFFSET}, ...), no payload. */
    public static final int READ_LENGTH = WRITE_HEADER_LENGTH;
    /** READ: offset of the length to read (the WRITE header's data length). */
    public static final int READ_LENGTH_OFFSET = WRITE_DATA_LENGTH_OFFSET;
    /** READ_ANSWER: offset of the status ({@link io.rdmx.transport.Status} ordinal). */
    public static final int ANSWER_STATUS_OFFSET = 16;
    /** READ_ANSWER: offset of the payload length. */
    public static final int ANSWER_LENGTH_OFFSET = 20;
    /** Length of a READ_ANSWER header. */
    public static final int ANSWER_HEADER_LENGTH = 24;

    /** Type: handshake greeting. */
    public static final int TYPE_HELLO = 1;
    /** Type: cluster-secret proof. */
    public static final int TYPE_AUTH = 2;
    /** Type: handshake complete. */
    public static final int TYPE_READY = 3;
    /** Type: one-sided write. */
    public static final int TYPE_WRITE = 4;
    /** Type: message for a posted receive. */
    public static final int TYPE_SEND = 5;
    /** Type: cumulative acknowledgement. */
    public static final int TYPE_ACK = 6;
    /** Type: negative acknowledgement (request failed at the receiver). */
    public static final int TYPE_NAK = 7;
    /** Type: keep-alive. */
    public static final int TYPE_PING = 8;
    /** Type: fatal error, the sender closes. */
    public static final int TYPE_ERROR = 9;
    /** Type: one-sided read request. */
    public static final int TYPE_READ = 10;
    /** Type: the owner's answer to a READ (the bytes, or a refusal). */
    public static final int TYPE_READ_ANSWER = 11;

    /** WRITE flag: consume a receive and deliver the immediate. */
    public static final int FLAG_WITH_IMM = 1;
    /** WRITE flag: the data was placed through shared memory; the frame has no payload. */
    public static final int FLAG_PLACED = 2;
    /**
     * WRITE and SEND flag: the request is unsignaled and the sender's send queue is less than half full, so it
     * needs no ACK of its own; the receiver acknowledges it (cumulatively) with the next frame that lacks the
     * flag, at the end of a read batch. Unknown to a receiver, it only costs ACKs that nobody needed.
     */
    public static final int FLAG_UNSIGNALED = 4;
    /** HELLO flag: the sender has a cluster secret. */
    public static final int FLAG_SECRET = 1;

    /** The longest node name in a HELLO (bytes). */
    public static final int MAX_NAME_LENGTH = 64;
    /** The longest address in a HELLO (bytes). */
    public static final int MAX_ADDRESS_LENGTH = 1024;
    /** The longest message in a NAK or ERROR (bytes). */
    public static final int MAX_MESSAGE_LENGTH = 4096;
    /** The most region descriptors in a READY. */
    public static final int MAX_REGIONS = 4096;
    /** Length of the fixed part of one region descriptor in a READY (the name length byte and name follow). */
    public static final int REGION_DESCRIPTOR_LENGTH = 16;
    /** The longest region descriptor in a READY: the fixed part, the name length byte, the longest name. */
    public static final int MAX_REGION_DESCRIPTOR_LENGTH = REGION_DESCRIPTOR_LENGTH + 1
        + RemoteRegion.MAX_NAME_BYTES;
    /** The largest HELLO frame. */
    public static final int MAX_HELLO_FRAME = HEADER_LENGTH + 16 + 2 + MAX_NAME_LENGTH + 2 + MAX_ADDRESS_LENGTH;
    /** The largest READY frame. */
    public static final int MAX_READY_FRAME = HEADER_LENGTH + 2 + MAX_REGIONS * MAX_REGION_DESCRIPTOR_LENGTH;
    /** The largest NAK or ERROR frame. */
    public static final int MAX_MESSAGE_FRAME = HEADER_LENGTH + 2 + MAX_MESSAGE_LENGTH;
    /** Length of the AUTH mac. */
    public static final int MAC_LENGTH = 32;
    /** Length of the HELLO nonce. */
    public static final int NONCE_LENGTH = 16;

    private FrameDescriptor() {
    }

    /**
     * The flags of a request's frame (WRITE or SEND) as both stream providers send it. An unsignaled request
     * needs no ACK of its own while the send queue is less than half full: a later ACK completes it (cumulative);
     * past half, every frame asks for one so the queue drains. Not when WRITE data is placed: a placed WRITE
     * completes with the ACK of the frame before it, whatever that frame's own signaling, so every frame asks.
     *
     * @param op {@link Opcode#SEND}, {@link Opcode#WRITE}, {@link Opcode#WRITE_WITH_IMM} or {@link Opcode#READ}
     *     (never unsignaled: the reader completes it by its ACK)
     * @param signaled whether the request completes with a completion of its own
     * @param placed whether WRITE data reaches the peer through shared memory ({@link #FLAG_PLACED})
     * @param outstanding requests outstanding, this one included
     * @param depth the send-queue depth
     * @return {@link #FLAG_UNSIGNALED}, {@link #FLAG_WITH_IMM} and {@link #FLAG_PLACED} as they apply
     */
    public static int requestFlags(Opcode op, boolean signaled, boolean placed, int outstanding, int depth) {
        if (op == Opcode.READ) {
            return 0;
        }
        int flags = !placed && !signaled && outstanding < Math.max(1, depth / 2) ? FLAG_UNSIGNALED : 0;
        if (op != Opcode.SEND) {
            flags |= (op == Opcode.WRITE_WITH_IMM ? FLAG_WITH_IMM : 0) | (placed ? FLAG_PLACED : 0);
        }
        return flags;
    }

    /**
     * @param type a type byte
     * @return its name, for messages
     */
    public static String typeName(int type) {
        switch (type) {
            case TYPE_HELLO:
                return "HELLO";
            case TYPE_AUTH:
                return "AUTH";
            case TYPE_READY:
                return "READY";
            case TYPE_WRITE:
                return "WRITE";
            case TYPE_SEND:
                return "SEND";
            case TYPE_ACK:
                return "ACK";
            case TYPE_NAK:
                return "NAK";
            case TYPE_PING:
                return "PING";
            case TYPE_ERROR:
                return "ERROR";
            case TYPE_READ:
                return "READ";
            case TYPE_READ_ANSWER:
                return "READ_ANSWER";
            default:
                return "UNKNOWN(" + type + ")";
        }
    }

    /**
     * Checks a frame header; returns null when valid, else what is wrong.
     *
     * @param version the version byte
     * @param type the type byte
     * @param length the frame length
     * @param maxTransfer the largest data length allowed
     * @return null or an explanation with {@code name=value} context
     */
    public static String validate(int version, int type, long length, int maxTransfer) {
        if (version != VERSION) {
            return "unsupported frame version=" + version + " (supported=" + VERSION + ")";
        }
        long min;
        long max;
        switch (type) {
            case TYPE_WRITE:
                min = WRITE_HEADER_LENGTH;
                max = WRITE_HEADER_LENGTH + (long) maxTransfer;
                break;
            case TYPE_SEND:
                min = HEADER_LENGTH;
                max = HEADER_LENGTH + (long) maxTransfer;
                break;
            case TYPE_READ:
                min = READ_LENGTH;
                max = READ_LENGTH;
                break;
            case TYPE_READ_ANSWER:
                min = ANSWER_HEADER_LENGTH;
                max = ANSWER_HEADER_LENGTH + (long) Math.max(maxTransfer, MAX_MESSAGE_LENGTH);
                break;
            case TYPE_ACK:
            case TYPE_PING:
                min = HEADER_LENGTH;
                max = HEADER_LENGTH;
                break;
            case TYPE_READY:
                min = HEADER_LENGTH + 2;
                max = MAX_READY_FRAME;
                break;
            case TYPE_AUTH:
                min = HEADER_LENGTH + MAC_LENGTH;
                max = min;
                break;
            case TYPE_HELLO:
                min = HEADER_LENGTH + NONCE_LENGTH + 4;
                max = MAX_HELLO_FRAME;
                break;
            case TYPE_NAK:
                min = HEADER_LENGTH + 2;
                max = MAX_MESSAGE_FRAME;
                break;
            case TYPE_ERROR:
                min = HEADER_LENGTH;
                max = HEADER_LENGTH + MAX_MESSAGE_LENGTH;
                break;
            default:
                return "unknown frame type=" + type;
        }
        if (length < min) {
            return typeName(type) + " frame length=" + length + " is below the minimum=" + min;
        }
        if (length > max) {
            return typeName(type) + " frame length=" + length + " exceeds the limit=" + max;
        }
        return null;
    }
}
