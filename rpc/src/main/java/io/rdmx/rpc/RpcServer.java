package io.rdmx.rpc;

import io.rdmx.channel.ChannelEngine;
import io.rdmx.channel.ChannelReader;
import io.rdmx.channel.ChannelWriter;
import io.rdmx.channel.PeerChannel;
import io.rdmx.channel.RecordHandler;
import io.rdmx.channel.RecordSource;
import io.rdmx.transport.Connection;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RdmxTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves calls arriving through a channel engine: requests are reassembled by one reader thread (worker 0 of
 * the engine) and run by a bounded pool of handler threads, which write the responses back into the ring to
 * the calling node themselves.
 *
 * <p>Threads: {@code rdmx-rpc-accept-<node>} takes the engine's accepted peers; {@code rdmx-rpc-server-<node>}
 * reads requests of every client (it never waits for one client's ring space: its own error answers go at once
 * if there is space, else through a handler thread) and runs the handlers registered with {@link Builder#handleAsyncOnReader};
 * {@code rdmx-rpc-handler-<node>-<n>} run the other handlers and send their answers. An
 * {@link RpcAsyncHandler} answers from whichever thread has the answer ({@link RpcCall#respond}): that thread
 * writes it into the client's ring, with no hand-off back to a server thread.
 *
 * <p>Failures are per client: a client that sends a malformed frame is refused (its connection closed, the
 * reason logged and kept in {@link #lastProtocolError()}); a request larger than
 * {@link RpcConfig#maxMessageBytes()} is answered with an error and skipped; a full handler queue answers
 * {@link RpcConfig#BUSY_CLASS}. Other clients go on.
 *
 * <p>The server takes the engine's worker 0 reader and its accepted peers: one server per engine, and no
 * {@link RpcClient} on the same engine. It does not own the engine: close the engine after the server to drop
 * the clients' connections.
 */
public final class RpcServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RpcServer.class);
    private static final Duration POLL = Duration.ofMillis(200);
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    private final ChannelEngine engine;
    private final RpcConfig config;
    private final Map<Integer, RpcHandler> handlers;
    private final Map<Integer, RpcAsyncHandler> asyncHandlers;
    private final Map<Integer, RpcAsyncHandler> readerHandlers;
    private final RpcHandler fallback;
    private final RpcRequestGate gate;
    private final String name;
    private final Map<String, PeerSlot> peers = new ConcurrentHashMap<>();
    /** Reader thread only. */
    private final Map<String, PeerState> states = new HashMap<>();
    private final ThreadPoolExecutor pool;
    private final Thread readerThread;
    private final Thread acceptThread;
    private final Object lifecycle = new Object();
    private volatile boolean running;
    private boolean started;
    private boolean stopped;
    private volatile RpcProtocolException lastProtocolError;
    private final LongAdder callsHandled = new LongAdder();
    private final LongAdder errorsReturned = new LongAdder();
    private final LongAdder callsRefused = new LongAdder();
    private final LongAdder responsesDropped = new LongAdder();
    private final LongAdder protocolErrors = new LongAdder();

    /** A client's channel and the lock of its one writer. */
    static final class PeerSlot {
        final PeerChannel peer;
        final ChannelWriter writer;
        final FrameSender.Lane lock = new FrameSender.Lane();

        PeerSlot(PeerChannel peer) {
            this.peer = peer;
            this.writer = peer.writer(0, 0);
        }
    }

    /** Reader thread: a client's reassembly and whether it was refused, for one connection of that client. */
    private final class PeerState implements Assembler.Sink {
        final String peer;
        /** The channel its records came on, or null where the source is not a channel. */
        final PeerChannel channel;
        /** {@link PeerChannel#acceptedFrom()} of that channel. */
        final String callerAddress;
        final Assembler assembler;
        boolean refused;

        PeerState(String peer, PeerChannel channel) {
            this.peer = peer;
            this.channel = channel;
            this.callerAddress = channel == null ? null : channel.acceptedFrom();
            this.assembler = new Assembler(peer, config.maxMessageBytes(), true);
        }

        @Override
        public boolean admit(int kind, int method, long callId, int length, ByteBuffer b, int at, int n) {
            if (gate == null) {
                return true;
            }
            RpcRequestGate.Refusal refused;
            try {
                refused = gate.admit(method, peer, callerAddress, length, b.duplicate().limit(at + n).position(at)
                    .slice().asReadOnlyBuffer());
            } catch (RuntimeException e) {
                LOG.warn("rpc server '{}': the request gate failed on call id={} of '{}'", name, callId, peer, e);
                refused = new RpcRequestGate.Refusal(RpcException.class.getName(), "request of call id=" + callId
                    + " from '" + peer + "' could not be checked: " + e);
            }
            if (refused == null) {
                return true;
            }
            callsRefused.increment();
            answerNow(peer, method, callId, refused.className(), refused.message());
            return false;
        }

        @Override
        public void message(int kind, int method, long callId, long hi, long lo, byte[] body) {
            RpcAsyncHandler onReader = readerHandlers.get(method);
            if (onReader != null) {
                runAsync(new RpcCall(RpcServer.this, peer, callerAddress, peers.get(peer), method, callId, hi, lo,
                    body, true), onReader);
                return;
            }
            RpcCall call = new RpcCall(RpcServer.this, peer, callerAddress, peers.get(peer), method, callId, hi, lo,
                body, asyncHandlers.containsKey(method));
            try {
                pool.execute(call);
            } catch (RejectedExecutionException e) {
                callsRefused.increment();
                answerNow(peer, method, callId, RpcConfig.BUSY_CLASS, "server '" + name + "' is busy: "
                    + config.handlerQueue() + " requests wait for " + config.handlerThreads() + " handler threads ("
                    + RpcConfig.HANDLER_QUEUE_PROP + ")");
            }
        }

        @Override
        public void tooLarge(int kind, int method, long callId, long size, long limit, String what) {
            callsRefused.increment();
            answerNow(peer, method, callId, RpcMessageTooLargeException.class.getName(), "request of call id="
                + callId + " from '" + peer + "' is " + size + " bytes, more than " + what + "=" + limit
                + " of server '" + name + "'");
        }
    }

    private RpcServer(Builder b) {
        this.engine = b.engine;
        this.config = b.config;
        this.handlers = Map.copyOf(b.handlers);
        this.asyncHandlers = Map.copyOf(b.asyncHandlers);
        this.readerHandlers = Map.copyOf(b.readerHandlers);
        this.fallback = b.fallback;
        this.gate = b.gate;
        this.name = engine.node().name();
        AtomicInteger n = new AtomicInteger();
        this.pool = new ThreadPoolExecutor(config.handlerThreads(), config.handlerThreads(), 0, TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(config.handlerQueue()), r -> {
                Thread t = new Thread(r, "rdmx-rpc-handler-" + name + "-" + n.incrementAndGet());
                t.setDaemon(true);
                return t;
            });
        this.readerThread = new Thread(this::readLoop, "rdmx-rpc-server-" + name);
        this.readerThread.setDaemon(true);
        this.acceptThread = new Thread(this::acceptLoop, "rdmx-rpc-accept-" + name);
        this.acceptThread.setDaemon(true);
    }

    /**
     * @param engine the engine whose worker 0 and accepted peers the server takes
     * @return a builder
     */
    public static Builder builder(ChannelEngine engine) {
        return new Builder(engine);
    }

    /** @return the address clients call (the engine's node address) */
    public String address() {
        return engine.node().address();
    }

    /** @return the server's node name */
    public String name() {
        return name;
    }

    /** @return the configuration */
    public RpcConfig config() {
        return config;
    }

    /**
     * Starts the threads. Idempotent.
     *
     * @return this
     * @throws IllegalStateException if the server was stopped
     */
    public RpcServer start() {
        synchronized (lifecycle) {
            if (stopped) {
                throw new IllegalStateException("rpc server '" + name + "' was stopped; build a new one");
            }
            if (!started) {
                started = true;
                running = true;
                pool.prestartAllCoreThreads();
                acceptThread.start();
                readerThread.start();
            }
        }
        return this;
    }

    /** @return true between {@link #start()} and {@link #close()} */
    public boolean isRunning() {
        return running;
    }

    /**
     * Stops reading requests, interrupts the handlers and waits (bounded) for the threads. Idempotent. Calls in
     * progress get no answer: their clients time out, or fail once the engine is closed.
     */
    @Override
    public void close() {
        synchronized (lifecycle) {
            if (stopped) {
                return;
            }
            stopped = true;
            running = false;
        }
        engine.reader(0).wakeup();
        synchronized (peers) {
            peers.notifyAll();
        }
        pool.shutdownNow();
        try {
            if (started) {
                readerThread.join(5000);
                acceptThread.join(5000);
            }
            if (!pool.awaitTermination(5, TimeUnit.SECONDS)) {
                LOG.warn("rpc server '{}': handler threads still running 5 s after stop (a handler ignores"
                    + " interrupts)", name);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** @return calls served: handler run (or request refused) and the answer written or dropped */
    public long callsHandled() {
        return callsHandled.sum();
    }

    /** @return calls answered with a remote error (the handler threw, or the request was refused) */
    public long errorsReturned() {
        return errorsReturned.sum();
    }

    /** @return requests refused without running a handler (too large, handler queue full) */
    public long callsRefused() {
        return callsRefused.sum();
    }

    /** @return answers not delivered (the client was gone, or its ring stayed full past the write timeout) */
    public long responsesDropped() {
        return responsesDropped.sum();
    }

    /** @return peers refused for malformed frames */
    public long protocolErrors() {
        return protocolErrors.sum();
    }

    /**
     * @param peer a client's node name
     * @return true while the server holds an open channel to that client (tests)
     */
    boolean hasClient(String peer) {
        PeerSlot s = peers.get(peer);
        return s != null && s.peer.isOpen();
    }

    /** @return the last malformed-frame refusal (names the peer and value), or null */
    public RpcProtocolException lastProtocolError() {
        return lastProtocolError;
    }

    private void acceptLoop() {
        while (running) {
            try {
                PeerChannel p = engine.accept(POLL);
                synchronized (peers) {
                    peers.put(p.name(), new PeerSlot(p));
                    peers.notifyAll();
                }
            } catch (RdmxTimeoutException e) {
                continue;
            } catch (RdmxException e) {
                if (!engine.isOpen()) {
                    return;
                }
                LOG.debug("rpc server '{}': a client's channel failed during its handshake: {}", name, e.getMessage());
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void readLoop() {
        ChannelReader reader = engine.reader(0);
        RecordHandler onRecord = this::onRecord;
        while (running) {
            try {
                reader.read(onRecord, 64, POLL.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ConnectionClosedException e) {
                clientGone(e.peer());
            } catch (RdmxException e) {
                if (!engine.isOpen()) {
                    LOG.debug("rpc server '{}': its channel engine closed", name);
                    return;
                }
                LOG.warn("rpc server '{}': reading requests failed: {}", name, e.getMessage());
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException | Error e) {
                if (e instanceof VirtualMachineError && !(e instanceof StackOverflowError)) {
                    throw e;
                }
                // a reader thread that ended here would leave the server up and every call timing out
                LOG.error("rpc server '{}': unexpected failure while reading requests; reading on", name, e);
            }
        }
    }

    /** Reader thread: one record. */
    private void onRecord(int stream, ByteBuffer buf, int off, int len, RecordSource src) {
        String peer = src.peerName();
        PeerState st = states.get(peer);
        PeerChannel via = src.peerChannel();
        if (st == null || st.channel != via) {
            // a client's first record, or the first on a new connection of a client that came back under the
            // same name: what was held of the old connection's messages goes
            if (st != null) {
                st.assembler.clear();
            }
            st = new PeerState(peer, via);
            states.put(peer, st);
        }
        if (st.refused) {
            return;
        }
        try {
            if (stream != RpcFrameDescriptor.STREAM_ID) {
                throw new RpcProtocolException(peer, "malformed RPC frame from peer '" + peer + "': stream id="
                    + stream + " (expected " + RpcFrameDescriptor.STREAM_ID + ")");
            }
            st.assembler.onFrame(buf, off, len, st);
        } catch (RpcProtocolException e) {
            refuse(st, e);
        } catch (RuntimeException e) {
            // not the frame's fault as far as the checks go, but thrown again it would come back with the same
            // record for ever: that client is refused (the others go on) and the cause logged whole
            LOG.error("rpc server '{}': unexpected failure handling a frame from client '{}'", name, peer, e);
            refuse(st, new RpcProtocolException(peer, "unexpected failure handling a frame from peer '" + peer
                + "': " + e));
        }
    }

    private void refuse(PeerState st, RpcProtocolException e) {
        st.refused = true;
        st.assembler.clear();
        lastProtocolError = e;
        protocolErrors.increment();
        LOG.warn("rpc server '{}' refuses client '{}' and closes its connection: {}", name, st.peer, e.getMessage());
        closeConnection(engine, st.peer);
    }

    /**
     * Closes the node's connection to a peer: the channel fails on both sides (the channel API has no way to
     * fail one peer, so this goes through the transport).
     */
    static void closeConnection(ChannelEngine engine, String peer) {
        for (Connection c : engine.node().connections()) {
            if (peer.equals(c.peerName())) {
                c.close();
            }
        }
    }

    /** Reader thread: a client's channel failed. */
    private void clientGone(String peer) {
        PeerState st = states.remove(peer);
        if (st != null) {
            st.assembler.clear();
        }
        peers.computeIfPresent(peer, (k, s) -> s.peer.isOpen() ? s : null);
        LOG.debug("rpc server '{}': client '{}' gone", name, peer);
    }

    /**
     * The channel to a client; waits (bounded) for the accept thread when a request came before it registered
     * the client.
     *
     * @return the slot, or null if the client is gone or did not register in time
     */
    private PeerSlot slot(String peer, long deadline) {
        PeerSlot s = peers.get(peer);
        if (s != null) {
            return s.peer.isOpen() ? s : null;
        }
        synchronized (peers) {
            while ((s = peers.get(peer)) == null) {
                long left = deadline - System.nanoTime();
                if (left <= 0 || !running || !connected(peer)) {
                    return null;                  // a client gone before it was registered: nothing to wait for
                }
                try {
                    peers.wait(Math.min(TimeUnit.NANOSECONDS.toMillis(left) + 1, 50));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return null;
                }
            }
        }
        return s.peer.isOpen() ? s : null;
    }

    /** @return true if the node has an open connection to the peer (not yet registered by the accept thread) */
    private boolean connected(String peer) {
        for (Connection c : engine.node().connections()) {
            if (peer.equals(c.peerName()) && c.isOpen()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Reader thread: an error answer, sent now if the client's ring has space, else by a handler thread (the
     * reader never waits for one client's ring).
     */
    private void answerNow(String peer, int method, long callId, String className, String message) {
        callsHandled.increment();
        errorsReturned.increment();
        PeerSlot s = slot(peer, System.nanoTime() + config.writeTimeout().toNanos());
        int room = s == null ? 0 : s.writer.maxPayload() - RpcFrameDescriptor.RESPONSE_HEADER_LENGTH;
        ByteBuffer body = s == null ? null
            : RpcFrameDescriptor.errorBody(className, message, Math.min(room, config.maxMessageBytes()));
        if (s == null || !FrameSender.trySendNow(s.writer, s.lock, RpcFrameDescriptor.KIND_ERROR, method, callId,
            body) && !sendLater(s, method, callId, RpcFrameDescriptor.KIND_ERROR, body)) {
            responsesDropped.increment();
            LOG.debug("rpc server '{}': error answer to call id={} of '{}' dropped ({})", name, callId, peer, message);
        }
    }

    private RpcHandler handler(int method) {
        RpcHandler h = handlers.get(method);
        return h != null ? h : fallback;
    }

    /** Handler thread: runs the handler and sends its answer. */
    void serve(RpcCall call) {
        if (call.async()) {
            runAsync(call, asyncHandlers.get(call.method()));
            return;
        }
        RpcHandler h = handler(call.method());
        if (h == null) {
            if (call.tryClaimAnswer()) {
                answerError(call, UnsupportedOperationException.class.getName(), "no handler for method="
                    + call.method() + " on server '" + name + "'");
            }
            return;
        }
        ByteBuffer answer;
        try {
            answer = h.handle(call);
        } catch (Throwable e) {
            LOG.debug("rpc server '{}': handler of method={} threw {}", name, call.method(), e.toString());
            answerThrown(call, e);
            return;
        }
        if (call.tryClaimAnswer()) {
            answer(call, RpcFrameDescriptor.KIND_RESPONSE, answer);
        }
    }

    /** Reader or handler thread: hands a call to its asynchronous handler; answers for it if it throws first. */
    private void runAsync(RpcCall call, RpcAsyncHandler h) {
        try {
            h.handle(call);
        } catch (Throwable e) {
            LOG.debug("rpc server '{}': asynchronous handler of method={} threw {}", name, call.method(),
                e.toString());
            answerThrown(call, e);
        }
    }

    /**
     * A handler threw: the caller gets it as a {@link RemoteRpcException} naming its class, an {@link Error}
     * included (an {@code AssertionError} left the caller waiting out its timeout, and on the reader thread
     * stopped the server reading). Only an error of the JVM itself (out of memory) goes on up, once answered.
     */
    private void answerThrown(RpcCall call, Throwable e) {
        if (call.tryClaimAnswer()) {
            answerError(call, e.getClass().getName(), e.getMessage());
        }
        if (e instanceof VirtualMachineError && !(e instanceof StackOverflowError)) {
            throw (VirtualMachineError) e;
        }
    }

    /** Any thread: the answer of a call whose one answer the caller claimed. */
    boolean answerError(RpcCall call, String className, String message) {
        return answer(call, RpcFrameDescriptor.KIND_ERROR, RpcFrameDescriptor.errorBody(className, message,
            config.maxMessageBytes()));
    }

    /**
     * Any thread: writes the answer of a call whose one answer the caller claimed, from the calling thread. On
     * the reader thread (a handler registered on the reader that answers at once) it never waits: a one-fragment
     * answer goes at once if the ring has space now; otherwise (or if larger) a handler thread writes it.
     *
     * @return true if written, false if dropped
     */
    boolean answer(RpcCall call, int kind, ByteBuffer body) {
        return answer(call, kind, body == null ? EMPTY.duplicate() : body, null);
    }

    /**
     * Any thread: as {@link #answer(RpcCall, int, ByteBuffer)}, a response whose body the answering thread
     * writes straight into the client's ring ({@link RpcBody}).
     *
     * @return true if written, false if dropped
     */
    boolean answer(RpcCall call, RpcBody body) {
        return answer(call, RpcFrameDescriptor.KIND_RESPONSE, null, body);
    }

    private boolean answer(RpcCall call, int kind, ByteBuffer buffer, RpcBody writer) {
        ByteBuffer answer = buffer;
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
        PeerSlot s = call.slot();
        if (s == null) {
            s = running ? slot(call.peer(), deadline) : null;
        } else if (!running || !s.peer.isOpen()) {
            s = null;
        }
        if (s == null) {
            responsesDropped.increment(); // stopped (no answers after close), or the client is gone
            return false;
        }
        if (body != null && Thread.currentThread() == readerThread) {
            try {
                // straight into the ring if it has space now (no array, no copy); else the reader, which never
                // waits for ring space, leaves it to a handler thread as an array
                if (length <= s.writer.maxPayload() - RpcFrameDescriptor.headerLength(kind)
                    && FrameSender.trySendNow(s.writer, s.lock, kind, call.method(), call.callId(), body)) {
                    return true;
                }
                answer = FrameSender.materialize(body, s.peer.name());
                body = null;
            } catch (FrameSender.BodyFailed e) {
                return bodyFailed(s, call, e, deadline);
            }
        }
        if (Thread.currentThread() == readerThread) {
            return answerFromReader(s, call, kind, answer);
        }
        if (body != null) {
            try {
                return send(s, call, kind, body, deadline);
            } catch (FrameSender.BodyFailed e) {
                return bodyFailed(s, call, e, deadline);
            }
        }
        return send(s, call, kind, answer, deadline);
    }

    /**
     * A response body writer failed: if nothing went out (a body larger than a record fails before any fragment),
     * the client gets an error answer naming the call; if its frame went out zero-filled, the answer is counted
     * as dropped.
     */
    private boolean bodyFailed(PeerSlot s, RpcCall call, FrameSender.BodyFailed e, long deadline) {
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
        if (Thread.currentThread() == readerThread) {
            return answerFromReader(s, call, RpcFrameDescriptor.KIND_ERROR, err);
        }
        return send(s, call, RpcFrameDescriptor.KIND_ERROR, err, deadline);
    }

    private boolean answerFromReader(PeerSlot s, RpcCall call, int kind, ByteBuffer answer) {
        int room = s.writer.maxPayload() - RpcFrameDescriptor.headerLength(kind);
        if (answer.remaining() <= room
            && FrameSender.trySendNow(s.writer, s.lock, kind, call.method(), call.callId(), answer)) {
            return true;
        }
        // no space now, or larger than a record: a handler thread writes it (the reader does not wait)
        if (sendLater(s, call.method(), call.callId(), kind, answer)) {
            return true;
        }
        responsesDropped.increment();
        LOG.debug("rpc server '{}': answer to call id={} of '{}' dropped: no ring space now on the reader thread"
            + " and the handler pool is full", name, call.callId(), call.peer());
        return false;
    }

    /**
     * Reader thread: has a handler thread write an answer that cannot go now (its own copy: the caller may reuse
     * the buffer), waiting up to the write timeout for ring space.
     *
     * @return false if the pool refused it (full, or shut down)
     */
    private boolean sendLater(PeerSlot s, int method, long callId, int kind, ByteBuffer answer) {
        ByteBuffer copy = ByteBuffer.allocate(answer.remaining()).put(answer.duplicate()).flip();
        try {
            pool.execute(() -> {
                try {
                    FrameSender.send(s.writer, s.lock, kind, method, callId, 0, 0, copy,
                        System.nanoTime() + config.writeTimeout().toNanos());
                } catch (RdmxException e) {
                    responsesDropped.increment();
                    LOG.debug("rpc server '{}': answer to call id={} of '{}' not sent: {}", name, callId,
                        s.peer.name(), e.getMessage());
                } catch (InterruptedException e) {
                    responsesDropped.increment();
                    Thread.currentThread().interrupt();
                }
            });
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    private boolean send(PeerSlot s, RpcCall call, int kind, RpcBody body, long deadline) {
        try {
            FrameSender.send(s.writer, s.lock, kind, call.method(), call.callId(), 0, 0, body, deadline);
            return true;
        } catch (RdmxException e) {
            responsesDropped.increment();
            LOG.debug("rpc server '{}': answer to call id={} of '{}' not sent: {}", name, call.callId(), call.peer(),
                e.getMessage());
        } catch (InterruptedException e) {
            responsesDropped.increment();
            Thread.currentThread().interrupt();
        }
        return false;
    }

    private boolean send(PeerSlot s, RpcCall call, int kind, ByteBuffer answer, long deadline) {
        try {
            FrameSender.send(s.writer, s.lock, kind, call.method(), call.callId(), 0, 0, answer, deadline);
            return true;
        } catch (RdmxException e) {
            responsesDropped.increment();
            LOG.debug("rpc server '{}': answer to call id={} of '{}' not sent: {}", name, call.callId(), call.peer(),
                e.getMessage());
        } catch (InterruptedException e) {
            responsesDropped.increment();
            Thread.currentThread().interrupt();
        }
        return false;
    }

    /** Builder. */
    public static final class Builder {
        private final ChannelEngine engine;
        private final Map<Integer, RpcHandler> handlers = new HashMap<>();
        private final Map<Integer, RpcAsyncHandler> asyncHandlers = new HashMap<>();
        private final Map<Integer, RpcAsyncHandler> readerHandlers = new HashMap<>();
        private RpcHandler fallback;
        private RpcRequestGate gate;
        private RpcConfig config;

        private Builder(ChannelEngine engine) {
            this.engine = java.util.Objects.requireNonNull(engine, "engine");
        }

        /**
         * @param method a method id
         * @param handler serves it
         * @return this
         * @throws IllegalArgumentException if the method has a handler already
         */
        public Builder handle(int method, RpcHandler handler) {
            taken(method);
            handlers.put(method, java.util.Objects.requireNonNull(handler, "handler"));
            return this;
        }

        /**
         * A handler that answers later, from any thread ({@link RpcCall#respond}); it runs on a handler thread.
         *
         * @param method a method id
         * @param handler takes its calls
         * @return this
         * @throws IllegalArgumentException if the method has a handler already
         */
        public Builder handleAsync(int method, RpcAsyncHandler handler) {
            taken(method);
            asyncHandlers.put(method, java.util.Objects.requireNonNull(handler, "handler"));
            return this;
        }

        /**
         * A handler that answers later, from any thread ({@link RpcCall#respond}), run on the server's reader
         * thread as each request is reassembled: no hand-off to the handler pool. It must not block (it holds up
         * every client's requests); it suits a handler that only decodes the call and queues it to an executor
         * of its own, whose thread then answers. An answer given on the reader thread itself goes at once if the
         * client's ring has space now, else a handler thread writes it.
         *
         * @param method a method id
         * @param handler takes its calls
         * @return this
         * @throws IllegalArgumentException if the method has a handler already
         */
        public Builder handleAsyncOnReader(int method, RpcAsyncHandler handler) {
            taken(method);
            readerHandlers.put(method, java.util.Objects.requireNonNull(handler, "handler"));
            return this;
        }

        private void taken(int method) {
            if (handlers.containsKey(method) || asyncHandlers.containsKey(method)
                || readerHandlers.containsKey(method)) {
                throw new IllegalArgumentException("method=" + method + " has a handler already");
            }
        }

        /**
         * @param handler serves every method without a handler of its own ({@link RpcCall#method()} says which)
         * @return this
         */
        public Builder fallback(RpcHandler handler) {
            this.fallback = handler;
            return this;
        }

        /**
         * @param g decides on each request from its first fragment, on the reader thread, before anything of it is
         *     reassembled (a refused request's bytes are skipped, its caller answered with the gate's error)
         * @return this
         */
        public Builder gate(RpcRequestGate g) {
            this.gate = g;
            return this;
        }

        /**
         * @param c the configuration (default {@link RpcConfig#defaults()})
         * @return this
         */
        public Builder config(RpcConfig c) {
            this.config = c;
            return this;
        }

        /** @return the server, not started */
        public RpcServer build() {
            if (config == null) {
                config = RpcConfig.defaults();
            }
            return new RpcServer(this);
        }
    }
}
