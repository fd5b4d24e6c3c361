package io.rdmx.rpc;

import io.rdmx.channel.ChannelWriter;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RdmxTimeoutException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Writes one message into a ring, cut into fragments of at most the ring's largest record. A writer has one
 * writer thread at a time: every use of it holds its lock, taken per fragment, so fragments of concurrent
 * messages may interleave (the receiver reassembles by call id) and a long message does not hold up short ones
 * for its whole length.
 */
final class FrameSender {
    private FrameSender() {
    }

    /**
     * A writer's lock, and the ABORT frames owed on that writer: a message given up after some of its fragments
     * went out, whose ABORT found no ring space (or the lock taken) then. Every frame sent under the lock writes
     * the owed ones first. Lives (and dies) with the connection object that holds the writer.
     */
    static final class Lane extends ReentrantLock {
        private static final long serialVersionUID = 1L;
        /** Owed ABORT frames: kind, method, call id, client id (2 longs), message length, bytes sent. */
        final transient java.util.concurrent.ConcurrentLinkedQueue<long[]> owed =
            new java.util.concurrent.ConcurrentLinkedQueue<>();
    }

    /**
     * Sends a message, blocking (up to the deadline) for the lock and for ring space.
     *
     * @param w the writer
     * @param lock the writer's lock
     * @param kind the kind
     * @param method the method
     * @param callId the call id
     * @param hi client id, first 8 bytes (requests)
     * @param lo client id, last 8 bytes (requests)
     * @param body the body (remaining bytes; position unchanged)
     * @param deadline {@code System.nanoTime()} bound
     * @throws ConnectionClosedException if the peer is gone
     * @throws RdmxTimeoutException if the lock or ring space did not come in time
     * @throws InterruptedException if interrupted
     */
    static void send(ChannelWriter w, Lane lock, int kind, int method, long callId, long hi, long lo,
                     ByteBuffer body, long deadline) throws RdmxException, InterruptedException {
        int header = RpcFrameDescriptor.headerLength(kind);
        int max = w.maxPayload() - header;
        int total = body.remaining();
        int base = body.position();
        if (total <= max) {
            // one frame: it goes out whole or not at all (nothing allocated on this, the common, path)
            sendFragments(w, lock, kind, method, callId, hi, lo, body, deadline, header, max, total, base, null);
            return;
        }
        int[] sent = {0};
        try {
            sendFragments(w, lock, kind, method, callId, hi, lo, body, deadline, header, max, total, base, sent);
        } catch (ConnectionClosedException e) {
            throw e; // the peer is gone: it drops what it held of the message with the connection
        } catch (RdmxException | InterruptedException | RuntimeException e) {
            if (sent[0] > 0 && sent[0] < total) {
                abandon(w, lock, new long[] {kind, method, callId, hi, lo, total, sent[0]});
            }
            throw e;
        }
    }

    /** Takes the writer's lock, waiting up to the deadline. */
    private static void lock(ChannelWriter w, Lane lock, long deadline) throws RdmxTimeoutException,
        InterruptedException {
        if (!lock.tryLock(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
            throw new RdmxTimeoutException("the ring to '" + w.peerName() + "' stayed busy with other messages"
                + " (lock not free in time)");
        }
    }

    /** The fragments of a message; {@code sent[0]} (if given): its bytes that went out so far. */
    private static void sendFragments(ChannelWriter w, Lane lock, int kind, int method, long callId, long hi,
                                      long lo, ByteBuffer body, long deadline, int header, int max, int total,
                                      int base, int[] sent) throws RdmxException, InterruptedException {
        int off = 0;
        do {
            int n = Math.min(max, total - off);
            boolean last = off + n == total;
            lock(w, lock, deadline);
            try {
                sendAborts(w, lock);
                int at = w.claim(RpcFrameDescriptor.STREAM_ID, header + n, Math.max(0, deadline - System.nanoTime()),
                    TimeUnit.NANOSECONDS);
                ByteBuffer b = w.buffer();
                try {
                    RpcFrameDescriptor.putHeader(b, at, kind, last, method, callId, total, off, hi, lo);
                    if (n > 0) {
                        b.put(at + header, body, base + off, n);
                    }
                } catch (RuntimeException e) {
                    w.abort(); // nothing of this fragment goes out, and the writer takes claims again
                    throw e;
                }
                w.commit();
                if (last) {
                    w.flush();
                }
            } finally {
                lock.unlock();
            }
            off += n;
            if (sent != null) {
                sent[0] = off;
            }
        } while (off < total);
    }

    /**
     * A message was given up (its deadline passed, its thread was interrupted) after some of its fragments went
     * out: the receiver holds them until the connection ends unless told. Owes an ABORT frame on the writer's lane,
     * written at once if the lock and ring space are free, else by the next frame sent on that writer.
     *
     * @param abort kind, method, call id, client id (2 longs), message length, bytes sent
     */
    private static void abandon(ChannelWriter w, Lane lock, long[] abort) {
        lock.owed.add(abort);
        if (lock.tryLock()) {
            try {
                sendAborts(w, lock);
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * Under the writer's lock, before any frame: writes the ABORT frames owed on it, in order, as far as ring space
     * goes now (the rest stay owed to the next frame). One volatile read when none is owed.
     */
    private static void sendAborts(ChannelWriter w, Lane lock) {
        long[] a;
        while ((a = lock.owed.peek()) != null && writeAbort(w, a)) {
            lock.owed.poll();
        }
    }

    /** Under the writer's lock: one ABORT frame, without waiting; false if the ring has no space for it now. */
    private static boolean writeAbort(ChannelWriter w, long[] a) {
        int kind = (int) a[0];
        int header = RpcFrameDescriptor.headerLength(kind);
        int at = w.tryClaim(RpcFrameDescriptor.STREAM_ID, header);
        if (at < 0) {
            return at == ChannelWriter.CLOSED; // a closed writer owes nothing any more
        }
        ByteBuffer b = w.buffer();
        RpcFrameDescriptor.putHeader(b, at, kind, false, (int) a[1], a[2], (int) a[5], (int) a[6], a[3], a[4]);
        b.put(at + RpcFrameDescriptor.FLAGS_OFFSET, (byte) (kind | RpcFrameDescriptor.FLAG_ABORT));
        w.commit();
        w.flush();
        return true;
    }

    /** A body writer failed (or wrote the wrong number of bytes); if its frame was claimed, it went out zeroed. */
    static final class BodyFailed extends RuntimeException {
        private static final long serialVersionUID = 1L;
        /** True if its frame went out (zero-filled), false if nothing was sent. */
        final boolean sent;

        BodyFailed(String message, Throwable cause, boolean sent) {
            super(message, cause);
            this.sent = sent;
        }
    }

    /**
     * Sends a message whose body the sending thread writes: straight into the claimed record when it fits one,
     * else into an array of its length that is then sent in fragments.
     *
     * @param w the writer
     * @param lock the writer's lock
     * @param kind the kind
     * @param method the method
     * @param callId the call id
     * @param hi client id, first 8 bytes (requests)
     * @param lo client id, last 8 bytes (requests)
     * @param body writes the body
     * @param deadline {@code System.nanoTime()} bound
     * @throws BodyFailed if the body writer failed (nothing sent if the body was larger than a record)
     * @throws ConnectionClosedException if the peer is gone
     * @throws RdmxTimeoutException if the lock or ring space did not come in time
     * @throws InterruptedException if interrupted
     */
    static void send(ChannelWriter w, Lane lock, int kind, int method, long callId, long hi, long lo,
                     RpcBody body, long deadline) throws RdmxException, InterruptedException {
        int header = RpcFrameDescriptor.headerLength(kind);
        int n = body.length();
        if (n > w.maxPayload() - header) {
            send(w, lock, kind, method, callId, hi, lo, materialize(body, w.peerName()), deadline);
            return;
        }
        lock(w, lock, deadline);
        BodyFailed failed;
        try {
            sendAborts(w, lock);
            int at = w.claim(RpcFrameDescriptor.STREAM_ID, header + n, Math.max(0, deadline - System.nanoTime()),
                TimeUnit.NANOSECONDS);
            failed = putWhole(w, at, kind, method, callId, hi, lo, null, body);
        } finally {
            lock.unlock();
        }
        if (failed != null) {
            throw failed;
        }
    }

    /**
     * Under the writer's lock, the record claimed at {@code at}: a whole message in one fragment, committed and
     * flushed. A body writer that fails leaves the record zero-filled (it goes out all the same).
     *
     * @param buffer the body (remaining bytes; position unchanged), or null if {@code body} writes it
     * @param body writes the body, or null
     * @return null, or why the body writer failed
     */
    private static BodyFailed putWhole(ChannelWriter w, int at, int kind, int method, long callId, long hi, long lo,
                                       ByteBuffer buffer, RpcBody body) {
        int header = RpcFrameDescriptor.headerLength(kind);
        int n = body != null ? body.length() : buffer.remaining();
        ByteBuffer b = w.buffer();
        RpcFrameDescriptor.putHeader(b, at, kind, true, method, callId, n, 0, hi, lo);
        BodyFailed failed = null;
        if (body != null) {
            failed = write(body, b.duplicate().limit(at + header + n).position(at + header), w.peerName(), true);
            if (failed != null) {
                zero(b, at + header, n);
            }
        } else {
            b.put(at + header, buffer, buffer.position(), n);
        }
        w.commit();
        w.flush();
        return failed;
    }

    /** Clears the body a failed {@link RpcBody} left half written, so the committed record carries zeros. */
    private static void zero(ByteBuffer b, int from, int n) {
        for (int i = from; i < from + n; i++) {
            b.put(i, (byte) 0);
        }
    }

    /** @return the body in an array of its own (the fragmenting path), or throws {@link BodyFailed} */
    static ByteBuffer materialize(RpcBody body, String peer) {
        ByteBuffer a = ByteBuffer.allocate(body.length());
        BodyFailed failed = write(body, a, peer, false);
        if (failed != null) {
            throw failed;
        }
        return a.flip();
    }

    /** @return null if the body wrote exactly its length into dst, else why not */
    private static BodyFailed write(RpcBody body, ByteBuffer dst, String peer, boolean inRing) {
        int want = dst.remaining();
        try {
            body.writeTo(dst);
        } catch (IOException | RuntimeException e) {
            return new BodyFailed("the body of a message to '" + peer + "' could not be written" + (inRing
                ? " (its frame went out zero-filled): " : ": ") + e, e, inRing);
        }
        if (dst.hasRemaining()) {
            return new BodyFailed("the body of a message to '" + peer + "' wrote " + (want - dst.remaining())
                + " of its length=" + want + " bytes" + (inRing ? " (its frame went out zero-filled)" : ""), null,
                inRing);
        }
        return null;
    }

    /**
     * Sends a one-fragment message whose body the calling thread writes straight into the ring, if the lock is free
     * and the ring has space now: for the reader thread, which must not block on one peer (no array of the body's
     * size, no copy, where {@link #materialize} then {@link #trySendNow(ChannelWriter, Lane, int, int, long,
     * ByteBuffer)} would make both).
     *
     * @param w the writer
     * @param lock its lock
     * @param kind the kind (not a request)
     * @param method the method
     * @param callId the call id
     * @param body writes the body, at most {@link ChannelWriter#maxPayload()} minus the header
     * @return true if sent, false if nothing was written (lock busy, no space now)
     * @throws BodyFailed if the body writer failed (its frame went out zero-filled)
     */
    static boolean trySendNow(ChannelWriter w, Lane lock, int kind, int method, long callId, RpcBody body) {
        return trySendNow(w, lock, kind, method, callId, null, body);
    }

    /**
     * Sends a one-fragment message if the lock is free and the ring has space now: for the reader thread,
     * which must not block on one peer.
     *
     * @param w the writer
     * @param lock its lock
     * @param kind the kind (not a request)
     * @param method the method
     * @param callId the call id
     * @param body the body, at most {@link ChannelWriter#maxPayload()} minus the header
     * @return true if sent
     */
    static boolean trySendNow(ChannelWriter w, Lane lock, int kind, int method, long callId,
                              ByteBuffer body) {
        return trySendNow(w, lock, kind, method, callId, body, null);
    }

    /** One of the two above: the body as a buffer, or as a writer. */
    private static boolean trySendNow(ChannelWriter w, Lane lock, int kind, int method, long callId,
                                      ByteBuffer buffer, RpcBody body) {
        int n = body != null ? body.length() : buffer.remaining();
        if (!lock.tryLock()) {
            return false;
        }
        BodyFailed failed;
        try {
            sendAborts(w, lock);
            int at = w.tryClaim(RpcFrameDescriptor.STREAM_ID, RpcFrameDescriptor.headerLength(kind) + n);
            if (at < 0) {
                return false;
            }
            failed = putWhole(w, at, kind, method, callId, 0, 0, buffer, body);
        } finally {
            lock.unlock();
        }
        if (failed != null) {
            throw failed;
        }
        return true;
    }
}
