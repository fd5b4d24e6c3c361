package io.rdmx.rpc;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The layout of an RPC frame: the payload of one ring record (stream {@link #STREAM_ID}), little endian. A
 * message (a request, a response, or an error response) whose body does not fit one record is cut into
 * fragments, each a frame with the same call id, method and message length and its own fragment offset;
 * fragments of one message travel in order through one ring, fragments of different messages may interleave.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------+---------------+-------------------------------+
 *  |  version (8)  |   flags (8)   |          reserved (16) = 0    |  0
 *  +---------------+---------------+-------------------------------+
 *  |                          method (32)                          |  4
 *  +---------------------------------------------------------------+
 *  |                          call id (64)                         |  8
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                  message length (32, >= 0)                    | 16
 *  +---------------------------------------------------------------+
 *  |                  fragment offset (32, >= 0)                   | 20
 *  +---------------------------------------------------------------+
 *  |          client id (128): requests only, on every fragment    | 24
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |  fragment bytes (record length - header length)              ...
 *  +---------------------------------------------------------------+
 *
 *  flags: bits 0-1 kind (1 REQUEST, 2 RESPONSE, 3 ERROR), bit 2 LAST (the fragment ends the message),
 *         bit 3 ABORT (no fragment bytes: the sender gave the message up after some of its fragments, at
 *         the offset it reached; the receiver drops what it holds of it), bits 4-7 zero
 * </pre>
 *
 * An ERROR body is the remote exception: a 16-bit class name length, the class name (UTF-8), then the message
 * (UTF-8, the rest; empty means none).
 */
public final class RpcFrameDescriptor {
    /** Record stream id of RPC frames: "RP". */
    public static final int STREAM_ID = 0x5250;
    /** Version of this layout. */
    public static final int VERSION = 1;
    /** Offset of the version byte. */
    public static final int VERSION_OFFSET = 0;
    /** Offset of the flags byte. */
    public static final int FLAGS_OFFSET = 1;
    /** Offset of the reserved 16 bits. */
    public static final int RESERVED_OFFSET = 2;
    /** Offset of the method. */
    public static final int METHOD_OFFSET = 4;
    /** Offset of the call id. */
    public static final int CALL_ID_OFFSET = 8;
    /** Offset of the message length. */
    public static final int MESSAGE_LENGTH_OFFSET = 16;
    /** Offset of the fragment offset. */
    public static final int FRAGMENT_OFFSET_OFFSET = 20;
    /** Offset of the client id (requests). */
    public static final int CLIENT_ID_OFFSET = 24;
    /** Header length of responses and errors. */
    public static final int RESPONSE_HEADER_LENGTH = 24;
    /** Header length of requests. */
    public static final int REQUEST_HEADER_LENGTH = 40;
    /** Client id length. */
    public static final int CLIENT_ID_LENGTH = 16;
    /** Kind: request. */
    public static final int KIND_REQUEST = 1;
    /** Kind: response. */
    public static final int KIND_RESPONSE = 2;
    /** Kind: error response (a remote exception). */
    public static final int KIND_ERROR = 3;
    /** Mask of the kind bits in flags. */
    public static final int KIND_MASK = 3;
    /** Flag: the last fragment of its message. */
    public static final int FLAG_LAST = 4;
    /** Flag: the message is given up; the frame carries no fragment bytes. */
    public static final int FLAG_ABORT = 8;
    /** The longest class name an ERROR body carries. */
    public static final int MAX_CLASS_NAME = 1024;

    private RpcFrameDescriptor() {
    }

    /**
     * @param kind a kind
     * @return the header length of frames of that kind
     */
    public static int headerLength(int kind) {
        return kind == KIND_REQUEST ? REQUEST_HEADER_LENGTH : RESPONSE_HEADER_LENGTH;
    }

    /**
     * @param kind a kind
     * @return its name
     */
    public static String kindName(int kind) {
        switch (kind) {
            case KIND_REQUEST:
                return "REQUEST";
            case KIND_RESPONSE:
                return "RESPONSE";
            case KIND_ERROR:
                return "ERROR";
            default:
                return "kind" + kind;
        }
    }

    /**
     * Checks one frame's header on its own (the order of fragments is the reassembly's to check).
     *
     * @param b the buffer (little endian)
     * @param at where the frame starts
     * @param length the record's payload length
     * @param requests true where requests are expected (a server), false where responses are (a client)
     * @return null if valid, else a {@code name=value} reason
     */
    public static String validate(ByteBuffer b, int at, int length, boolean requests) {
        if (length < RESPONSE_HEADER_LENGTH) {
            return "frame length=" + length + " shorter than the header (" + RESPONSE_HEADER_LENGTH + ")";
        }
        int version = b.get(at + VERSION_OFFSET) & 0xff;
        if (version != VERSION) {
            return "version=" + version + " (expected " + VERSION + ")";
        }
        int flags = b.get(at + FLAGS_OFFSET) & 0xff;
        int kind = flags & KIND_MASK;
        if ((flags & ~(KIND_MASK | FLAG_LAST | FLAG_ABORT)) != 0 || kind == 0
            || (flags & (FLAG_LAST | FLAG_ABORT)) == (FLAG_LAST | FLAG_ABORT)) {
            return "flags=0x" + Integer.toHexString(flags);
        }
        if (requests != (kind == KIND_REQUEST)) {
            return "kind=" + kindName(kind) + " where " + (requests ? "requests" : "responses") + " are expected";
        }
        int reserved = b.getShort(at + RESERVED_OFFSET);
        if (reserved != 0) {
            return "reserved=" + reserved;
        }
        if (length < headerLength(kind)) {
            return "frame length=" + length + " shorter than the " + kindName(kind) + " header ("
                + headerLength(kind) + ")";
        }
        int total = b.getInt(at + MESSAGE_LENGTH_OFFSET);
        int offset = b.getInt(at + FRAGMENT_OFFSET_OFFSET);
        int fragment = length - headerLength(kind);
        if (total < 0) {
            return "message length=" + total;
        }
        if (offset < 0 || (long) offset + fragment > total) {
            return "fragment offset=" + offset + " + length=" + fragment + " beyond message length=" + total;
        }
        if ((flags & FLAG_ABORT) != 0) {
            return fragment == 0 ? null : "ABORT frame with fragment length=" + fragment;
        }
        boolean last = (flags & FLAG_LAST) != 0;
        if (last != ((long) offset + fragment == total)) {
            return "LAST=" + last + " at fragment offset=" + offset + " + length=" + fragment + " of message length="
                + total;
        }
        if (!last && fragment == 0) {
            return "empty fragment at offset=" + offset + " of message length=" + total;
        }
        return null;
    }

    /**
     * Writes a header.
     *
     * @param b the buffer (little endian)
     * @param at where the frame starts
     * @param kind the kind
     * @param last whether this fragment ends the message
     * @param method the method
     * @param callId the call id
     * @param total the message length
     * @param offset the fragment's offset in the message
     * @param clientHi the client id's first 8 bytes (requests)
     * @param clientLo its last 8 bytes (requests)
     */
    public static void putHeader(ByteBuffer b, int at, int kind, boolean last, int method, long callId, int total,
                                 int offset, long clientHi, long clientLo) {
        b.put(at + VERSION_OFFSET, (byte) VERSION);
        b.put(at + FLAGS_OFFSET, (byte) (kind | (last ? FLAG_LAST : 0)));
        b.putShort(at + RESERVED_OFFSET, (short) 0);
        b.putInt(at + METHOD_OFFSET, method);
        b.putLong(at + CALL_ID_OFFSET, callId);
        b.putInt(at + MESSAGE_LENGTH_OFFSET, total);
        b.putInt(at + FRAGMENT_OFFSET_OFFSET, offset);
        if (kind == KIND_REQUEST) {
            b.putLong(at + CLIENT_ID_OFFSET, clientHi);
            b.putLong(at + CLIENT_ID_OFFSET + 8, clientLo);
        }
    }

    /**
     * @param className the remote exception's class name (cut to {@link #MAX_CLASS_NAME} bytes)
     * @param message its message, or null
     * @param maxBytes the most bytes the body may take (the message is cut to fit)
     * @return an ERROR body
     */
    public static ByteBuffer errorBody(String className, String message, int maxBytes) {
        byte[] c = className.getBytes(StandardCharsets.UTF_8);
        int cl = Math.min(c.length, Math.min(MAX_CLASS_NAME, Math.max(0, maxBytes - 2)));
        byte[] m = message == null ? new byte[0] : message.getBytes(StandardCharsets.UTF_8);
        int ml = Math.max(0, Math.min(m.length, maxBytes - 2 - cl));
        ByteBuffer b = ByteBuffer.allocate(2 + cl + ml).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        b.putShort((short) cl).put(c, 0, cl).put(m, 0, ml).flip();
        return b;
    }

    /**
     * @param body an ERROR body
     * @return {class name, message or null}, or null if the body is malformed
     */
    public static String[] parseError(byte[] body) {
        if (body.length < 2) {
            return null;
        }
        int cl = (body[0] & 0xff) | (body[1] & 0xff) << 8;
        if (cl == 0 || cl > MAX_CLASS_NAME || 2 + cl > body.length) {
            return null;
        }
        String c = new String(body, 2, cl, StandardCharsets.UTF_8);
        int ml = body.length - 2 - cl;
        return new String[] {c, ml == 0 ? null : new String(body, 2 + cl, ml, StandardCharsets.UTF_8)};
    }
}
