package io.rdmx.rpc;

import io.rdmx.channel.ChannelEngine;
import io.rdmx.channel.ChannelReader;
import io.rdmx.channel.PeerChannel;
import io.rdmx.channel.RecordHandler;
import io.rdmx.channel.RecordSource;
import io.rdmx.transport.Connection;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.RdmxException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
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
 * if there is space, else through a handler thread) and runs the handlers registered with
 * {@link Builder#handleAsyncOnReader}; {@code rdmx-rpc-handler-<node>-<n>} run the other handlers and send their
 * answers. An
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
 *
 * <p>This class reads and reassembles the requests, and is the facade over three pieces: the
 * {@link DispatchTable} (each method's handler and where it runs), the {@link Responder} (the one path of every
 * answer into a client's ring) and the {@link ClientLinks} (the accepted clients' connections).
 */
public final class RpcServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RpcServer.class);
    private static final Duration POLL = Duration.ofMillis(200);

    private final ChannelEngine engine;
    private final RpcConfig config;
    private final DispatchTable dispatch;
    private final RpcRequestGate gate;
    private final String name;
    private final ClientLinks clients;
    private final Responder responder;
    /** Reader thread only. */
    private final Map<String, PeerState> states = new HashMap<>();
    private final ThreadPoolExecutor pool;
    private final Thread readerThread;
    private final Object lifecycle = new Object();
    private volatile boolean running;
    private boolean started;
    private boolean stopped;
    private volatile RpcProtocolException lastProtocolError;
    private final LongAdder callsRefused = new LongAdder();
    private final LongAdder protocolErrors = new LongAdder();

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
            responder.refuse(peer, method, callId, refused.className(), refused.message());
            return false;
        }

        @Override
        public void message(int kind, int method, long callId, long hi, long lo, byte[] body) {
            DispatchTable.Route route = dispatch.route(method);
            RpcCall call = new RpcCall(responder, peer, callerAddress, clients.registered(peer), method, callId, hi,
                lo, body, route);
            if (route.mode == DispatchTable.Mode.ON_READER) {
                route.serve(call);
                return;
            }
            try {
                pool.execute(call);
            } catch (RejectedExecutionException e) {
                callsRefused.increment();
                responder.refuse(peer, method, callId, RpcConfig.BUSY_CLASS, "server '" + name + "' is busy: "
                    + config.handlerQueue() + " requests wait for " + config.handlerThreads() + " handler threads ("
                    + RpcConfig.HANDLER_QUEUE_PROP + ")");
            }
        }

        @Override
        public void tooLarge(int kind, int method, long callId, long size, long limit, String what) {
            callsRefused.increment();
            responder.refuse(peer, method, callId, RpcMessageTooLargeException.class.getName(), "request of call id="
                + callId + " from '" + peer + "' is " + size + " bytes, more than " + what + "=" + limit
                + " of server '" + name + "'");
        }
    }

    private RpcServer(Builder b) {
        this.engine = b.engine;
        this.config = b.config;
        this.dispatch = b.dispatch.build();
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
        this.clients = new ClientLinks(engine, name, () -> running, POLL);
        this.responder = new Responder(config, name, clients, pool, readerThread, () -> running);
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
                clients.start();
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
        clients.stop();
        pool.shutdownNow();
        try {
            if (started) {
                readerThread.join(5000);
                clients.join(5000);
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
        return responder.callsHandled();
    }

    /** @return calls answered with a remote error (the handler threw, or the request was refused) */
    public long errorsReturned() {
        return responder.errorsReturned();
    }

    /** @return requests refused without running a handler (too large, handler queue full) */
    public long callsRefused() {
        return callsRefused.sum();
    }

    /** @return answers not delivered (the client was gone, or its ring stayed full past the write timeout) */
    public long responsesDropped() {
        return responder.responsesDropped();
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
        return clients.has(peer);
    }

    /** @return the last malformed-frame refusal (names the peer and value), or null */
    public RpcProtocolException lastProtocolError() {
        return lastProtocolError;
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
        clients.gone(peer);
        LOG.debug("rpc server '{}': client '{}' gone", name, peer);
    }

    /** Builder. */
    public static final class Builder {
        private final ChannelEngine engine;
        private final DispatchTable.Builder dispatch;
        private RpcRequestGate gate;
        private RpcConfig config;

        private Builder(ChannelEngine engine) {
            this.engine = java.util.Objects.requireNonNull(engine, "engine");
            this.dispatch = new DispatchTable.Builder(engine.node().name());
        }

        /**
         * @param method a method id
         * @param handler serves it
         * @return this
         * @throws IllegalArgumentException if the method has a handler already
         */
        public Builder handle(int method, RpcHandler handler) {
            dispatch.handle(method, handler);
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
            dispatch.handleAsync(method, handler, false);
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
            dispatch.handleAsync(method, handler, true);
            return this;
        }

        /**
         * @param handler serves every method without a handler of its own ({@link RpcCall#method()} says which)
         * @return this
         */
        public Builder fallback(RpcHandler handler) {
            dispatch.fallback(handler);
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
