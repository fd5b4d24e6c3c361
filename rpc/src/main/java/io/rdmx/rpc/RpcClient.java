package io.rdmx.rpc;

import io.rdmx.channel.ChannelEngine;
import io.rdmx.channel.ChannelReader;
import io.rdmx.channel.ChannelWriter;
import io.rdmx.channel.PeerChannel;
import io.rdmx.channel.RecordHandler;
import io.rdmx.channel.RecordSource;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RdmxTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Calls servers through a channel engine: many outstanding calls per server, multiplexed by call id over the
 * engine's ring to that server, answered through worker 0's reader, whose records complete each call by its id.
 *
 * <p>Any thread may call. The calling thread writes its request into the ring itself (fragments of at most a
 * ring record; the ring's writer lock is taken per fragment) and, for {@link #call}, then reads worker 0 itself
 * when no other thread does (it holds the reader role until its own response came, completing the calls of others
 * it meets on the way): a lone caller gets its answer with no hand-off between threads. A caller that finds the
 * role taken queues itself and parks until the reading thread completes its call, or, when that reader leaves
 * first, hands it the role ({@link ReaderRole}). The reader thread ({@code rdmx-rpc-client-<node>}) reads only for
 * asynchronous calls (their futures complete on whichever thread reads), and drains the ring when nobody read for
 * a while. Calls live
 * in a table of {@link RpcConfig#maxOutstandingCalls()} slots indexed by call id: no map entry, no boxing per call.
 *
 * <p>Failure is per server: a lost server fails the calls outstanding on it ({@link RpcPeerException} naming
 * it); calls to other servers go on. The next call to that address connects again, retrying within its
 * timeout. A response that comes after its call timed out is dropped and counted ({@link #lateResponses()}).
 * Malformed frames from a server fail its calls ({@link RpcProtocolException}) and close its connection.
 *
 * <p>The client takes the engine's worker 0 reader: one client per engine, and no {@link RpcServer} on the
 * same engine. It does not own the engine.
 */
public final class RpcClient implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RpcClient.class);
    private static final long IDLE_READ_NANOS = TimeUnit.MILLISECONDS.toNanos(200);
    private static final long TIMEOUT_SCAN_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final ChannelEngine engine;
    private final RpcConfig config;
    private final String name;
    private final long clientHi;
    private final long clientLo;
    private final AtomicReferenceArray<Pending> slots;
    private final int mask;
    private final AtomicLong ids;
    private final AtomicInteger asyncOutstanding = new AtomicInteger();
    private final Map<String, ServerConn> servers = new ConcurrentHashMap<>();
    /** The thread holding the reader role only ({@link #role}). */
    private final Map<String, ServerState> states = new HashMap<>();
    /** Who reads worker 0 now: a calling thread waiting for its own response, or the reader thread. */
    private final ReaderRole<Pending> role = new ReaderRole<>();
    /** The thread holding the reader role only. */
    private long nextScan = System.nanoTime() + TIMEOUT_SCAN_NANOS;
    private final RecordHandler onRecord = this::onRecord;
    private final LongAdder leadReads = new LongAdder();
    private final Thread readerThread;
    private volatile boolean running = true;
    private final LongAdder lateResponses = new LongAdder();
    private final LongAdder foreignResponses = new LongAdder();
    private final LongAdder timedOut = new LongAdder();

    /** One call: the future its caller gets (the response body, or what its reader decoded). */
    static final class Pending extends CompletableFuture<Object> implements ReaderRole.Follower {
        /** {@link #hand}: waiting (nothing handed), handed the reader role, left without it. */
        private static final int WAITING = 0;
        private static final int HANDED = 1;
        private static final int LEFT = 2;
        private static final java.lang.invoke.VarHandle HAND;

        static {
            try {
                HAND = java.lang.invoke.MethodHandles.lookup().findVarHandle(Pending.class, "hand", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        final String address;
        final boolean async;
        final long deadline;
        final long timeoutNanos;
        /** Decodes the response on the thread reading responses, or null: the body as an array. */
        RpcResponseReader<?> reader;
        volatile long callId;
        volatile PeerChannel peer;
        volatile Thread waiter;
        /** Set by the caller once the call is in the table (from then on, only who takes it out completes it). */
        volatile boolean registered;
        /** In the reader role's follower queue (set by its caller, cleared by a reader that hands it the role). */
        volatile boolean queued;
        /** Whether a leaving reader handed its caller the role: {@link #WAITING}, {@link #HANDED} or {@link #LEFT}. */
        private volatile int hand;

        Pending(String address, boolean async, long deadline, long timeoutNanos) {
            this.address = address;
            this.async = async;
            this.deadline = deadline;
            this.timeoutNanos = timeoutNanos;
        }

        @Override
        public boolean done() {
            return isDone();
        }

        @Override
        public boolean hand() {
            return HAND.compareAndSet(this, WAITING, HANDED);
        }

        @Override
        public boolean leave() {
            return HAND.compareAndSet(this, WAITING, LEFT) || hand == LEFT;
        }

        @Override
        public void rearm() {
            hand = WAITING;
        }

        @Override
        public void dequeued() {
            queued = false;
        }
    }

    /** A channel and its writer, replaced together on a reconnect. */
    private static final class Link {
        final PeerChannel peer;
        final ChannelWriter writer;

        Link(PeerChannel peer) {
            this.peer = peer;
            this.writer = peer.writer(0, 0);
        }
    }

    /** The channel to one server address and the lock of its writer. */
    private final class ServerConn {
        final String address;
        final FrameSender.Lane lock = new FrameSender.Lane();
        volatile Link link;

        ServerConn(String address) {
            this.address = address;
        }

        /** Connects (again) if needed, retrying until the deadline. */
        Link connect(long deadline, long timeoutNanos) throws RpcException, InterruptedException {
            Link l = link;
            if (l != null && l.peer.isOpen()) {
                return l;
            }
            synchronized (this) {
                l = link;
                if (l != null && l.peer.isOpen()) {
                    return l;
                }
                long backoff = ChannelEngine.FIRST_BACKOFF.toNanos();
                Exception last = null;
                while (running) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        break;
                    }
                    try {
                        PeerChannel np = engine.connect(address, Duration.ofNanos(left));
                        if (np.isOpen()) {
                            l = new Link(np);
                            link = l;
                            return l;
                        }
                        last = np.failure();
                    } catch (RdmxTimeoutException e) {
                        last = e;
                        break;
                    } catch (RdmxException | IllegalStateException e) {
                        last = e;
                    }
                    long pause = Math.min(backoff, deadline - System.nanoTime());
                    if (pause > 0) {
                        TimeUnit.NANOSECONDS.sleep(pause);
                    }
                    backoff = Math.min(2 * backoff, ChannelEngine.MAX_BACKOFF.toNanos());
                }
                if (!running) {
                    throw closed();
                }
                throw new RpcPeerException(address, "rpc client '" + name + "' could not connect to the server at"
                    + " address=" + address + " within the call's timeout of "
                    + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms" + (last == null ? "" : ": "
                    + last.getMessage()), last);
            }
        }
    }

    /** Reader thread: a server's reassembly. */
    private final class ServerState implements Assembler.Sink {
        final String server;
        /** The channel this state reassembles (a server restarted under the same name gets a state of its own). */
        final PeerChannel via;
        final Assembler assembler;
        boolean refused;

        ServerState(String server, PeerChannel via) {
            this.server = server;
            this.via = via;
            this.assembler = new Assembler(server, config.maxMessageBytes(), false);
        }

        @Override
        public void message(int kind, int method, long callId, long hi, long lo, byte[] body) {
            Pending p = take(callId, server);
            if (p == null) {
                return;
            }
            if (kind == RpcFrameDescriptor.KIND_RESPONSE) {
                if (p.reader == null) {
                    p.complete(body);
                } else {
                    decode(p, ByteBuffer.wrap(body));
                }
            } else {
                String[] e = RpcFrameDescriptor.parseError(body);
                p.completeExceptionally(e != null ? new RemoteRpcException(server, e[0], e[1])
                    : new RpcProtocolException(server, "malformed RPC frame from peer '" + server
                        + "': ERROR body of call id=" + callId + " (length=" + body.length + ") has no class name"));
            }
            wake(p);
        }

        @Override
        public boolean inPlace(int kind, long callId, ByteBuffer b, int at, int n) {
            if (kind != RpcFrameDescriptor.KIND_RESPONSE) {
                return false;
            }
            int i = (int) callId & mask;
            Pending q = slots.get(i);
            if (q == null || q.callId != callId || q.reader == null || !answersFor(q, server)) {
                return false;                 // no reader: the body as an array (or a late or foreign one, dropped)
            }
            Pending p = take(callId, server);
            if (p == null) {
                return false;
            }
            decode(p, b.duplicate().limit(at + n).position(at));
            wake(p);
            return true;
        }

        /**
         * Reader thread: the call's reader decodes its response; its failure, an {@link Error} included, fails the
         * call, naming the server (the call was taken from the table: nothing else would ever complete it, and
         * its caller would wait past its timeout).
         */
        private void decode(Pending p, ByteBuffer body) {
            Object v;
            try {
                v = p.reader.read(body);
            } catch (Throwable e) {
                p.completeExceptionally(new RpcException("call id=" + p.callId + ": the response from server '"
                    + server + "' could not be decoded: " + e, e));
                if (e instanceof VirtualMachineError && !(e instanceof StackOverflowError)) {
                    throw (VirtualMachineError) e;
                }
                return;
            }
            if (!p.complete(v)) {
                // the future was complete already (its caller cancelled it, or gave up on it): the result goes back
                discardResult(p, v, server);
            }
        }

        @Override
        public void tooLarge(int kind, int method, long callId, long size, long limit, String what) {
            Pending p = take(callId, server);
            if (p == null) {
                return;
            }
            p.completeExceptionally(new RpcMessageTooLargeException("response of call id=" + callId + " from server '"
                + server + "' is " + size + " bytes, more than " + what + "=" + limit + " of client '" + name + "'",
                size, limit));
            wake(p);
        }
    }

    private RpcClient(ChannelEngine engine, RpcConfig config, byte[] clientId) {
        this.engine = engine;
        this.config = config;
        this.name = engine.node().name();
        this.clientHi = ClientIds.high(clientId);
        this.clientLo = ClientIds.low(clientId);
        this.slots = new AtomicReferenceArray<>(config.maxOutstandingCalls());
        this.mask = config.maxOutstandingCalls() - 1;
        // a random start: a restarted client (same node name) does not reuse the ids of its predecessor's calls
        this.ids = new AtomicLong(ThreadLocalRandom.current().nextLong() >>> 2);
        this.readerThread = new Thread(this::readLoop, "rdmx-rpc-client-" + name);
        this.readerThread.setDaemon(true);
    }

    /**
     * A client with the default configuration and a random client id.
     *
     * @param engine the engine whose worker 0 reader the client takes
     * @return the client, reading
     */
    public static RpcClient open(ChannelEngine engine) {
        return open(engine, RpcConfig.defaults());
    }

    /**
     * @param engine the engine whose worker 0 reader the client takes
     * @param config the configuration
     * @return the client, reading, with a random client id
     */
    public static RpcClient open(ChannelEngine engine, RpcConfig config) {
        UUID u = UUID.randomUUID();
        return open(engine, config, ClientIds.toBytes(u.getMostSignificantBits(), u.getLeastSignificantBits()));
    }

    /**
     * @param engine the engine whose worker 0 reader the client takes
     * @param config the configuration
     * @param clientId 16 bytes sent with every request (Hadoop's client id)
     * @return the client, reading
     */
    public static RpcClient open(ChannelEngine engine, RpcConfig config, byte[] clientId) {
        RpcClient c = new RpcClient(engine, config, clientId.clone());
        c.readerThread.start();
        return c;
    }

    /** @return the client's node name */
    public String name() {
        return name;
    }

    /** @return a copy of the 16-byte client id */
    public byte[] clientId() {
        return ClientIds.toBytes(clientHi, clientLo);
    }

    /** @return the configuration */
    public RpcConfig config() {
        return config;
    }

    /** @return responses that came after their call had timed out (dropped) */
    public long lateResponses() {
        return lateResponses.sum();
    }

    /**
     * @return responses from a server for a call that was outstanding at another server (dropped: a server answers
     *     only the calls sent to it)
     */
    public long foreignResponses() {
        return foreignResponses.sum();
    }

    /** @return times a calling thread took the reader role to read its own response (tests, diagnostics) */
    long callerReads() {
        return leadReads.sum();
    }

    /** @return calling threads parked while another thread reads (tests) */
    int followers() {
        return role.followers();
    }

    /** @return calls that timed out */
    public long timedOut() {
        return timedOut.sum();
    }

    /**
     * @param address a server's address
     * @return true if this client holds an open channel to it (false before the first call, and once the
     *         channel is found down: the next call dials again)
     */
    public boolean connected(String address) {
        ServerConn sc = servers.get(address);
        Link l = sc == null ? null : sc.link;
        return l != null && l.peer.isOpen();
    }

    /** @return calls outstanding now (a scan of the call table) */
    public int outstanding() {
        int n = 0;
        for (int i = 0; i < slots.length(); i++) {
            if (slots.get(i) != null) {
                n++;
            }
        }
        return n;
    }

    /**
     * Calls a method and waits for its answer.
     *
     * @param address the server's address ({@link RpcServer#address()})
     * @param method the method
     * @param request the request body (its remaining bytes; position unchanged; may be reused on return)
     * @param timeout bound on the whole call: connecting, sending and the answer
     * @return the response body
     * @throws RemoteRpcException if the handler threw (its class name and message)
     * @throws RpcTimeoutException if no answer came in time
     * @throws RpcPeerException if the server was lost or unreachable (names it)
     * @throws RpcMessageTooLargeException if the request or response exceeds a side's limit
     * @throws RpcException if the client is closed
     * @throws InterruptedException if interrupted (the call is abandoned)
     */
    public byte[] call(String address, int method, ByteBuffer request, Duration timeout)
        throws RpcException, InterruptedException {
        long t = timeout.toNanos();
        Pending p = new Pending(address, false, System.nanoTime() + t, t);
        p.waiter = Thread.currentThread();
        send(p, method, request, null);
        return (byte[]) await(p);
    }

    /**
     * Calls a method whose request body the calling thread writes straight into the ring (no array of its size,
     * no copy of it: see {@link RpcBody}), and waits for its answer.
     *
     * @param address the server's address
     * @param method the method
     * @param request writes the request body
     * @param timeout bound on the whole call
     * @return the response body
     * @throws RpcException as {@link #call(String, int, ByteBuffer, Duration)}, and if the body writer failed
     * @throws InterruptedException if interrupted (the call is abandoned)
     */
    public byte[] call(String address, int method, RpcBody request, Duration timeout)
        throws RpcException, InterruptedException {
        return call(address, method, request, null, timeout);
    }

    /**
     * Calls a method, writing its request body straight into the ring, and has its response decoded by the thread
     * reading the client's responses as it arrives (usually the calling thread itself): in place in the ring when it
     * came in one record (no array of its size, no copy of it). Keep the reader short: it holds up the responses of
     * every call of this client.
     *
     * @param <T> the decoded type
     * @param address the server's address
     * @param method the method
     * @param request writes the request body
     * @param reader decodes the response body, or null for the body as a {@code byte[]}
     * @param timeout bound on the whole call
     * @return what the reader returned
     * @throws RpcException as {@link #call(String, int, ByteBuffer, Duration)}, if the body writer failed, and if
     *                      the reader threw (its exception the cause, the server named)
     * @throws InterruptedException if interrupted (the call is abandoned)
     */
    @SuppressWarnings("unchecked")
    public <T> T call(String address, int method, RpcBody request, RpcResponseReader<T> reader, Duration timeout)
        throws RpcException, InterruptedException {
        long t = timeout.toNanos();
        Pending p = new Pending(address, false, System.nanoTime() + t, t);
        p.waiter = Thread.currentThread();
        p.reader = reader;
        send(p, method, null, request);
        return (T) await(p);
    }

    /**
     * The calling thread: reads its own response from the ring when no other thread reads (it then completes any
     * other call whose response it meets), else parks until the reading thread completes the call, the reader
     * role is free again, or the deadline passes.
     */
    private Object await(Pending p) throws RpcException, InterruptedException {
        String address = p.address;
        try {
            while (!p.isDone()) {
                long left = p.deadline - System.nanoTime();
                if (left <= 0) {
                    expire(p);
                    break;
                }
                if (running && role.tryTake()) {
                    role.took(p); // out of the queue; a hand-off that brought it here is taken
                    leadReads.increment();
                    try {
                        readFor(p);
                    } finally {
                        release();
                    }
                    continue;
                }
                if (!p.queued) {
                    // queued before the role is looked at again: a reader that leaves after this finds it in the
                    // queue and hands it the role (see ReaderRole); a hand-off that woke it and found the role
                    // taken by another thread is over (follow resets it)
                    p.queued = true;
                    role.follow(p);
                    continue;
                }
                LockSupport.parkNanos(this, left);
                if (Thread.interrupted()) {
                    interrupted(p);
                }
            }
        } finally {
            if (p.queued) {
                role.unfollow(p);
            }
            if (!p.leave()) {
                // handed the role but done without taking it (completed, timed out, interrupted): pass it on
                if (role.tryTake()) {
                    release();
                }
            }
        }
        try {
            return p.get();
        } catch (ExecutionException e) {
            throw asRpcException(e.getCause());
        }
    }

    /**
     * A blocking caller interrupted while it waits: fails its call, or, when another thread has taken the call out
     * of the table and completes it, gives up on it, so that a result decoded for it goes to the reader's
     * {@link RpcResponseReader#discard} (nobody will read it).
     *
     * @throws InterruptedException always
     */
    private void interrupted(Pending p) throws InterruptedException {
        if (!fail(p, new RpcException("call id=" + p.callId + " to address=" + p.address + " interrupted"))
            && !p.completeExceptionally(new CancellationException("rpc call id=" + p.callId + " interrupted"))
            && p.reader != null && !p.isCompletedExceptionally()) {
            // completed just now: this thread discards what it will not return
            discardResult(p, p.getNow(null), p.address);
        }
        throw new InterruptedException("rpc call id=" + p.callId + " to address=" + p.address);
    }

    /** A result the call's future did not take (see {@link RpcResponseReader#discard}): given back, once. */
    @SuppressWarnings("unchecked")
    private void discardResult(Pending p, Object v, String server) {
        try {
            ((RpcResponseReader<Object>) p.reader).discard(v);
        } catch (Throwable e) {
            if (e instanceof VirtualMachineError && !(e instanceof StackOverflowError)) {
                throw (VirtualMachineError) e;
            }
            LOG.warn("rpc client '{}': discarding the result of call id={} from server '{}' (its future was "
                + "complete already) failed", name, p.callId, server, e);
        }
    }

    /**
     * A calling thread holding the reader role: reads until its own call is done (completing the other calls
     * whose responses come first) or its deadline passes.
     */
    private void readFor(Pending p) throws InterruptedException {
        while (!p.isDone() && running) {
            long left = p.deadline - System.nanoTime();
            if (left <= 0) {
                return;
            }
            try {
                readOnce(left);
            } catch (InterruptedException e) {
                interrupted(p);
            }
            if (!engine.isOpen()) {
                return;
            }
        }
    }

    /**
     * Gives the reader role back to the caller that waited longest (one unpark; it reads its own response from
     * then on), else, while asynchronous calls wait, to the reader thread.
     */
    private void release() {
        Pending next = role.handOff();
        if (next != null) {
            LockSupport.unpark(next.waiter);
        } else if (asyncOutstanding.get() > 0) {
            LockSupport.unpark(readerThread);
        }
    }

    /**
     * Calls a method without waiting. The future completes on the thread reading the client's responses (the
     * client's reader thread, or a synchronous caller of this client waiting for its own answer): chain blocking
     * work with the {@code *Async} methods of {@link CompletableFuture}, not on that thread.
     *
     * @param address the server's address
     * @param method the method
     * @param request the request body (its remaining bytes are sent before this returns, unless it fails first)
     * @param timeout bound on the whole call (enforced to about 10 ms)
     * @return the response body, or the call's {@link RpcException}
     */
    public CompletableFuture<byte[]> callAsync(String address, int method, ByteBuffer request, Duration timeout) {
        return callAsync(address, method, request, null, timeout);
    }

    /**
     * Calls a method without waiting, and has its response decoded by the thread reading the client's responses
     * as it arrives: in place in the ring when it came in one record (no array of its size, no copy of it; a
     * response larger than a ring record comes reassembled in an array). The future completes, on that thread,
     * with what the reader returned, or fails with an {@link RpcException} naming the server if it threw. Keep
     * the reader short: it holds up the responses of every call of this client.
     *
     * @param <T> the decoded type
     * @param address the server's address
     * @param method the method
     * @param request the request body (its remaining bytes are sent before this returns, unless it fails first)
     * @param reader decodes the response body, or null for the body as a {@code byte[]}
     * @param timeout bound on the whole call (enforced to about 10 ms)
     * @return what the reader returned, or the call's {@link RpcException}
     */
    @SuppressWarnings("unchecked")
    public <T> CompletableFuture<T> callAsync(String address, int method, ByteBuffer request,
                                              RpcResponseReader<T> reader, Duration timeout) {
        long t = timeout.toNanos();
        Pending p = new Pending(address, true, System.nanoTime() + t, t);
        p.reader = reader;
        CompletableFuture<T> f = (CompletableFuture<T>) (CompletableFuture<?>) p;   // no reader: byte[]
        try {
            send(p, method, request, null);
        } catch (RpcException e) {
            return f;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail(p, new RpcException("call to address=" + address + " interrupted while sending"));
        }
        // the reader thread's timeout scan covers it from now on
        return f;
    }

    private static RpcException asRpcException(Throwable t) {
        if (t instanceof RpcException) {
            return (RpcException) t;
        }
        return new RpcException(String.valueOf(t), t);
    }

    /**
     * Registers, connects and writes the request (a buffer, or a body writer); on failure the call is failed and
     * its exception thrown.
     */
    private void send(Pending p, int method, ByteBuffer request, RpcBody body)
        throws RpcException, InterruptedException {
        if (!running) {
            throw failNow(p, closed());
        }
        int length = body != null ? body.length() : request.remaining();
        if (length < 0 || length > config.maxMessageBytes()) {
            throw failNow(p, new RpcMessageTooLargeException("request to address=" + p.address + " is "
                + length + " bytes, more than " + RpcConfig.MAX_MESSAGE_BYTES_PROP + "="
                + config.maxMessageBytes() + " of client '" + name + "'; not sent", length,
                config.maxMessageBytes()));
        }
        ServerConn c = servers.computeIfAbsent(p.address, ServerConn::new);
        Link link;
        try {
            link = c.connect(p.deadline, p.timeoutNanos);
        } catch (RpcException e) {
            throw failNow(p, e);
        }
        PeerChannel peer = link.peer;
        p.peer = peer;
        ChannelWriter w = link.writer;
        register(p);
        if (!running) {
            fail(p, closed());
            throw closed();
        }
        try {
            if (body != null) {
                FrameSender.send(w, c.lock, RpcFrameDescriptor.KIND_REQUEST, method, p.callId, clientHi, clientLo,
                    body, p.deadline);
            } else {
                FrameSender.send(w, c.lock, RpcFrameDescriptor.KIND_REQUEST, method, p.callId, clientHi, clientLo,
                    request, p.deadline);
            }
        } catch (FrameSender.BodyFailed e) {
            throw failed(p, new RpcException("call id=" + p.callId + " to server '" + peer.name() + "' (address="
                + p.address + "): " + e.getMessage(), e.getCause() != null ? e.getCause() : e));
        } catch (ConnectionClosedException e) {
            throw failed(p, new RpcPeerException(peer.name(), "server '" + peer.name() + "' (address=" + p.address
                + ") lost before call id=" + p.callId + " was sent: " + e.getMessage(), e));
        } catch (RdmxTimeoutException e) {
            timedOut.increment();
            throw failed(p, new RpcTimeoutException("call id=" + p.callId + " to server '" + peer.name()
                + "' (address=" + p.address + ") not sent within its timeout of "
                + TimeUnit.NANOSECONDS.toMillis(p.timeoutNanos) + " ms: " + e.getMessage(), e));
        } catch (RdmxException e) {
            throw failed(p, new RpcPeerException(peer.name(), "call id=" + p.callId + " to server '" + peer.name()
                + "' not sent: " + e.getMessage(), e));
        } catch (InterruptedException e) {
            fail(p, new RpcException("call id=" + p.callId + " to address=" + p.address + " interrupted"));
            throw e;
        }
    }

    /**
     * Fails a call that could not be sent, unless another thread failed it first (the client closed, the
     * server was lost): then that first cause is the call's.
     *
     * @return the exception the call failed with
     */
    private RpcException failed(Pending p, RpcException e) {
        if (fail(p, e)) {
            return e;
        }
        try {
            p.getNow(null);
        } catch (java.util.concurrent.CompletionException | java.util.concurrent.CancellationException c) {
            return asRpcException(c instanceof java.util.concurrent.CompletionException ? c.getCause() : c);
        }
        return e;
    }

    private RpcException failNow(Pending p, RpcException e) {
        p.completeExceptionally(e);
        return e;
    }

    private RpcException closed() {
        return new RpcException("rpc client '" + name + "' is closed");
    }

    private void register(Pending p) throws RpcException {
        for (int i = 0; i <= mask; i++) {
            long id = ids.getAndIncrement() & Long.MAX_VALUE;
            p.callId = id;
            if (slots.compareAndSet((int) id & mask, null, p)) {
                p.registered = true;
                if (p.async && asyncOutstanding.incrementAndGet() == 1) {
                    LockSupport.unpark(readerThread);   // it reads (and scans deadlines) while async calls wait
                }
                return;
            }
        }
        throw failNow(p, new RpcException("rpc client '" + name + "' has " + (mask + 1) + " calls outstanding, the"
            + " most " + RpcConfig.MAX_OUTSTANDING_PROP + " allows; call to address=" + p.address + " refused"));
    }

    /** @return true if the call was sent to that server: only its answer is taken for the call's */
    private static boolean answersFor(Pending p, String server) {
        PeerChannel to = p.peer;
        return to != null && to.name().equals(server);
    }

    /**
     * Reader thread: takes out of the table the call a server's response answers. A response for a call id that
     * is not outstanding is late (counted in {@link #lateResponses()}); one for a call outstanding at another
     * server is foreign (counted in {@link #foreignResponses()}, logged once per server) and leaves the call
     * alone: call ids are matched with the peer a call was sent to, never by id alone.
     *
     * @param callId the response's call id
     * @param server the peer the response came from
     * @return the call, or null (dropped and counted)
     */
    private Pending take(long callId, String server) {
        int i = (int) callId & mask;
        Pending p = slots.get(i);
        if (p == null || p.callId != callId) {
            lateResponses.increment();
            return null;
        }
        if (!answersFor(p, server)) {
            if (foreignResponses.sum() == 0 || LOG.isDebugEnabled()) {
                LOG.warn("rpc client '{}': server '{}' answered call id={}, which was sent to '{}': dropped", name,
                    server, callId, p.peer == null ? p.address : p.peer.name());
            }
            foreignResponses.increment();
            return null;
        }
        Pending t = take(callId);
        if (t == null) {
            lateResponses.increment(); // its caller gave up on it meanwhile
        }
        return t;
    }

    /** Takes a call out of the table (the one thread that does so completes it). */
    private Pending take(long callId) {
        int i = (int) callId & mask;
        Pending p = slots.get(i);
        if (p == null || p.callId != callId || !slots.compareAndSet(i, p, null)) {
            return null;
        }
        if (p.async) {
            asyncOutstanding.decrementAndGet();
        }
        return p;
    }

    /**
     * Fails a call if no other thread completes it: the one that takes it out of the table completes it; a call
     * that never got into the table is its caller's alone.
     */
    private boolean fail(Pending p, RpcException e) {
        if (p.registered) {
            if (!slots.compareAndSet((int) p.callId & mask, p, null)) {
                return false;
            }
            if (p.async) {
                asyncOutstanding.decrementAndGet();
            }
        }
        boolean done = p.completeExceptionally(e);
        wake(p);
        return done;
    }

    private static void wake(Pending p) {
        Thread t = p.waiter;
        if (t != null && t != Thread.currentThread()) {   // a caller that read its own response is awake
            LockSupport.unpark(t);
        }
    }

    private void expire(Pending p) {
        PeerChannel peer = p.peer;
        if (fail(p, new RpcTimeoutException("call id=" + p.callId + " to server '" + (peer == null ? p.address
            : peer.name()) + "' (address=" + p.address + ") got no answer within its timeout of "
            + TimeUnit.NANOSECONDS.toMillis(p.timeoutNanos) + " ms"))) {
            timedOut.increment();
        }
    }

    /**
     * The reader thread: reads while asynchronous calls wait and no synchronous caller does (it hands the role to
     * one that queues); otherwise it sleeps until an asynchronous call is made or a reader leaves them behind.
     */
    private void readLoop() {
        while (running) {
            if (asyncOutstanding.get() > 0 && role.tryTake()) {
                try {
                    while (running && asyncOutstanding.get() > 0 && role.followers() == 0) {
                        readOnce(IDLE_READ_NANOS);
                        if (!engine.isOpen()) {
                            return;
                        }
                    }
                } catch (InterruptedException e) {
                    return;
                } finally {
                    release();      // to a caller that queued meanwhile, which reads for every call from then on
                }
                continue;
            }
            long idle = System.nanoTime();
            LockSupport.parkNanos(this, IDLE_READ_NANOS);
            if (Thread.interrupted() && !running) {
                return;
            }
            // idle a whole period with nobody reading: drain what came anyway (late answers, counted and
            // dropped; a lost server's failure), without blocking, so they do not sit in the ring
            if (running && System.nanoTime() - idle >= IDLE_READ_NANOS && role.tryTake()) {
                try {
                    readOnce(0);
                } catch (InterruptedException e) {
                    return;
                } finally {
                    release();
                }
            }
        }
    }

    /**
     * The thread holding the reader role: one read of the engine's worker 0 (blocking up to {@code maxNanos}, or
     * the timeout scan's period while asynchronous calls are outstanding), then the scan of asynchronous calls'
     * deadlines when due.
     */
    private void readOnce(long maxNanos) throws InterruptedException {
        ChannelReader reader = engine.reader(0);
        try {
            reader.read(onRecord, 64, asyncOutstanding.get() > 0 ? Math.min(TIMEOUT_SCAN_NANOS, maxNanos)
                : maxNanos, TimeUnit.NANOSECONDS);
        } catch (ConnectionClosedException e) {
            serverLost(e.peer(), e);
        } catch (RdmxException e) {
            if (!engine.isOpen()) {
                failAll("the channel engine of node '" + name + "' closed");
                return;
            }
            LOG.warn("rpc client '{}': reading responses failed: {}", name, e.getMessage());
        }
        long now = System.nanoTime();
        if (asyncOutstanding.get() > 0 && now - nextScan >= 0) {
            nextScan = now + TIMEOUT_SCAN_NANOS;
            for (int i = 0; i <= mask; i++) {
                Pending p = slots.get(i);
                if (p != null && p.async && now - p.deadline >= 0) {
                    expire(p);
                }
            }
        }
    }

    /** Reader thread: one record. */
    private void onRecord(int stream, ByteBuffer buf, int off, int len, RecordSource src) {
        String server = src.peerName();
        ServerState st = states.get(server);
        PeerChannel via = src.peerChannel();
        if (st == null || via != null && st.via != via) {
            if (st != null) {
                st.assembler.clear(); // the server's earlier channel: what it left half-sent is gone with it
            }
            st = new ServerState(server, via);
            states.put(server, st);
        }
        if (st.refused) {
            return;
        }
        try {
            if (stream != RpcFrameDescriptor.STREAM_ID) {
                throw new RpcProtocolException(server, "malformed RPC frame from peer '" + server + "': stream id="
                    + stream + " (expected " + RpcFrameDescriptor.STREAM_ID + ")");
            }
            st.assembler.onFrame(buf, off, len, st);
        } catch (RpcProtocolException e) {
            st.refused = true;
            st.assembler.clear();
            LOG.warn("rpc client '{}' refuses server '{}' and closes its connection: {}", name, server,
                e.getMessage());
            failCallsTo(server, e, false);
            RpcServer.closeConnection(engine, server);
        }
    }

    /** Reader thread: a server's channel failed; fails the calls outstanding on that channel. */
    private void serverLost(String server, ConnectionClosedException e) {
        ServerState st = states.get(server);
        // the loss may be told after records of a new channel to a server restarted under that name: its state stays
        if (st != null && (st.via == null || !st.via.isOpen())) {
            states.remove(server);
            st.assembler.clear();
        }
        failCallsTo(server, new RpcPeerException(server, "server '" + server + "' lost: " + e.getMessage(), e), true);
    }

    private void failCallsTo(String server, RpcPeerException e, boolean onlyClosed) {
        for (int i = 0; i <= mask; i++) {
            Pending p = slots.get(i);
            PeerChannel peer = p == null ? null : p.peer;
            if (peer != null && server.equals(peer.name()) && !(onlyClosed && peer.isOpen())) {
                RpcPeerException x = e instanceof RpcProtocolException ? e
                    : new RpcPeerException(server, "call id=" + p.callId + " failed: " + e.getMessage(), e.getCause());
                fail(p, x);
            }
        }
    }

    private void failAll(String why) {
        for (int i = 0; i <= mask; i++) {
            Pending p = slots.get(i);
            if (p != null) {
                PeerChannel peer = p.peer;
                fail(p, new RpcException("call id=" + p.callId + " to server '" + (peer == null ? p.address
                    : peer.name()) + "' failed: " + why + " with the call outstanding"));
            }
        }
    }

    /**
     * Fails every outstanding call ("rpc client closed with the call outstanding", naming call and server),
     * stops the reader thread (bounded wait). Later calls fail at once. Idempotent. The engine stays open.
     */
    @Override
    public void close() {
        if (!running) {
            return;
        }
        running = false;
        engine.reader(0).wakeup();
        LockSupport.unpark(readerThread);
        try {
            readerThread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        failAll("rpc client '" + name + "' closed");
    }
}
