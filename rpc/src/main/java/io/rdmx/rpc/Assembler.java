package io.rdmx.rpc;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * Reassembles the messages of one peer from its frames. Reader thread only. A one-fragment message is copied
 * once into its body array and needs no state; fragmented messages are held by call id, their arrays grown as
 * fragments arrive (never more than the message length announced), and all partial messages of the peer hold at
 * most twice the maximum message size. Every order violation is a protocol error naming the peer and value.
 */
final class Assembler {
    /** What the assembler hands on. */
    interface Sink {
        /**
         * A whole message.
         *
         * @param kind the kind
         * @param method the method
         * @param callId the call id
         * @param hi client id, first 8 bytes (requests; else 0)
         * @param lo client id, last 8 bytes
         * @param body the body (owned by the callee)
         */
        void message(int kind, int method, long callId, long hi, long lo, byte[] body);

        /**
         * A one-fragment message, offered in place in the ring before it is copied into an array of its own.
         *
         * @param kind the kind
         * @param callId the call id
         * @param b the ring's buffer, valid only during the call
         * @param at where the body starts in it
         * @param n the body's length
         * @return true if taken here (no {@link #message} follows), false to get it through {@link #message}
         */
        default boolean inPlace(int kind, long callId, ByteBuffer b, int at, int n) {
            return false;
        }

        /**
         * A request's first fragment (of a message within the size limit), before anything of it is kept: whether
         * to take it. A sink that refuses it has answered its caller; its remaining fragments are skipped.
         *
         * @param kind the kind
         * @param method the method
         * @param callId the call id
         * @param length the message length the fragment declares
         * @param b the ring's buffer, valid only during the call
         * @param at where the fragment's bytes start in it
         * @param n the fragment's byte count
         * @return true to take the message
         */
        default boolean admit(int kind, int method, long callId, int length, ByteBuffer b, int at, int n) {
            return true;
        }

        /**
         * A message refused for its size (its remaining fragments are skipped).
         *
         * @param kind the kind
         * @param method the method
         * @param callId the call id
         * @param size its announced length
         * @param limit the limit it exceeds
         * @param what which limit
         */
        void tooLarge(int kind, int method, long callId, long size, long limit, String what);
    }

    private static final class Partial {
        final int kind;
        final int method;
        final long hi;
        final long lo;
        final int total;
        int received;
        byte[] buf;

        Partial(int kind, int method, long hi, long lo, int total, byte[] buf) {
            this.kind = kind;
            this.method = method;
            this.hi = hi;
            this.lo = lo;
            this.total = total;
            this.buf = buf;
        }
    }

    /** Fragmented messages up to this length get their whole array with their first fragment. */
    static final int EAGER_BYTES = 4 << 20;

    private final String peer;
    private final int maxMessage;
    private final boolean requests;
    private final Map<Long, Partial> partial = new HashMap<>();
    private long held;

    Assembler(String peer, int maxMessage, boolean requests) {
        this.peer = peer;
        this.maxMessage = maxMessage;
        this.requests = requests;
    }

    /** @return partial messages held (tests) */
    int partials() {
        return partial.size();
    }

    /** @return bytes held by partial messages (tests) */
    long held() {
        return held;
    }

    /** Drops every partial message (the peer is gone). */
    void clear() {
        partial.clear();
        held = 0;
    }

    /**
     * One frame.
     *
     * @param b the ring's buffer (little endian)
     * @param at the frame's offset
     * @param len the frame's length
     * @param sink receives whole messages and refusals
     * @throws RpcProtocolException if the frame is malformed or out of order (names the peer and value)
     */
    void onFrame(ByteBuffer b, int at, int len, Sink sink) throws RpcProtocolException {
        String bad = RpcFrameDescriptor.validate(b, at, len, requests);
        if (bad != null) {
            throw refuse(bad);
        }
        int flags = b.get(at + RpcFrameDescriptor.FLAGS_OFFSET);
        int kind = flags & RpcFrameDescriptor.KIND_MASK;
        if ((flags & RpcFrameDescriptor.FLAG_ABORT) != 0) {
            // the sender gave the message up (timed out or interrupted between fragments): what is held of it
            // goes, or it would count against this peer's partial messages for the connection's life
            Partial p = partial.remove(b.getLong(at + RpcFrameDescriptor.CALL_ID_OFFSET));
            if (p != null && p.buf != null) {
                held -= p.buf.length;
            }
            return;
        }
        boolean last = (flags & RpcFrameDescriptor.FLAG_LAST) != 0;
        int method = b.getInt(at + RpcFrameDescriptor.METHOD_OFFSET);
        long callId = b.getLong(at + RpcFrameDescriptor.CALL_ID_OFFSET);
        int total = b.getInt(at + RpcFrameDescriptor.MESSAGE_LENGTH_OFFSET);
        int offset = b.getInt(at + RpcFrameDescriptor.FRAGMENT_OFFSET_OFFSET);
        long hi = 0;
        long lo = 0;
        if (kind == RpcFrameDescriptor.KIND_REQUEST) {
            hi = b.getLong(at + RpcFrameDescriptor.CLIENT_ID_OFFSET);
            lo = b.getLong(at + RpcFrameDescriptor.CLIENT_ID_OFFSET + 8);
        }
        int header = RpcFrameDescriptor.headerLength(kind);
        int n = len - header;
        if (offset == 0) {
            if (!partial.isEmpty() && partial.containsKey(callId)) {
                throw refuse("call id=" + callId + " started again (fragment offset=0) while its message of length="
                    + partial.get(callId).total + " is incomplete");
            }
            if (total > maxMessage) {
                sink.tooLarge(kind, method, callId, total, maxMessage, RpcConfig.MAX_MESSAGE_BYTES_PROP);
                if (!last) {
                    partial.put(callId, new Partial(kind, method, hi, lo, total, null));
                    partial.get(callId).received = n;
                }
                return;
            }
            if (requests && !sink.admit(kind, method, callId, total, b, at + header, n)) {
                if (!last) {
                    Partial p = new Partial(kind, method, hi, lo, total, null);
                    p.received = n;
                    partial.put(callId, p);
                }
                return;
            }
            if (last) {
                if (sink.inPlace(kind, callId, b, at + header, n)) {
                    return;
                }
                byte[] body = new byte[total];
                b.get(at + header, body, 0, n);
                sink.message(kind, method, callId, hi, lo, body);
                return;
            }
            if (held + total > 2L * maxMessage) {
                sink.tooLarge(kind, method, callId, held + total, 2L * maxMessage,
                    "partial messages from peer '" + peer + "' (twice " + RpcConfig.MAX_MESSAGE_BYTES_PROP + ")");
                Partial p = new Partial(kind, method, hi, lo, total, null);
                p.received = n;
                partial.put(callId, p);
                return;
            }
            // the whole message at once up to EAGER_BYTES (one array, no growing copies); a larger announced
            // length grows as its bytes come, so a peer that announces much and sends little holds little
            byte[] buf = new byte[Math.min(total, Math.max(n, EAGER_BYTES))];
            b.get(at + header, buf, 0, n);
            Partial p = new Partial(kind, method, hi, lo, total, buf);
            p.received = n;
            held += buf.length;
            partial.put(callId, p);
            return;
        }
        Partial p = partial.get(callId);
        if (p == null) {
            throw refuse("fragment offset=" + offset + " of call id=" + callId + " without its first fragment");
        }
        if (p.received != offset) {
            throw refuse("fragment out of order: call id=" + callId + " offset=" + offset + ", expected offset="
                + p.received);
        }
        if (p.kind != kind || p.method != method || p.total != total || p.hi != hi || p.lo != lo) {
            throw refuse("fragment of call id=" + callId + " does not match its first fragment: kind="
                + RpcFrameDescriptor.kindName(kind) + "/" + RpcFrameDescriptor.kindName(p.kind) + ", method=" + method
                + "/" + p.method + ", message length=" + total + "/" + p.total);
        }
        if (p.buf != null) {
            if (p.received + n > p.buf.length) {
                int grown = (int) Math.min(total, Math.max((long) p.received + n, 2L * p.buf.length));
                held += grown - p.buf.length;
                p.buf = Arrays.copyOf(p.buf, grown);
            }
            b.get(at + header, p.buf, p.received, n);
        }
        p.received += n;
        if (last) {
            partial.remove(callId);
            if (p.buf != null) {
                held -= p.buf.length;
                sink.message(kind, method, callId, hi, lo, p.buf);
            }
        }
    }

    private RpcProtocolException refuse(String reason) {
        return new RpcProtocolException(peer, "malformed RPC frame from peer '" + peer + "': " + reason);
    }
}
