package io.rdmx.transport.selector;

import io.rdmx.spi.Platform;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.PeerNotListeningException;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.internal.AbstractNode;
import io.rdmx.transport.internal.CompletionQueueImpl;
import io.rdmx.transport.internal.SafeLog;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketAddress;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node of a stream-socket provider on rdmx's own selector engine: one I/O thread ({@code rdmx-<provider>-<node>})
 * that owns a JDK {@link Selector} over the node's listening sockets and every connection's socket
 * ({@link SocketLink}). JDK sockets only, so it runs wherever the JDK does. {@code shm} (Unix-domain sockets,
 * mapped regions, bells) and {@code tcp} (TCP_NODELAY sockets, WRITE data in frames) subclass it for what
 * differs: how they listen and dial, who they accept, where region memory lives, and what their connections add.
 *
 * <p>The I/O thread accepts, connects, reads and decodes ({@link SocketHandler}), writes what a posting thread could
 * not write at once, and keeps time (handshake deadlines, peer timeout, keep-alive PINGs) on a tick of at most
 * a quarter of the keep-alive interval. Posting threads write their own frames ({@link SocketConnection}). Other
 * threads reach the I/O thread through a task queue and {@link Selector#wakeup()}.
 *
 * <p>Leader/follower input ({@link SocketLink#follow}): a thread waiting for a connection's input may read the
 * socket and handle its frames itself while the I/O thread does not watch it: a tcp channel reader whose engine
 * has one peer ({@code rdmx.tcp.followerReads}), and on both shm and tcp the node's completion-queue waiter while
 * the node has one connection ({@code rdmx.cq.followerReads}). Not API.
 */
public abstract class SelectorNode extends AbstractNode {
    /**
     * System property, for shm and tcp nodes alike: microseconds the node's I/O thread leaves a socket's input to
     * the threads that read it themselves while they wait (leader/follower input: {@code rdmx.tcp.followerReads},
     * {@code rdmx.cq.followerReads}) after one gave it back, before it watches the socket again (default {@value
     * #FOLLOW_GRACE_DEFAULT_MICROS}, 0 to 60,000,000). A waiter that comes back within it (a reader between two
     * records, a caller between two calls) neither stops nor wakes the I/O thread; input that comes while no
     * waiter reads waits at most this long. Read when a node opens.
     */
    public static final String FOLLOW_GRACE_PROP = "rdmx.io.followGraceMicros";
    /** Default of {@link #FOLLOW_GRACE_PROP}. */
    public static final long FOLLOW_GRACE_DEFAULT_MICROS = 1000;
    private static final Logger LOG = LoggerFactory.getLogger(SelectorNode.class);
    /** How long a closing socket waits for the peer to read its last frames and close. */
    static final long LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

    /** What the I/O thread does with a registered key: every key of the selector carries one. */
    public interface Attachment {
        /**
         * I/O thread: the key is ready. Whatever it throws closes this attachment alone ({@link #closeNow}).
         *
         * @param k the key
         */
        void ready(SelectionKey k);

        /**
         * I/O thread: a timer tick.
         *
         * @param now {@code System.nanoTime()}
         */
        default void tick(long now) {
        }

        /** I/O thread: closes now (the node stops, or this attachment's work threw). Never throws. */
        void closeNow();
    }

    /** Whether waiting channel readers may read a connection's socket themselves ({@link SocketLink#follow}). */
    final boolean followerReads;
    /** Whether the completion queue's waiter may read the single connection's socket itself. */
    final boolean queueFollowerReads;
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    /**
     * Sockets whose input followers hold between their reads ({@link SocketLink#follow}): the I/O thread does not
     * watch them and takes each back once no follower came back within {@link #followGraceNanos}.
     */
    final java.util.Set<SocketLink> held = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** {@link #FOLLOW_GRACE_PROP}: how long after a follower gave a socket's input back the I/O thread leaves it. */
    final long followGraceNanos;
    private final long tickNanos;
    Selector selector;
    /** The I/O thread's handler of a ready key (one object, not one per select). */
    private final java.util.function.Consumer<SelectionKey> onReady = this::readyGuarded;
    /** The listening sockets, closed when the node stops. */
    private final List<ServerSocketChannel> listeners = new CopyOnWriteArrayList<>();
    /** The attachment of the listening socket peers connect to: accepts their sockets as links. */
    private final Attachment acceptor = new Attachment() {
        @Override
        public void ready(SelectionKey k) {
            accept((ServerSocketChannel) k.channel());
        }

        @Override
        public void closeNow() {
            // the listening sockets close with the selector (closeQuietly)
        }
    };
    volatile Thread thread;
    volatile boolean running;
    /** Passes of the I/O thread's loop; written by that thread only. */
    private volatile long loops;

    /**
     * @param fabric the provider
     * @param options validated options
     * @param followerReads whether waiting channel readers may read a connection's socket themselves
     * @param queueFollowerReads whether the completion queue's waiter may read the single connection's socket
     *                           itself ({@link CompletionQueueImpl#FOLLOWER_READS_PROP})
     */
    protected SelectorNode(Fabric fabric, NodeOptions options, boolean followerReads, boolean queueFollowerReads) {
        super(fabric, options);
        this.followerReads = followerReads;
        this.queueFollowerReads = queueFollowerReads;
        this.followGraceNanos = TimeUnit.MICROSECONDS.toNanos(followGrace());
        this.tickNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(10), Math.min(TimeUnit.MILLISECONDS.toNanos(250),
            SocketHandler.pingInterval(options) / 4));
    }

    /**
     * @return {@link #FOLLOW_GRACE_PROP} in microseconds
     * @throws IllegalArgumentException naming the property and the value if it is not a number from 0 to 60,000,000
     */
    public static long followGrace() {
        return io.rdmx.transport.internal.SystemProperties.longInRange(FOLLOW_GRACE_PROP, FOLLOW_GRACE_DEFAULT_MICROS,
            0, 60_000_000L, "microseconds");
    }

    /**
     * Listens: the selector opens (first call) and the socket, bound by the caller, is watched for peers to
     * connect, their sockets accepted as links; or, with an attachment of the provider's, for what it accepts
     * (shm's bells). Called before {@link #startIo}.
     *
     * @param server a bound listening socket; the node closes it when it stops
     * @param onAccept what handles it when ready, or null to accept links
     * @throws IOException if it cannot be registered
     */
    protected final void listen(ServerSocketChannel server, Attachment onAccept) throws IOException {
        if (selector == null) {
            selector = Selector.open();
        }
        listeners.add(server);
        server.configureBlocking(false);
        server.register(selector, SelectionKey.OP_ACCEPT, onAccept == null ? acceptor : onAccept);
    }

    /**
     * Registers a socket of the provider's with the I/O thread's selector. I/O thread.
     *
     * @param ch the socket, non-blocking
     * @param ops the interest set
     * @param a its attachment
     * @return the key
     * @throws IOException if it cannot be registered
     */
    protected final SelectionKey register(SocketChannel ch, int ops, Attachment a) throws IOException {
        return ch.register(selector, ops, a);
    }

    /** Starts the I/O thread (and the completion queue's follower, if on). Called once, after the node listens. */
    protected final void startIo() {
        if (queueFollowerReads) {
            followInputFromQueue();
        }
        running = true;
        Thread t = new Thread(this::run, "rdmx-" + fabric().name() + "-" + name());
        t.setDaemon(true);
        thread = t;
        t.start();
    }

    /** Closes the listening sockets and the selector (a node that failed to start, or stopped). */
    protected final void closeQuietly() {
        try {
            for (ServerSocketChannel s : listeners) {
                s.close();
            }
            if (selector != null) {
                selector.close();
            }
        } catch (IOException e) {
            LOG.debug("node '{}': closing the listening socket: {}", name(), e.toString());
        }
    }

    /**
     * @return a new unconnected socket of the provider's family (dials)
     * @throws IOException if it cannot be opened
     */
    protected abstract SocketChannel openSocket() throws IOException;

    /**
     * Sets the provider's options on a dialed or accepted socket (tcp: TCP_NODELAY). The default sets none.
     *
     * @param ch the socket
     * @throws IOException if an option cannot be set
     */
    protected void configure(SocketChannel ch) throws IOException {
    }

    /**
     * Checks an accepted peer after its HELLO, before anything is sent back to it. The default accepts anyone
     * who completes the handshake (authentication is the handshake's); shm checks the process at the other end.
     *
     * @param io the accepted socket
     * @param peerAddress the address the peer advertises
     * @return null to go on, else why the peer is refused
     */
    protected String checkAcceptedPeer(SocketIo io, String peerAddress) {
        return null;
    }

    /** @return true if peers place WRITE data in this node's memory themselves (shm); the default false */
    protected boolean acceptsPlacedWrites() {
        return false;
    }

    /**
     * Creates an established connection's object. The default: the stream send side with WRITE data in frames.
     *
     * @param peerName the peer's node name
     * @param peerAddress the peer's address (dialed, or advertised and checked)
     * @param regions the regions the peer listed
     * @param io the socket
     * @param handler its receive side
     * @param scope the connection's scope token where peers place writes ({@link #acceptsPlacedWrites}), else null
     * @return the connection
     */
    protected SocketConnection newConnection(String peerName, String peerAddress, List<RemoteRegion> regions,
                                             SocketIo io, SocketHandler handler, String scope) {
        return new SocketConnection(this, peerName, peerAddress, regions, io, handler, null);
    }

    /**
     * @param ch an accepted socket
     * @return the peer as messages name it
     */
    protected abstract String describeAccepted(SocketChannel ch);

    /**
     * @param ch an accepted socket
     * @return the peer's IP address (per-source limits), or null where all peers are of this host (the default)
     */
    protected String sourceAddressOf(SocketChannel ch) {
        return null;
    }

    /** Region memory: direct buffers (a provider whose peers place writes maps files instead). */
    @Override
    protected Allocation allocate(int length, int access, int remoteKey) throws RdmxException {
        return new Allocation(ByteBuffer.allocateDirect(length), () -> { });
    }

    /**
     * Opens a non-blocking socket to {@code to} ({@link #openSocket}, {@link #configure}) and registers its link;
     * the handshake runs on the I/O thread.
     *
     * @param peerAddress the address dialed, in the provider's format (messages, the handshake)
     * @param timeout how long the connect and the handshake may take
     * @param to the socket address
     * @return the established connection
     * @throws RdmxException naming the address if it fails
     */
    protected final AbstractConnection dial(String peerAddress, Duration timeout, SocketAddress to)
        throws RdmxException {
        return dialOnce(peerAddress, timeout, (future, deadline) -> {
            SocketChannel ch;
            boolean connected;
            try {
                ch = openSocket();
            } catch (IOException e) {
                throw new RdmxException("connect from '" + name() + "' to address=" + peerAddress + " failed: " + e,
                    e);
            }
            try {
                configure(ch);
                ch.configureBlocking(false);
                connected = ch.connect(to);
            } catch (IOException e) {
                try {
                    ch.close();
                } catch (IOException x) {
                    e.addSuppressed(x);
                }
                throw connectFailed(peerAddress, e);
            }
            SocketLink link = new SocketLink(this, ch, true, peerAddress, future);
            execute(() -> link.register(connected));
            return () -> link.close();
        });
    }

    RdmxException connectFailed(String peerAddress, IOException e) {
        String why = "connect from '" + name() + "' to address=" + peerAddress + " failed: " + e.getMessage();
        // refused, or the socket file vanished: nothing listens there (any more)
        boolean notListening = e instanceof ConnectException || e instanceof java.nio.file.NoSuchFileException
            || (e instanceof SocketException && String.valueOf(e.getMessage()).contains("No such file"));
        return notListening ? new PeerNotListeningException(why, e) : new RdmxException(why, e);
    }

    @Override
    protected void closeTransport() {
        failDialing("node '" + name() + "' closed while connecting");
        Thread t = thread;
        if (t != null) {
            running = false;
            selector.wakeup();
            if (t != Thread.currentThread()) {
                try {
                    t.join(TimeUnit.SECONDS.toMillis(5));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                if (t.isAlive()) {
                    LOG.warn("node '{}': the {} I/O thread did not stop within 5 s", name(), fabric().name());
                }
            }
        }
    }

    /**
     * Runs a task on the I/O thread. Any thread; a task submitted after the node closed never runs.
     *
     * @param task the task
     */
    void execute(Runnable task) {
        tasks.add(task);
        if (Thread.currentThread() != thread) {
            Selector s = selector;
            if (s != null) {
                s.wakeup();
            }
        }
    }

    private void run() {
        Platform.hooks().bindCurrentThread("io", fabric().name(), address());
        long nextTick = System.nanoTime() + tickNanos;
        try {
            while (running) {
                long before = System.nanoTime();
                long waitNanos = nextTick - before;
                if (!held.isEmpty()) {
                    waitNanos = Math.min(waitNanos, heldInputs(before));
                }
                long wait = Math.max(1, TimeUnit.NANOSECONDS.toMillis(waitNanos + 999_999));
                loops++;
                if (tasks.isEmpty()) {
                    selector.select(onReady, wait);
                } else {
                    selector.selectNow(onReady);
                }
                runTasks();
                long now = System.nanoTime();
                if (now - nextTick >= 0) {
                    for (SelectionKey k : new ArrayList<>(selector.keys())) {
                        tickGuarded(k, now);
                    }
                    nextTick = now + tickNanos;
                }
            }
        } catch (IOException | ClosedSelectorException e) {
            LOG.error("node '{}': the {} I/O thread failed", name(), fabric().name(), e);
        } catch (RuntimeException | Error e) {
            LOG.error("node '{}': the {} I/O thread failed", name(), fabric().name(), e);
            throw e;
        } finally {
            shutdown();
        }
    }

    /**
     * I/O thread, before it sleeps: takes back the input of every socket whose followers gave it back more than
     * {@link #followGraceNanos} ago (or that closed, or whose handler wants no input), and tells the followers
     * reading now to wake this thread when they give it back.
     *
     * @param now the time
     * @return how long this thread may sleep as far as held inputs go
     */
    private long heldInputs(long now) {
        long wait = Long.MAX_VALUE;
        for (SocketLink l : held) {
            wait = Math.min(wait, l.heldInput(now));
        }
        return wait;
    }

    /** @return passes of the I/O thread's loop (each ends a sleep or a look at ready sockets), for tests */
    long ioLoops() {
        return loops;
    }

    private void runTasks() {
        Runnable r;
        while ((r = tasks.poll()) != null) {
            try {
                r.run();
            } catch (Throwable e) {
                // one connection's task (a close, a flush): the thread serves the others on
                SafeLog.error(LOG, "node '" + name() + "': a task of the " + fabric().name() + " I/O thread failed", e);
            }
        }
    }

    /** I/O thread, at exit: every socket closed (their connections fail), then the listening socket. */
    private void shutdown() {
        running = false;
        try {
            runTasks();
            for (SelectionKey k : new ArrayList<>(selector.keys())) {
                if (k.attachment() instanceof Attachment a) {
                    a.closeNow();
                }
            }
        } catch (ClosedSelectorException e) {
            LOG.debug("node '{}': selector already closed", name());
        }
        closeQuietly();
    }

    /**
     * I/O thread: {@link Attachment#ready} for one socket; whatever it throws (a {@link LinkageError} from a completion
     * handler or a log call included) closes that socket alone, and the thread goes on serving the others.
     */
    private void readyGuarded(SelectionKey k) {
        try {
            ((Attachment) k.attachment()).ready(k);
        } catch (Throwable e) {
            ioFailed(k, "handling a ready socket", e);
        }
    }

    /** I/O thread: the timers of one socket, guarded as {@link #readyGuarded}. */
    private void tickGuarded(SelectionKey k, long now) {
        try {
            if (k.attachment() instanceof Attachment a) {
                a.tick(now);
            }
        } catch (Throwable e) {
            ioFailed(k, "a timer of a socket", e);
        }
    }

    /**
     * I/O thread: the work of one socket threw: logs it (to System.err if the log call fails too) and closes that
     * socket (its connection fails); the listening sockets stay. Never throws.
     */
    private void ioFailed(SelectionKey k, String what, Throwable e) {
        SafeLog.error(LOG, "node '" + name() + "': " + what + " failed on the " + fabric().name()
            + " I/O thread; closing that socket", e);
        Object a = k.attachment();
        try {
            if (a instanceof Attachment at) {
                at.closeNow();
            }
        } catch (Throwable closing) {
            SafeLog.error(LOG, "node '" + name() + "': closing a socket after " + e + " failed", closing);
        }
    }

    private void accept(ServerSocketChannel server) {
        for (int i = 0; i < 16; i++) {
            SocketChannel ch;
            try {
                ch = server.accept();
                if (ch == null) {
                    return;
                }
                ch.configureBlocking(false);
                configure(ch);
            } catch (IOException e) {
                LOG.warn("node '{}': accepting a connection failed: {}", name(), e.toString());
                return;
            }
            SocketLink l = new SocketLink(this, ch, false, null, null);
            l.register(true);
        }
    }

}
