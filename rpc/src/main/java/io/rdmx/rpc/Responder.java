package io.rdmx.rpc;

import io.rdmx.transport.RdmxException;
import java.nio.ByteBuffer;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes an {@link RpcServer}'s answers into the clients' rings: one path ({@link #answer}) for every answer of a
 * call, whatever gives it (a handler's return value, an asynchronous handler's {@link RpcCall#respond}, an error),
 * with the body as a buffer or as a writer ({@link RpcBody}), and {@link #refuse} for the reader thread's own
 * error answers (a request refused before any handler saw it).
 *
 * <p>What varies is the thread. Any thread but the server's reader writes the answer itself, waiting up to
 * {@link RpcConfig#writeTimeout()} for ring space. The reader never waits for one client's ring: a one-fragment
 * answer goes at once if there is space now; otherwise (or if larger) a handler thread writes a copy of it.
 *
 * <p>An answer goes on the connection its request came on: a client gone since then, or reconnected, gets none
 * (counted in {@link #responsesDropped()}).
 */
final class Responder implements Answerer {
    private static final Logger LOG = LoggerFactory.getLogger(RpcServer.class);
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    private final RpcConfig config;
    private final String name;
    private final ClientLinks clients;
    private final Executor pool;
    private final Thread readerThread;
    private final BooleanSupplier running;
    private final LongAdder callsHandled = new LongAdder();
    private final LongAdder errorsReturned = new LongAdder();
    private final LongAdder responsesDropped = new LongAdder();

    /**
     * @param config the server's configuration (message size limit, write timeout)
     * @param name the server's node name
     * @param clients the connections to the clients
     * @param pool the handler threads, which write what the reader thread cannot write now
     * @param readerThread the server's reader thread, which never waits for ring space
     * @param running false once the server is stopped (no answers after that)
     */
    Responder(RpcConfig config, String name, ClientLinks clients, Executor pool, Thread readerThread,
              BooleanSupplier running) {
        this.config = config;
        this.name = name;
        this.clients = clients;
        this.pool = pool;
        this.readerThread = readerThread;
        this.running = running;
    }

    /**
     * Any thread: writes the answer of a call whose one answer the caller claimed. A response larger than
     * {@link RpcConfig#maxMessageBytes()} is answered with an {@link RpcMessageTooLargeException} error instead.
     */
    @Override
    public boolean answer(RpcCall call, int kind, ByteBuffer buffer, RpcBody writer) {
        ByteBuffer answer = buffer == null && writer == null ? EMPTY.duplicate() : buffer;
        RpcBody body = writer;
        int length = body != null ? body.length() : answer.remaining();
        if (kind == RpcFrameDescriptor.KIND_RESPONSE && length > config.maxMessageBytes()) {
            kind = RpcFrameDescriptor.KIND_ERROR;
            body = null;
            answer = RpcFrameDescriptor.errorBody(RpcMessageTooLargeException.class.getName(), "response of"
                + " call id=" + call.callId() + " to '" + call.peer() + "' is " + length
                + " bytes, more than " + RpcConfig.MAX_MESSAGE_BYTES_PROP + "=" + config.maxMessageBytes()
                + " of server '" + name + "'", config.maxMessageBytes());
        }
        // counted before the answer is written, so a client that has its answer sees the count
        callsHandled.increment();
        if (kind == RpcFrameDescriptor.KIND_ERROR) {
            errorsReturned.increment();
        }
        long deadline = System.nanoTime() + config.writeTimeout().toNanos();
        // the connection the request came on (a request that came before the accept thread registered its
        // client waits for it); a client gone since then, or reconnected, gets no answer on another connection
        ClientLinks.PeerSlot s = call.slot();
        if (s == null) {
            s = running.getAsBoolean() ? clients.slot(call.peer(), deadline) : null;
        } else if (!running.getAsBoolean() || !s.peer.isOpen()) {
            s = null;
        }
        if (s == null) {
            responsesDropped.increment(); // stopped (no answers after close), or the client is gone
            return false;
        }
        boolean onReader = Thread.currentThread() == readerThread;
        try {
            if (body != null && onReader) {
                // straight into the ring if it has space now (no array, no copy); else the reader, which never
                // waits for ring space, leaves it to a handler thread as an array
                if (length <= s.writer.maxPayload() - RpcFrameDescriptor.headerLength(kind)
                    && FrameSender.trySendNow(s.writer, s.lock, kind, call.method(), call.callId(), body)) {
                    return true;
                }
                answer = FrameSender.materialize(body, s.peer.name());
                body = null;
            }
            return deliver(s, call.method(), call.callId(), kind, answer, body, deadline, onReader);
        } catch (FrameSender.BodyFailed e) {
            return bodyFailed(s, call, e, deadline, onReader);
        }
    }

    @Override
    public boolean answerError(RpcCall call, String className, String message) {
        return answer(call, RpcFrameDescriptor.KIND_ERROR, RpcFrameDescriptor.errorBody(className, message,
            config.maxMessageBytes()), null);
    }

    /**
     * Reader thread: an error answer to a request no handler saw (refused by the gate, too large, the pool full),
     * sent now if the client's ring has space, else by a handler thread (the reader never waits for one client's
     * ring).
     */
    void refuse(String peer, int method, long callId, String className, String message) {
        callsHandled.increment();
        errorsReturned.increment();
        ClientLinks.PeerSlot s = clients.slot(peer, System.nanoTime() + config.writeTimeout().toNanos());
        if (s == null) {
            responsesDropped.increment();
            LOG.debug("rpc server '{}': error answer to call id={} of '{}' dropped ({})", name, callId, peer, message);
            return;
        }
        int room = s.writer.maxPayload() - RpcFrameDescriptor.RESPONSE_HEADER_LENGTH;
        deliver(s, method, callId, RpcFrameDescriptor.KIND_ERROR, RpcFrameDescriptor.errorBody(className, message,
            Math.min(room, config.maxMessageBytes())), null, 0, true);
    }

    /**
     * A response body writer failed: if nothing went out (a body larger than a record fails before any fragment),
     * the client gets an error answer naming the call; if its frame went out zero-filled, the answer is counted
     * as dropped.
     */
    private boolean bodyFailed(ClientLinks.PeerSlot s, RpcCall call, FrameSender.BodyFailed e, long deadline,
                               boolean onReader) {
        LOG.warn("rpc server '{}': the response body of call id={} of '{}' failed: {}", name, call.callId(),
            call.peer(), e.getMessage());
        errorsReturned.increment();
        if (e.sent) {
            responsesDropped.increment();
            return false;
        }
        ByteBuffer err = RpcFrameDescriptor.errorBody(RpcException.class.getName(), "response of call id="
            + call.callId() + " on server '" + name + "' could not be written: " + e.getMessage(),
            config.maxMessageBytes());
        return deliver(s, call.method(), call.callId(), RpcFrameDescriptor.KIND_ERROR, err, null, deadline, onReader);
    }

    /**
     * Writes an answer on a client's connection. Off the reader thread: blocking up to the deadline for the lock
     * and ring space. On the reader thread (a buffer only): at once if it fits one record and the ring has space
     * now, else by a handler thread, which writes a copy; dropped if the pool refuses it.
     *
     * @param buffer the body, or null if {@code body} writes it
     * @param body writes the body, or null (never on the reader thread)
     * @param deadline {@code System.nanoTime()} bound (off the reader thread)
     * @param onReader true on the server's reader thread
     * @return true if written (or handed to a handler thread), false if dropped
     * @throws FrameSender.BodyFailed if the body writer failed
     */
    private boolean deliver(ClientLinks.PeerSlot s, int method, long callId, int kind, ByteBuffer buffer,
                            RpcBody body, long deadline, boolean onReader) {
        if (!onReader) {
            return send(s, method, callId, kind, buffer, body, deadline);
        }
        if (buffer.remaining() <= s.writer.maxPayload() - RpcFrameDescriptor.headerLength(kind)
            && FrameSender.trySendNow(s.writer, s.lock, kind, method, callId, buffer)) {
            return true;
        }
        // no space now, or larger than a record: a handler thread writes it (the reader does not wait); its own
        // copy, as the caller may reuse the buffer
        ByteBuffer copy = ByteBuffer.allocate(buffer.remaining()).put(buffer.duplicate()).flip();
        try {
            pool.execute(() -> send(s, method, callId, kind, copy, null,
                System.nanoTime() + config.writeTimeout().toNanos()));
            return true;
        } catch (RejectedExecutionException e) {
            responsesDropped.increment();
            LOG.debug("rpc server '{}': answer to call id={} of '{}' dropped: no ring space now on the reader thread"
                + " and the handler pool is full", name, callId, s.peer.name());
            return false;
        }
    }

    /**
     * Writes an answer, blocking up to the deadline for the lock and ring space.
     *
     * @return true if written, false if dropped (the client gone, no space in time, interrupted)
     * @throws FrameSender.BodyFailed if the body writer failed
     */
    private boolean send(ClientLinks.PeerSlot s, int method, long callId, int kind, ByteBuffer buffer,
                         RpcBody body, long deadline) {
        try {
            if (body != null) {
                FrameSender.send(s.writer, s.lock, kind, method, callId, 0, 0, body, deadline);
            } else {
                FrameSender.send(s.writer, s.lock, kind, method, callId, 0, 0, buffer, deadline);
            }
            return true;
        } catch (RdmxException e) {
            responsesDropped.increment();
            LOG.debug("rpc server '{}': answer to call id={} of '{}' not sent: {}", name, callId, s.peer.name(),
                e.getMessage());
        } catch (InterruptedException e) {
            responsesDropped.increment();
            Thread.currentThread().interrupt();
        }
        return false;
    }

    /** @return calls served: handler run (or request refused) and the answer written or dropped */
    long callsHandled() {
        return callsHandled.sum();
    }

    /** @return calls answered with a remote error */
    long errorsReturned() {
        return errorsReturned.sum();
    }

    /** @return answers not delivered */
    long responsesDropped() {
        return responsesDropped.sum();
    }
}
