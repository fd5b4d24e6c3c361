package io.rdmx.channel;

import io.rdmx.transport.Completion;
import io.rdmx.transport.Connection;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Node;
import io.rdmx.transport.PeerNotListeningException;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RdmxTimeoutException;
import io.rdmx.transport.capability.InputFollowing;
import io.rdmx.transport.internal.SafeLog;
import io.rdmx.spi.Platform;
import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * The ring-channel protocol on one node (the DAIS 2016 shuffling middleware's communication layer): a circular
 * buffer per pair of workers of every pair of nodes, filled by one-sided WRITEs, announced by notifications
 * (a batched SEND, or the immediate of a WRITE_WITH_IMM), freed by batched credits.
 *
 * <p>One network thread per engine sleeps on the node's completion channel, handles completions and
 * notifications, posts the WRITEs that were due while another was in flight, flushes data that waited longer
 * than {@link ChannelConfig#flushInterval()}, and wakes blocked workers. Where a connection delivers its
 * completions inline ({@code InlineCompletions}: tcp), its I/O thread does all of that but the
 * flush scan, and the network thread is not on the path of the data. Worker threads never wait for it:
 * they post their own WRITEs and notifications when nothing is in flight. The engine is the only consumer of
 * the node's completion queue.
 */
public final class ChannelEngine implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ChannelEngine.class);
    /** Pause after the first connect attempt that found nothing listening. */
    public static final Duration FIRST_BACKOFF = Duration.ofMillis(10);
    /** Longest pause between connect attempts (the pause doubles up to it). */
    public static final Duration MAX_BACKOFF = Duration.ofMillis(200);
    /**
     * Without a network thread ({@link ChannelConfig#engineThread()} false): the longest a blocked reader, writer
     * or handshake sleeps between two runs of {@link #doWork()}.
     */
    public static final long AGENT_SLEEP_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** Nodes with an open engine (by identity; weak, so a node dropped without closing its engine is freed). */
    private static final Set<Node> WITH_ENGINE = Collections.newSetFromMap(new WeakHashMap<>());

    private final Node node;
    private final ChannelConfig config;
    private final ChannelReader[] readers;
    private final Map<Integer, PeerChannel> peers = new ConcurrentHashMap<>();
    private final Map<Connection, PeerChannel> byConnection = new ConcurrentHashMap<>();
    /** The only peer's leader/follower input, or null (none, several, or not offered): a reader reads it itself. */
    private volatile InputFollowing solePeer;
    private final AtomicInteger ids = new AtomicInteger();
    /** The network thread, or null without one ({@link ChannelConfig#engineThread()}). */
    private final Thread network;
    private final io.rdmx.transport.CompletionHandler onCompletion = this::onCompletion;
    /** One thread at a time runs the duty cycle (the completion queue has one consumer at a time). */
    private final java.util.concurrent.locks.ReentrantLock duty = new java.util.concurrent.locks.ReentrantLock();
    /** Nanos between flush scans (half the flush interval), and when the last one ran (under {@link #duty}). */
    private final long scanNanos;
    /**
     * System property: the longest sleep, in milliseconds, of a channel engine's network thread when it has nothing
     * to do (no writer has data waiting for a flush scan, or the flush interval is 0); it wakes at once for a
     * completion, a commit that leaves data unposted, or a deferred failure. Default 50, 1 to 60000. Read when an
     * engine opens.
     */
    public static final String IDLE_WAIT_PROP = "rdmx.channel.idleWaitMillis";
    /** Default of {@link #IDLE_WAIT_PROP}. */
    public static final long IDLE_WAIT_DEFAULT_MILLIS = 50;
    /** {@link #IDLE_WAIT_PROP}, in nanoseconds. */
    private final long idleWaitNanos;
    private long lastScan = System.nanoTime();
    /**
     * Whether the network thread stops scanning while no writer has unposted data ({@link EngineIdle}): with a
     * network thread, a flush interval, and a node queue that can be kicked.
     */
    private final boolean idleWatch;
    private final EngineIdle idle = new EngineIdle();
    private final java.util.concurrent.atomic.AtomicLong kicks = new java.util.concurrent.atomic.AtomicLong();
    /** Ring memory (pair regions) held for peers now, against {@link ChannelConfig#maxRingMemory()}. */
    final RingMemory ringMemory;
    private final java.util.function.BooleanSupplier unposted = this::anyUnposted;
    /** Under {@link #duty}: whether the last {@link #housekeeping} ran a flush scan. */
    private boolean scanned;
    /** Takes the node's incoming connections ({@link #accept}). */
    private final ChannelAcceptor acceptor;
    private volatile boolean running = true;
    /** Why this engine closes ({@link #close(String)}), told to every peer in its BYE; null for no reason. */
    private volatile String closeReason;
    /** Completions the network thread took from the node's queue (written by it only; read by tests). */
    private volatile long queuedCompletions;
    /** A peer's handshake failed to post because its connection went down: the network thread fails it. */
    private volatile boolean startFailures;

    /** The engine's counters (JMX, {@link #metrics()}); any thread counts. */
    final ChannelCounters counters = new ChannelCounters(peers.values());

    private ChannelEngine(Node node, ChannelConfig config) {
        this.node = node;
        this.config = config;
        this.readers = new ChannelReader[config.workers()];
        for (int i = 0; i < readers.length; i++) {
            readers[i] = new ChannelReader(this, i);
        }
        this.scanNanos = config.flushInterval().isZero() ? Long.MAX_VALUE
            : Math.max(config.flushInterval().toNanos() / 2, 50_000);
        this.idleWaitNanos = TimeUnit.MILLISECONDS.toNanos(idleWaitMillis());
        this.idleWatch = config.engineThread() && !config.flushInterval().isZero()
            && node.completionQueue().kicks();
        if (config.engineThread()) {
            this.network = new Thread(this::run, "rdmx-channel-" + node.name());
            this.network.setDaemon(true);
        } else {
            this.network = null;
        }
        this.acceptor = new ChannelAcceptor(this);
        this.ringMemory = new RingMemory(node.name(), config.maxRingMemory());
        counters.export(node.name());
    }

    /**
     * Starts an engine on a node; the engine becomes the node's completion-queue consumer.
     *
     * @param node an open node without an engine (a second engine would compete with the first for the
     *             node's completions and connections)
     * @param config the configuration
     * @return the engine
     * @throws IllegalStateException if an open engine already runs on the node (names the node)
     */
    public static ChannelEngine open(Node node, ChannelConfig config) {
        synchronized (WITH_ENGINE) {
            if (!WITH_ENGINE.add(node)) {
                throw new IllegalStateException("node '" + node.name() + "' (address=" + node.address()
                    + ") already has an open channel engine: one engine per node (it is the only consumer of the"
                    + " node's completion queue and accepts its connections); close that engine first");
            }
        }
        ChannelEngine e;
        try {
            e = new ChannelEngine(node, config);
        } catch (RuntimeException | Error t) {
            release(node);
            throw t;
        }
        if (e.network != null) {
            e.network.start();
        }
        e.acceptor.start();
        return e;
    }

    private static void release(Node node) {
        synchronized (WITH_ENGINE) {
            WITH_ENGINE.remove(node);
        }
    }

    /** @return the node */
    public Node node() {
        return node;
    }

    /** @return the configuration */
    public ChannelConfig config() {
        return config;
    }

    /** @return true until closed */
    public boolean isOpen() {
        return running;
    }

    /**
     * Connects to a node's engine (or returns the existing channel to it) and completes the channel handshake.
     * While nothing listens at the address yet ({@link PeerNotListeningException}: the peer node is not open,
     * refuses, or its address does not exist) the connect is tried again, after {@link #FIRST_BACKOFF} doubling
     * up to {@link #MAX_BACKOFF}, until the timeout; so nodes may be started in any order. Other failures are
     * not retried.
     *
     * @param address the peer node's address
     * @param timeout bound on connect (retries included) and handshake
     * @return the peer
     * @throws RdmxException on failure or timeout (names the peer's address and, on timeout, the last cause)
     */
    public PeerChannel connect(String address, Duration timeout) throws RdmxException {
        long deadline = System.nanoTime() + timeout.toNanos();
        long backoff = FIRST_BACKOFF.toNanos();
        int attempts = 0;
        PeerNotListeningException last = null;
        while (true) {
            Connection c;
            try {
                attempts++;
                c = node.connect(address, Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
            } catch (PeerNotListeningException e) {
                last = e;
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw nobodyListened(address, timeout, attempts, last);
                }
                backOff(address, Math.min(backoff, left));
                backoff = Math.min(backoff * 2, MAX_BACKOFF.toNanos());
                continue;
            } catch (RdmxTimeoutException e) {
                // an attempt that ran out of time after earlier ones found nothing listening: report those
                if (last != null) {
                    throw nobodyListened(address, timeout, attempts, last);
                }
                throw e;
            }
            return peerFor(c).awaitReady(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
        }
    }

    private RdmxTimeoutException nobodyListened(String address, Duration timeout, int attempts,
                                                PeerNotListeningException last) {
        RdmxTimeoutException t = new RdmxTimeoutException("connect from '" + node.name() + "' to address="
            + address + ": no node listened there within " + timeout.toMillis() + " ms (" + attempts
            + " attempts; the cause is the last one's failure)");
        t.initCause(last);
        return t;
    }

    /** Waits between two connect attempts; a method of its own so tests can see a connect retrying. */
    private void backOff(String address, long nanos) throws RdmxException {
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RdmxException("connect from '" + node.name() + "' to address=" + address
                + " interrupted while waiting for the peer node to listen");
        }
        if (!running) {
            throw new RdmxException("channel engine of node '" + node.name() + "' closed while connecting to address="
                + address);
        }
    }

    /** @return the leader/follower input of this engine's only peer's connection, or null (none yet, or several) */
    InputFollowing solePeer() {
        return solePeer;
    }

    /**
     * The next peer that connected to this node (peers are accepted and their handshakes run in the
     * background, so a connecting peer never waits for this call).
     *
     * @param timeout bound on the wait for a peer; a peer taken within it then has the rest of it, but at least
     *     the node's handshake timeout ({@code rdmx.handshakeTimeoutMs}), to finish its channel handshake, so a
     *     caller polling with a short timeout does not fail a peer whose handshake is on its way
     * @return the peer, handshake complete
     * @throws RdmxException on failure or timeout
     * @throws InterruptedException if interrupted
     */
    public PeerChannel accept(Duration timeout) throws RdmxException, InterruptedException {
        return acceptor.next(timeout);
    }

    /**
     * The peer of a connection: the existing one, or a new one whose handshake starts now.
     *
     * @param c the connection
     * @return its peer
     * @throws RdmxException if the engine is closed
     */
    PeerChannel peerFor(Connection c) throws RdmxException {
        if (!running) {
            throw new RdmxException("channel engine of node '" + node.name() + "' is closed");
        }
        synchronized (byConnection) {
            PeerChannel p = byConnection.get(c);
            if (p != null) {
                return p;
            }
            int id = ids.incrementAndGet();
            p = new PeerChannel(this, id, c);
            peers.put(id, p);
            byConnection.put(c, p);
            solePeer = peers.size() == 1 ? c.capability(InputFollowing.class).orElse(null) : null;
            try {
                p.start();
            } catch (ConnectionClosedException e) {
                // the connection went down while the handshake was being posted: what the peer sent before (a
                // HELLO that tells a configuration mismatch, say) is still in the completion queue, so the
                // network thread fails the peer once it has handled that, not this thread now
                p.deferStartFailure(e);
                startFailures = true;
            } catch (RdmxException e) {
                p.fail(e);
            }
            return p;
        }
    }

    /**
     * The reader of a local worker.
     *
     * @param worker 0..workers-1
     * @return its reader
     */
    public ChannelReader reader(int worker) {
        if (worker < 0 || worker >= readers.length) {
            throw new IllegalArgumentException("worker=" + worker + " out of range [0, " + readers.length + ")");
        }
        return readers[worker];
    }

    private void run() {
        Platform.hooks().bindCurrentThread("network", node.fabric().name(), node.address());
        // see CompletionQueue.neverFollow: on shm, following the input would cost a wake-up per completion
        node.completionQueue().neverFollow(Thread.currentThread());
        long waitNanos = config.flushInterval().isZero() ? idleWaitNanos : scanNanos;
        while (running) {
            try {
                node.completionQueue().await(onCompletion, 256, waitNanos, TimeUnit.NANOSECONDS);
                idle.awake();
                duty.lock();
                try {
                    housekeeping();
                } finally {
                    duty.unlock();
                }
                if (idleWatch) {
                    // right after a scan, if no writer committed anything for a whole scan interval and none has
                    // data waiting: sleep until a completion, or a writer's commit that leaves data unposted
                    // (EngineIdle), instead of scanning every half flush interval for nothing. A busy writer keeps
                    // the scans (and costs no kicks); woken, the thread scans again within the interval
                    waitNanos = scanned && !startFailures && !anyActive() && idle.goIdle(unposted) ? idleWaitNanos
                        : scanNanos;
                }
            } catch (RdmxException e) {
                nodeClosed(e);
                return;
            } catch (InterruptedException e) {
                return;
            } catch (Throwable e) {
                // a peer's own failures are caught around its work (onCompletion, housekeeping): this is the
                // engine's; the thread goes on, as every peer depends on it
                SafeLog.error(LOG, "channel engine of node '" + node.name() + "': unexpected error", e);
            }
        }
    }

    /**
     * Runs one peer's part of the network thread's work; whatever it throws (a {@link LinkageError} from a
     * handler or a log call included) fails that peer alone, and the thread goes on with the others.
     *
     * @param p the peer
     * @param work its work
     */
    private static void forPeer(PeerChannel p, Runnable work) {
        try {
            work.run();
        } catch (Throwable e) {
            failPeer(p, e);
        }
    }

    /**
     * Fails a peer whose work threw on an I/O or network thread; never throws.
     *
     * @param p the peer
     * @param e what its work threw
     */
    static void failPeer(PeerChannel p, Throwable e) {
        try {
            p.fail(new ConnectionClosedException(p.name(), "handling the channel to '" + p.name()
                + "' failed: " + e, e));
        } catch (Throwable failing) {
            SafeLog.error(LOG, "failing the channel to '" + p.name() + "' after " + e + " failed too", failing);
        }
    }

    /**
     * One duty cycle of the engine, without blocking: handles the completions waiting in the node's queue (each
     * may wake a reader or writer, post a WRITE that was due, re-post a receive), fails peers whose start failed,
     * and flushes data that waited longer than the flush interval. The network thread runs it in a loop; without
     * one ({@link ChannelConfig#engineThread()} false) the application's threads do, as an agent's duty cycle
     * (Aeron-style), and blocked readers, writers and handshakes of this engine run it themselves. One thread at
     * a time: a call while another runs returns 0 at once.
     *
     * @return the work done (completions handled, peers failed, scans run): 0 when there was nothing to do
     * @throws RdmxException if the node closed under the engine (every peer is failed first)
     */
    public int doWork() throws RdmxException {
        if (!running || !duty.tryLock()) {
            return 0;
        }
        try {
            int n = node.completionQueue().poll(onCompletion, 256);
            if (n == 0 && !node.isOpen()) {
                RdmxException e = new RdmxException("node '" + node.name() + "' is closed");
                nodeClosed(e);
                throw e;
            }
            return n + housekeeping();
        } finally {
            duty.unlock();
        }
    }

    /**
     * Any thread: a peer deferred a failure (its connection went down while it posted): the duty cycle applies it
     * once the completions queued before it are handled.
     */
    void deferFailures() {
        startFailures = true;
        kickIfIdle();
    }

    /**
     * A writer whose commit left unposted data where there was none, or any thread with work for the duty cycle:
     * wakes the network thread if it sleeps with no scan due ({@link EngineIdle}). A full fence and a volatile
     * read; a system call only when the thread is idle.
     */
    void kickIfIdle() {
        if (idleWatch && idle.wakeIfIdle()) {
            kicks.incrementAndGet();
            node.completionQueue().kick();
        }
    }

    /** @return how often a writer or a deferred failure woke the idle network thread (tests, diagnostics) */
    long idleKicks() {
        return kicks.get();
    }

    /**
     * @return {@link #IDLE_WAIT_PROP}
     * @throws IllegalArgumentException naming the property and the value if it is not a number from 1 to 60000
     */
    static long idleWaitMillis() {
        return io.rdmx.transport.internal.SystemProperties.longInRange(IDLE_WAIT_PROP, IDLE_WAIT_DEFAULT_MILLIS, 1,
            60_000, "milliseconds");
    }

    /** @return true if this engine's network thread stops scanning while no writer has unposted data */
    boolean idleWatch() {
        return idleWatch;
    }

    /** @return true while the network thread sleeps with no scan due (tests) */
    boolean networkIdle() {
        return idle.idle();
    }

    /** Network thread, right after a scan: whether a writer committed since the scan before, or has unposted data. */
    private boolean anyActive() {
        return anyRings(RingSet::anyActive);
    }

    /** Network thread: whether some writer has committed data not yet posted (a scan would have work). */
    private boolean anyUnposted() {
        return anyRings(RingSet::anyUnposted);
    }

    /** @return true if the rings of some peer (that has them yet) answer yes */
    private boolean anyRings(java.util.function.Predicate<RingSet> test) {
        for (PeerChannel p : peers.values()) {
            RingSet r = p.rings();
            if (r != null && test.test(r)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Under {@link #duty}: deferred failures once the node's queue is drained (what the peer sent before its
     * connection went, a BYE say, is handled first), and a flush scan when one is due.
     */
    private int housekeeping() {
        int n = 0;
        if (startFailures && node.completionQueue().size() == 0) {
            startFailures = false;
            for (PeerChannel p : peers.values()) {
                forPeer(p, p::applyStartFailure);
            }
            n++;
        }
        long now = System.nanoTime();
        scanned = false;
        if (now - lastScan >= scanNanos) {
            lastScan = now;
            for (PeerChannel p : peers.values()) {
                forPeer(p, p::scan);
            }
            scanned = true;
            n++;
        }
        return n;
    }

    private void nodeClosed(RdmxException e) {
        if (running) {
            LOG.warn("node '{}' closed under its channel engine: {}", node.name(), e.getMessage());
            for (PeerChannel p : peers.values()) {
                p.fail(new ConnectionClosedException(p.name(), "node '" + node.name()
                    + "' closed under the channel to '" + p.name() + "'", e));
            }
        }
    }

    private void onCompletion(Completion c) {
        queuedCompletions++;
        PeerChannel p = peers.get(WrIdDescriptor.peerId(c.wrId()));
        if (p != null) {
            try {
                p.onCompletion(c);
            } catch (Throwable e) {
                failPeer(p, e);
            }
        }
    }

    /** @return completions the network thread took from the node's queue (those not delivered inline) */
    long queuedCompletions() {
        return queuedCompletions;
    }

    /** @return the ring memory this engine's peers hold now (bytes) */
    public long ringMemory() {
        return ringMemory.held();
    }

    void peerFailed(PeerChannel p, ConnectionClosedException e) {
        // no SLF4J 2 fluent calls (atLevel): Hadoop 3.4 puts SLF4J 1.7 on the class path of the modules it loads
        // and a log call that throws (a binding that does not link) must not keep the readers from being told
        SafeLog.infoOrDebug(LOG, failureLogLevel(p) == Level.DEBUG, "node '" + node.name() + "': " + e.getMessage());
        for (ChannelReader r : readers) {
            r.peerFailed(p, e);
        }
    }

    /**
     * A failed peer's memory was released ({@link PeerChannel#release}): the engine forgets it, so that a node
     * serving many short-lived peers holds only its live ones. Its writers' counts stay in the engine's totals.
     * The thread that dropped the peer's last hold.
     *
     * @param p the peer
     */
    void forget(PeerChannel p) {
        synchronized (byConnection) {
            if (!peers.remove(p.id(), p)) {
                return;
            }
            byConnection.remove(p.connection(), p);
            counters.forgotten(p.written());
            if (peers.size() == 1) {
                for (PeerChannel only : peers.values()) {
                    solePeer = only.connection().capability(InputFollowing.class).orElse(null);
                }
            } else {
                solePeer = null;
            }
        }
    }

    /** @return the peers this engine holds now: the live ones and the failed ones not released yet (tests) */
    int peerCount() {
        return peers.size();
    }

    /**
     * How a peer's end is logged: a clean close (either engine closed on purpose) only at DEBUG.
     *
     * @param p the peer that went down
     * @return the level
     */
    static Level failureLogLevel(PeerChannel p) {
        return p.closedCleanly() ? Level.DEBUG : Level.INFO;
    }

    /**
     * {@link #close()}, telling every peer why this engine closes: when that is another peer's failure, the peers
     * that stay fail naming it ({@code peer 'a' closed its channel engine because ...}), not only this engine's
     * node. Carried by the BYE ({@link NotificationDescriptor}: control characters become spaces, at most
     * {@value NotificationDescriptor#MAX_BYE_REASON} bytes of UTF-8 are sent).
     *
     * @param reason why, or null for none (as {@link #close()})
     */
    public void close(String reason) {
        closeReason = reason;
        close();
    }

    /**
     * Delivers what writers committed (up to 2 s: data, then its notifications), tells every peer that this is
     * a clean close (a BYE message, up to 1 s more), then stops the network thread, closes every channel and
     * releases its memory. Logs nothing above DEBUG (a WARN only if releasing a peer's memory throws: a bug).
     * Idempotent.
     */
    @Override
    public void close() {
        if (!running) {
            return;
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        for (PeerChannel p : peers.values()) {
            try {
                p.flushAll();
            } catch (RuntimeException e) {
                p.fail(e); // whatever went wrong with one peer, the close goes on for the others and ends
            }
        }
        while (System.nanoTime() < deadline && !peers.values().stream().allMatch(PeerChannel::quiet)) {
            closeStep();
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        for (PeerChannel p : peers.values()) {
            try {
                p.sayGoodbye(closeReason);
            } catch (RuntimeException e) {
                p.fail(e);
            }
        }
        long byeDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        while (System.nanoTime() < byeDeadline && !peers.values().stream().allMatch(PeerChannel::goodbyeDone)) {
            closeStep();
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        running = false;
        acceptor.stop();
        if (network != null) {
            node.completionQueue().kick(); // the network thread may sleep up to the idle wait: sees running=false
        }
        for (PeerChannel p : peers.values()) {
            p.fail(closedHere(p));
        }
        try {
            if (network != null) {
                network.join(5000);
            }
            acceptor.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (PeerChannel p : peers.values()) {
            // a peer the acceptor took in as this close began was not in the loop above (fail is idempotent)
            p.fail(closedHere(p));
            try {
                p.release();
            } catch (RuntimeException e) {
                LOG.warn("node '{}': releasing the channel to '{}': {}", node.name(), p.name(), e.toString());
            }
        }
        for (ChannelReader r : readers) {
            r.wake();
            r.closeSleeper();
        }
        counters.unexport();
        release(node);
    }

    /** @return why a peer's channel ended when this engine closed */
    private ConnectionClosedException closedHere(PeerChannel p) {
        return new ConnectionClosedException(p.name(), "channel engine of node '" + node.name()
            + "' closed its channel to '" + p.name() + "'", null);
    }

    /** Closing without a network thread: the closing thread runs the duty cycle (the BYE and flushes complete). */
    private void closeStep() {
        if (network == null) {
            try {
                doWork();
            } catch (RdmxException e) {
                LOG.debug("node '{}': duty cycle while closing: {}", node.name(), e.getMessage());
            }
        }
    }

    /** @return a snapshot of the counters */
    public ChannelMetrics metrics() {
        return counters.snapshot();
    }
}
