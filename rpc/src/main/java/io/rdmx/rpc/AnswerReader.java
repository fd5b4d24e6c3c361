package io.rdmx.rpc;

import io.rdmx.channel.ChannelEngine;
import io.rdmx.channel.ChannelReader;
import io.rdmx.channel.PeerChannel;
import io.rdmx.channel.RecordHandler;
import io.rdmx.channel.RecordSource;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.internal.WaitLoop;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the answers (responses and errors) to an {@link RpcClient}'s calls from the engine's worker 0, reassembles
 * them per server and completes each call from the {@link CallTable}, decoding a response with the call's
 * {@link RpcResponseReader} (in place in the ring when it came in one record).
 *
 * <p>Who reads: a calling thread waiting for its own answer takes the {@link ReaderRole} when it is free and holds it
 * until its call is done, completing the calls of others it meets on the way; a caller that finds the role taken
 * queues itself and sleeps until the reading thread completes its call or, leaving first, hands it the role. The
 * reader thread ({@code rdmx-rpc-client-<node>}) reads only while asynchronous calls wait and no caller does, and
 * drains the ring when nobody read for a while. Whoever holds the role also scans the asynchronous calls' deadlines.
 *
 * <p>Fields marked "the role's holder" are touched only by the thread holding the reader role (ordered by the
 * role's flag: see {@link ReaderRole}).
 */
final class AnswerReader {
    private static final Logger LOG = LoggerFactory.getLogger(RpcClient.class);
    private static final long IDLE_READ_NANOS = TimeUnit.MILLISECONDS.toNanos(200);
    private static final long TIMEOUT_SCAN_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /** A blocking caller's wait ({@link CallerWait#check}): its call is done. */
    private static final int DONE = 0;
    /** A blocking caller's wait: it took the reader role (handed it, or found it free), and reads. */
    private static final int READ = 1;
    /**
     * Each calling thread's wait loop (core's one wait loop: one waiting thread at a time, woken from any), kept
     * for the thread's next calls, of any client: a wake-up meant for an earlier call only makes it check again.
     */
    private static final ThreadLocal<WaitLoop> WAITS = ThreadLocal.withInitial(() -> new WaitLoop(AnswerReader.class));

    private final ChannelEngine engine;
    private final String name;
    private final int maxMessageBytes;
    private final CallTable table;
    private final BooleanSupplier running;
    /** Who reads worker 0 now: a calling thread waiting for its own response, or the reader thread. */
    private final ReaderRole<PendingCall> role = new ReaderRole<>();
    /** The role's holder: each server's reassembly. */
    private final Map<String, ServerState> states = new HashMap<>();
    /** The role's holder: when the asynchronous calls' deadlines are scanned next. */
    private long nextScan = System.nanoTime() + TIMEOUT_SCAN_NANOS;
    private final RecordHandler onRecord = this::onRecord;
    private final LongAdder callerReads = new LongAdder();
    private final Thread readerThread;

    /** The role's holder: a server's reassembly, for one channel to it. */
    private final class ServerState implements Assembler.Sink {
        final String server;
        /** The channel this state reassembles (a server restarted under the same name gets a state of its own). */
        final PeerChannel via;
        final Assembler assembler;
        boolean refused;

        ServerState(String server, PeerChannel via) {
            this.server = server;
            this.via = via;
            this.assembler = new Assembler(server, maxMessageBytes, false);
        }

        @Override
        public void message(int kind, int method, long callId, long hi, long lo, byte[] body) {
            PendingCall p = table.take(callId, server);
            if (p == null) {
                return;
            }
            if (kind == RpcFrameDescriptor.KIND_RESPONSE) {
                if (p.reader == null) {
                    p.complete(body);
                } else {
                    decode(p, ByteBuffer.wrap(body), server);
                }
            } else {
                String[] e = RpcFrameDescriptor.parseError(body);
                p.completeExceptionally(e != null ? new RemoteRpcException(server, e[0], e[1])
                    : new RpcProtocolException(server, "malformed RPC frame from peer '" + server + "': ERROR body"
                        + " of call id=" + callId + " (length=" + body.length + ") has no class name"));
            }
            CallTable.wake(p);
        }

        @Override
        public boolean inPlace(int kind, long callId, ByteBuffer b, int at, int n) {
            if (kind != RpcFrameDescriptor.KIND_RESPONSE || table.decoding(callId, server) == null) {
                return false;                 // no reader: the body as an array (or a late or foreign one, dropped)
            }
            PendingCall p = table.take(callId, server);
            if (p == null) {
                return false;
            }
            decode(p, b.duplicate().limit(at + n).position(at), server);
            CallTable.wake(p);
            return true;
        }

        @Override
        public void tooLarge(int kind, int method, long callId, long size, long limit, String what) {
            PendingCall p = table.take(callId, server);
            if (p == null) {
                return;
            }
            p.completeExceptionally(new RpcMessageTooLargeException("response of call id=" + callId + " from server '"
                + server + "' is " + size + " bytes, more than " + what + "=" + limit + " of client '" + name + "'",
                size, limit));
            CallTable.wake(p);
        }
    }

    /**
     * @param engine the engine whose worker 0 this reads
     * @param name the client's node name
     * @param maxMessageBytes the largest answer reassembled
     * @param table the calls the answers complete
     * @param running false once the client is closed
     */
    AnswerReader(ChannelEngine engine, String name, int maxMessageBytes, CallTable table, BooleanSupplier running) {
        this.engine = engine;
        this.name = name;
        this.maxMessageBytes = maxMessageBytes;
        this.table = table;
        this.running = running;
        this.readerThread = new Thread(this::readLoop, "rdmx-rpc-client-" + name);
        this.readerThread.setDaemon(true);
    }

    /** Starts the reader thread. */
    void start() {
        readerThread.start();
    }

    /** Asynchronous calls wait: the reader thread reads for them unless a caller does. */
    void asyncWaiting() {
        LockSupport.unpark(readerThread);
    }

    /** @return times a calling thread took the reader role to read its own response */
    long callerReads() {
        return callerReads.sum();
    }

    /** @return calling threads waiting (queued) while another thread reads */
    int followers() {
        return role.followers();
    }

    /**
     * A blocking caller's wait for its answer, in its thread's {@link WaitLoop}: it ends when the call is done or
     * the caller takes the reader role (handed to it by a leaving reader, or found free). Before it sleeps the
     * caller queues itself as a follower ({@link #prepare}), and the loop checks once more: a reader that leaves
     * after that check finds it in the queue and wakes it (see {@link ReaderRole}).
     */
    private final class CallerWait implements WaitLoop.Waiting<InterruptedException> {
        private final PendingCall p;

        CallerWait(PendingCall p) {
            this.p = p;
        }

        @Override
        public int check() throws InterruptedException {
            if (p.isDone()) {
                return DONE;
            }
            if (Thread.interrupted()) {
                throw new InterruptedException(waiter());
            }
            return running.getAsBoolean() && role.tryTake() ? READ : WaitLoop.NOT_YET;
        }

        @Override
        public boolean prepare() {
            if (p.queued) {
                return false;
            }
            // queued before the role is looked at again: a reader that leaves after this finds it in the queue and
            // hands it the role; a hand-off that woke it and found the role taken by another thread is over
            // (follow resets it)
            p.queued = true;
            role.follow(p);
            return true;
        }

        @Override
        public String waiter() {
            return "rpc call id=" + p.callId + " to address=" + p.address;
        }
    }

    /**
     * The calling thread: reads its own response from the ring when no other thread reads (it then completes any
     * other call whose response it meets), else sleeps until the reading thread completes the call, the reader
     * role is handed to it or free again, or the deadline passes.
     *
     * @return the call's result
     */
    Object await(PendingCall p) throws RpcException, InterruptedException {
        WaitLoop loop = WAITS.get();
        CallerWait w = new CallerWait(p);
        p.wait = loop; // before the first check: a completion or hand-off after it wakes this loop
        try {
            while (!p.isDone()) {
                if (p.deadline - System.nanoTime() <= 0) {
                    table.expire(p);
                    break;
                }
                int r;
                try {
                    r = loop.await(w, p.deadline, 0, 0);
                } catch (InterruptedException e) {
                    interrupted(p);
                    throw e;
                }
                if (r == READ) {
                    role.took(p); // out of the queue; a hand-off that brought it here is taken
                    callerReads.increment();
                    try {
                        readFor(p);
                    } finally {
                        release();
                    }
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
        return p.result();
    }

    /**
     * A blocking caller interrupted while it waits: fails its call, or, when another thread has taken the call out
     * of the table and completes it, gives up on it, so that a result decoded for it goes to the reader's
     * {@link RpcResponseReader#discard} (nobody will read it).
     *
     * @throws InterruptedException always
     */
    private void interrupted(PendingCall p) throws InterruptedException {
        if (!table.fail(p, new RpcException("call id=" + p.callId + " to address=" + p.address + " interrupted"))
            && !p.completeExceptionally(new CancellationException("rpc call id=" + p.callId + " interrupted"))
            && p.reader != null && !p.isCompletedExceptionally()) {
            // completed just now: this thread discards what it will not return
            discardResult(p, p.getNow(null), p.address);
        }
        throw new InterruptedException("rpc call id=" + p.callId + " to address=" + p.address);
    }

    /**
     * The role's holder: the call's reader decodes its response; its failure, an {@link Error} included, fails the
     * call, naming the server (the call was taken from the table: nothing else would ever complete it, and its
     * caller would wait past its timeout).
     */
    private void decode(PendingCall p, ByteBuffer body, String server) {
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

    /** A result the call's future did not take (see {@link RpcResponseReader#discard}): given back, once. */
    @SuppressWarnings("unchecked")
    private void discardResult(PendingCall p, Object v, String server) {
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
    private void readFor(PendingCall p) throws InterruptedException {
        while (!p.isDone() && running.getAsBoolean()) {
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
     * Gives the reader role back to the caller that waited longest (one wake-up of its wait loop; it reads its own
     * response from then on), else, while asynchronous calls wait, to the reader thread.
     */
    private void release() {
        PendingCall next = role.handOff();
        if (next != null) {
            next.wait.wake();
        } else if (table.asyncOutstanding() > 0) {
            LockSupport.unpark(readerThread);
        }
    }

    /**
     * The reader thread: reads while asynchronous calls wait and no synchronous caller does (it hands the role to
     * one that queues); otherwise it sleeps until an asynchronous call is made or a reader leaves them behind.
     */
    private void readLoop() {
        while (running.getAsBoolean()) {
            if (table.asyncOutstanding() > 0 && role.tryTake()) {
                try {
                    while (running.getAsBoolean() && table.asyncOutstanding() > 0 && role.followers() == 0) {
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
            long reads = callerReads.sum();
            LockSupport.parkNanos(this, IDLE_READ_NANOS);
            if (Thread.interrupted() && !running.getAsBoolean()) {
                return;
            }
            // idle a whole period with nobody reading (no caller took the role meanwhile: callers read the ring
            // themselves, and a drain between two of their calls would make the next one wait for it): drain what
            // came anyway (late answers, counted and dropped; a lost server's failure), without blocking, so they
            // do not sit in the ring
            if (running.getAsBoolean() && System.nanoTime() - idle >= IDLE_READ_NANOS && callerReads.sum() == reads
                && role.tryTake()) {
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
     * The role's holder: one read of the engine's worker 0 (blocking up to {@code maxNanos}, or the timeout scan's
     * period while asynchronous calls are outstanding), then the scan of asynchronous calls' deadlines when due.
     */
    private void readOnce(long maxNanos) throws InterruptedException {
        ChannelReader reader = engine.reader(0);
        try {
            reader.read(onRecord, 64, table.asyncOutstanding() > 0 ? Math.min(TIMEOUT_SCAN_NANOS, maxNanos)
                : maxNanos, TimeUnit.NANOSECONDS);
        } catch (ConnectionClosedException e) {
            serverLost(e.peer(), e);
        } catch (RdmxException e) {
            if (!engine.isOpen()) {
                table.failAll("the channel engine of node '" + name + "' closed");
                return;
            }
            LOG.warn("rpc client '{}': reading responses failed: {}", name, e.getMessage());
        }
        long now = System.nanoTime();
        if (table.asyncOutstanding() > 0 && now - nextScan >= 0) {
            nextScan = now + TIMEOUT_SCAN_NANOS;
            table.expireDue(now);
        }
    }

    /** The role's holder: one record. */
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
            table.failCallsTo(server, e, false);
            RpcServer.closeConnection(engine, server);
        }
    }

    /** The role's holder: a server's channel failed; fails the calls outstanding on that channel. */
    private void serverLost(String server, ConnectionClosedException e) {
        ServerState st = states.get(server);
        // the loss may be told after records of a new channel to a server restarted under that name: its state stays
        if (st != null && (st.via == null || !st.via.isOpen())) {
            states.remove(server);
            st.assembler.clear();
        }
        table.failCallsTo(server, new RpcPeerException(server, "server '" + server + "' lost: " + e.getMessage(), e),
            true);
    }

    /** The client closed: wakes whoever reads and waits (bounded) for the reader thread to end. */
    void close() {
        engine.reader(0).wakeup();
        LockSupport.unpark(readerThread);
        try {
            readerThread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
