package io.rdmx.transport.shm;

import io.rdmx.spi.Platform;
import io.rdmx.transport.Access;
import io.rdmx.transport.Bell;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.PeerNotListeningException;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.internal.AbstractNode;
import io.rdmx.transport.internal.CompletionQueueImpl;
import io.rdmx.transport.internal.InputHold;
import io.rdmx.transport.internal.SafeLog;
import io.rdmx.transport.wire.Placer;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.net.SocketException;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.FileChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An shm node: a directory holding its listening Unix-domain socket ({@link ShmFabric#SOCKET_FILE}) and the
 * files of its remotely writable regions, and one I/O thread ({@code rdmx-shm-<node>}) that owns a
 * {@link Selector} over the listening socket and every connection's socket. JDK sockets only
 * ({@link SocketChannel} on a {@link UnixDomainSocketAddress}), so it runs wherever the JDK does.
 *
 * <p>The I/O thread accepts, connects, reads and decodes ({@link ShmHandler}), writes what a posting thread could
 * not write at once, and keeps time (handshake deadlines, peer timeout, keep-alive PINGs) on a tick of at most
 * a quarter of the keep-alive interval. Posting threads write their own frames ({@link ShmConnection}). Other
 * threads reach the I/O thread through a task queue and {@link Selector#wakeup()}.
 *
 * <p>The same machinery serves the {@code tcp} provider ({@link SelectorSockets#openTcp}): then the node has no
 * directory, listens and dials on TCP sockets (TCP_NODELAY), checks no peer credentials, places nothing (WRITE
 * data travels in frames) and offers no bells.
 *
 * <p>Leader/follower input ({@link Link#follow}): a thread waiting for a connection's input may read the socket
 * and handle its frames itself while the I/O thread does not watch it: a tcp channel reader whose engine has one
 * peer ({@code rdmx.tcp.followerReads}), and on both shm and tcp the node's completion-queue waiter while the node
 * has one connection ({@code rdmx.cq.followerReads}).
 */
class ShmNode extends AbstractNode {
    /** {@link ShmFabric#FOLLOW_GRACE_PROP}. */
    static final String FOLLOW_GRACE_PROP = ShmFabric.FOLLOW_GRACE_PROP;
    /** Default of {@link #FOLLOW_GRACE_PROP}. */
    static final long FOLLOW_GRACE_DEFAULT_MICROS = ShmFabric.FOLLOW_GRACE_DEFAULT_MICROS;
    private static final Logger LOG = LoggerFactory.getLogger(ShmNode.class);
    /** A follower's wait that ended sooner than this found its input there already ({@code Link.readFirst}). */
    private static final long READY_AT_ONCE_NANOS = 3_000;
    /** A follower's selector action: the follower reads its one socket after any wake-up anyway. */
    private static final java.util.function.Consumer<SelectionKey> IGNORE_KEY = k -> { };
    /** How long a closing socket waits for the peer to read its last frames and close. */
    static final long LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

    /** Guards the creation and removal of scope directories (a file created in one never loses its directory). */
    private final Object scopeDirs = new Object();
    /** The node directory; null for a tcp node. */
    private final Path dir;
    /** How a tcp node parses and formats addresses; null for an shm node. */
    private final SelectorSockets.Addressing inet;
    private volatile String tcpAddress;
    /** tcp: whether waiting channel readers may read a connection's socket themselves ({@link Link#follow}). */
    private final boolean followerReads;
    /** Whether the completion queue's waiter may read the single connection's socket itself ({@link Link#follow}). */
    private final boolean queueFollowerReads;
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    /**
     * Sockets whose input followers hold between their reads ({@link Link#follow}): the I/O thread does not watch
     * them and takes each back once no follower came back within {@link #followGraceNanos}.
     */
    private final java.util.Set<Link> held = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** {@link #FOLLOW_GRACE_PROP}: how long after a follower gave a socket's input back the I/O thread leaves it. */
    private final long followGraceNanos;
    private final long tickNanos;
    private Selector selector;
    /** The I/O thread's handler of a ready key (one object, not one per select). */
    private final java.util.function.Consumer<SelectionKey> onReady = this::readyGuarded;
    private ServerSocketChannel server;
    /** Listens on {@link ShmFabric#BELL_FILE}: peers open bells there ({@link #dialBell}). */
    private ServerSocketChannel bellServer;
    private Thread thread;
    private volatile boolean running;
    /** Passes of the I/O thread's loop; written by that thread only. */
    private volatile long loops;

    /**
     * @param fabric the provider
     * @param options validated options
     * @param dir the node directory (created, trusted)
     */
    ShmNode(ShmFabric fabric, NodeOptions options, Path dir) {
        this(fabric, options, dir, null, false, CompletionQueueImpl.followerReads());
    }

    /**
     * @param fabric the provider
     * @param options validated options
     * @param dir the node directory (created, trusted), or null for a tcp node
     * @param inet a tcp node's addressing, or null for an shm node
     * @param followerReads whether waiting channel readers may read a connection's socket themselves
     * @param queueFollowerReads whether the completion queue's waiter may read the single connection's socket
     *                           itself ({@link CompletionQueueImpl#FOLLOWER_READS_PROP})
     */
    ShmNode(Fabric fabric, NodeOptions options, Path dir, SelectorSockets.Addressing inet, boolean followerReads,
            boolean queueFollowerReads) {
        super(fabric, options);
        this.dir = dir;
        this.inet = inet;
        this.followerReads = followerReads;
        this.queueFollowerReads = queueFollowerReads;
        if (queueFollowerReads) {
            followInputFromQueue();
        }
        this.followGraceNanos = TimeUnit.MICROSECONDS.toNanos(followGrace());
        this.tickNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(10), Math.min(TimeUnit.MILLISECONDS.toNanos(250),
            ShmHandler.pingInterval(this) / 4));
    }

    /**
     * @return {@link #FOLLOW_GRACE_PROP} in microseconds
     * @throws IllegalArgumentException naming the property and the value if it is not a number from 0 to 60,000,000
     */
    static long followGrace() {
        return io.rdmx.transport.internal.SystemProperties.longInRange(FOLLOW_GRACE_PROP, FOLLOW_GRACE_DEFAULT_MICROS,
            0, 60_000_000L, "microseconds");
    }

    /**
     * Listens on the directory's socket and starts the I/O thread. Called once, right after construction.
     *
     * @throws RdmxException if the socket cannot be bound
     */
    void start() throws RdmxException {
        Path sock = dir.resolve(ShmFabric.SOCKET_FILE);
        try {
            selector = Selector.open();
            server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            server.bind(UnixDomainSocketAddress.of(sock), Math.max(64, options().maxPendingHandshakes()));
            server.configureBlocking(false);
            server.register(selector, SelectionKey.OP_ACCEPT);
            bellServer = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            bellServer.bind(UnixDomainSocketAddress.of(dir.resolve(ShmFabric.BELL_FILE)), 64);
            bellServer.configureBlocking(false);
            bellServer.register(selector, SelectionKey.OP_ACCEPT, BELL_SERVER);
        } catch (IOException e) {
            closeQuietly();
            throw new RdmxException("shm node '" + name() + "' cannot listen on " + sock + ": " + e, e);
        }
        startThread();
    }

    /**
     * A tcp node: listens on a TCP socket and starts the I/O thread. Called once, right after construction.
     *
     * @param bind where to listen
     * @throws RdmxException if the socket cannot be bound
     */
    void startTcp(InetSocketAddress bind) throws RdmxException {
        try {
            selector = Selector.open();
            server = ServerSocketChannel.open();
            server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            server.bind(bind, Math.max(64, options().maxPendingHandshakes()));
            server.configureBlocking(false);
            server.register(selector, SelectionKey.OP_ACCEPT);
            tcpAddress = inet.format((InetSocketAddress) server.getLocalAddress());
        } catch (IOException e) {
            closeQuietly();
            throw new RdmxException(fabric().name() + " node '" + name() + "' cannot listen on " + bind + ": "
                + e.getMessage(), e);
        }
        startThread();
    }

    private void startThread() {
        running = true;
        thread = new Thread(this::run, "rdmx-" + fabric().name() + "-" + name());
        thread.setDaemon(true);
        thread.start();
    }

    private void closeQuietly() {
        try {
            if (server != null) {
                server.close();
            }
            if (bellServer != null) {
                bellServer.close();
            }
            if (selector != null) {
                selector.close();
            }
        } catch (IOException e) {
            LOG.debug("node '{}': closing the listening socket: {}", name(), e.toString());
        }
    }

    @Override
    public String address() {
        return dir == null ? tcpAddress : dir.toString();
    }

    /** @return the node directory */
    Path directory() {
        return dir;
    }


    /**
     * Checks an accepted peer after its HELLO, before anything is sent back to it: the process at the other end
     * of the socket runs as this user (SO_PEERCRED), and the directory it claims is trusted ({@link ShmTrust}).
     *
     * @param io the accepted socket
     * @param peerAddress the address the peer advertises
     * @return null to go on, else why the peer is refused
     */
    String checkAcceptedPeer(ShmIo io, String peerAddress) {
        if (inet != null) {
            return null; // tcp: anyone who completes the handshake (authentication is the handshake's)
        }
        try {
            UnixDomainPrincipal p = io.peerCredentials();
            if (!p.user().equals(ShmTrust.myUser())) {
                return "shm peer runs as user=" + p.user().getName() + ", not as this process's uid="
                    + ShmTrust.myUid();
            }
        } catch (IOException | UnsupportedOperationException e) {
            return "cannot read the shm peer's credentials: " + e;
        }
        return ShmTrust.checkDirectory(Paths.get(peerAddress), "shm peer directory");
    }

    /**
     * @param peerAddress the peer's directory (the one dialed, or on the accepting side the one it advertised
     *                    after its user was checked)
     * @param scope the connection's scope token: the peer keeps the files of regions granted to it under it
     * @return how WRITE data reaches the peer's memory
     */
    Placer placerFor(String peerAddress, String scope) {
        return inet != null ? null : new ShmPlacer(Paths.get(peerAddress), scope);
    }

    /** @return true: shm peers place WRITE data themselves */
    boolean acceptsPlacedWrites() {
        return inet == null;
    }

    @Override
    public AbstractConnection connect(String peerAddress, Duration timeout) throws RdmxException {
        if (inet != null) {
            return connectTcp(peerAddress, timeout);
        }
        Path sock = Paths.get(peerAddress).resolve(ShmFabric.SOCKET_FILE);
        if (!Files.exists(sock)) {
            throw new PeerNotListeningException("connect from '" + name() + "' to address=" + peerAddress
                + " failed: no shm node listens there (" + sock + " missing)");
        }
        String bad = ShmTrust.checkDirectory(Paths.get(peerAddress), "shm peer directory");
        if (bad != null) {
            throw new RdmxException("connect from '" + name() + "' to address=" + peerAddress + " refused: " + bad);
        }
        return dial(peerAddress, timeout, UnixDomainSocketAddress.of(sock));
    }

    private AbstractConnection connectTcp(String peerAddress, Duration timeout) throws RdmxException {
        return dial(peerAddress, timeout, inet.parse(peerAddress));
    }

    /** Opens a non-blocking socket to {@code to} (a Unix-domain path or a TCP address) and registers its link. */
    private AbstractConnection dial(String peerAddress, Duration timeout, SocketAddress to) throws RdmxException {
        boolean unix = to instanceof UnixDomainSocketAddress;
        return dialOnce(peerAddress, timeout, (future, deadline) -> {
            SocketChannel ch;
            boolean connected;
            try {
                ch = unix ? SocketChannel.open(StandardProtocolFamily.UNIX) : SocketChannel.open();
            } catch (IOException e) {
                throw new RdmxException("connect from '" + name() + "' to address=" + peerAddress + " failed: " + e,
                    e);
            }
            try {
                if (!unix) {
                    ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                }
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
            Link link = new Link(ch, true, peerAddress, future);
            execute(() -> link.register(connected));
            return () -> link.close();
        });
    }

    private RdmxException connectFailed(String peerAddress, IOException e) {
        String why = "connect from '" + name() + "' to address=" + peerAddress + " failed: " + e.getMessage();
        // refused, or the socket file vanished: nothing listens there (any more)
        boolean notListening = e instanceof ConnectException || e instanceof java.nio.file.NoSuchFileException
            || (e instanceof SocketException && String.valueOf(e.getMessage()).contains("No such file"));
        return notListening ? new PeerNotListeningException(why, e) : new RdmxException(why, e);
    }

    @Override
    protected Allocation allocate(int length, int access, int remoteKey) throws RdmxException {
        if (dir == null || (access & Access.REMOTE_WRITE) == 0) {
            return new Allocation(ByteBuffer.allocateDirect(length), () -> { });
        }
        return mapFile(ShmFabric.regionFile(dir, remoteKey), length, null);
    }

    /**
     * A region granted to one connection: its file goes under the connection's scope directory ({@code s-<scope>},
     * 0700), where only that connection's peer looks for it, so a key of it named on another connection is
     * unknown there and refused before anything is written.
     */
    @Override
    protected Allocation allocateGranted(int length, int access, int remoteKey, AbstractConnection grantee)
        throws RdmxException {
        if (dir == null || (access & Access.REMOTE_WRITE) == 0) {
            return allocate(length, access, remoteKey);
        }
        Path scopeDir = ShmFabric.scopeDir(dir, ((ShmConnection) grantee).scope());
        synchronized (scopeDirs) {
            try {
                if (!Files.isDirectory(scopeDir, LinkOption.NOFOLLOW_LINKS)) {
                    Files.createDirectory(scopeDir, PosixFilePermissions.asFileAttribute(
                        PosixFilePermissions.fromString("rwx------")));
                }
            } catch (IOException e) {
                throw new RdmxException("cannot create the scope directory " + scopeDir + " of the connection to '"
                    + grantee.peerName() + "': " + e, e);
            }
            return mapFile(ShmFabric.regionFile(scopeDir, remoteKey), length, scopeDir);
        }
    }

    /** Creates and maps a region file; its release deletes it, and its scope directory once empty. */
    private Allocation mapFile(Path file, int length, Path scopeDir) throws RdmxException {
        try {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rw-------")));
            MappedByteBuffer m;
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                m = ch.map(FileChannel.MapMode.READ_WRITE, 0, length);
            }
            return new Allocation(m, () -> {
                synchronized (scopeDirs) {
                    try {
                        Files.deleteIfExists(file);
                        if (scopeDir != null) {
                            Files.deleteIfExists(scopeDir);
                        }
                    } catch (java.nio.file.DirectoryNotEmptyException e) {
                        // other regions granted to that connection live on
                    } catch (IOException e) {
                        LOG.warn("cannot delete region file {}: {}", file, e.toString());
                    }
                }
            });
        } catch (FileAlreadyExistsException e) {
            throw new RdmxException("region file " + file + " already exists", e);
        } catch (IOException e) {
            throw new RdmxException("cannot map a region of length=" + length + " in " + dir + ": " + e, e);
        }
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
        if (dir != null) {
            ShmFabric.deleteTree(dir);
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
        for (Link l : held) {
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
                if (k.attachment() instanceof Link) {
                    ((Link) k.attachment()).doClose();
                } else if (k.attachment() instanceof BellAccept) {
                    ((BellAccept) k.attachment()).close();
                }
            }
        } catch (ClosedSelectorException e) {
            LOG.debug("node '{}': selector already closed", name());
        }
        closeQuietly();
    }

    /**
     * I/O thread: {@link #ready} for one socket; whatever it throws (a {@link LinkageError} from a completion
     * handler or a log call included) closes that socket alone, and the thread goes on serving the others.
     */
    private void readyGuarded(SelectionKey k) {
        try {
            ready(k);
        } catch (Throwable e) {
            ioFailed(k, "handling a ready socket", e);
        }
    }

    /** I/O thread: the timers of one socket, guarded as {@link #readyGuarded}. */
    private void tickGuarded(SelectionKey k, long now) {
        try {
            if (k.attachment() instanceof Link) {
                ((Link) k.attachment()).tick(now);
            } else if (k.attachment() instanceof BellAccept) {
                ((BellAccept) k.attachment()).tick(now);
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
            if (a instanceof Link) {
                ((Link) a).doClose();
            } else if (a instanceof BellAccept) {
                ((BellAccept) a).close();
            }
        } catch (Throwable closing) {
            SafeLog.error(LOG, "node '" + name() + "': closing a socket after " + e + " failed", closing);
        }
    }

    private void ready(SelectionKey k) {
        Object a = k.attachment();
        if (a == null) {
            accept();
            return;
        }
        if (a == BELL_SERVER) {
            acceptBells();
            return;
        }
        if (a instanceof BellAccept) {
            if (k.isValid() && k.isReadable()) {
                ((BellAccept) a).readable();
            }
            return;
        }
        Link l = (Link) a;
        try {
            if (!k.isValid()) {
                return;
            }
            if (k.isConnectable()) {
                l.finishConnect();
                return;
            }
            if (k.isWritable()) {
                l.flush();
            }
            if (k.isValid() && k.isReadable()) {
                l.readable();
            }
        } catch (CancelledKeyException e) {
            l.doClose();
        }
    }

    private void accept() {
        for (int i = 0; i < 16; i++) {
            SocketChannel ch;
            try {
                ch = server.accept();
                if (ch == null) {
                    return;
                }
                ch.configureBlocking(false);
                if (inet != null) {
                    ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                }
            } catch (IOException e) {
                LOG.warn("node '{}': accepting a connection failed: {}", name(), e.toString());
                return;
            }
            Link l = new Link(ch, false, null, null);
            l.register(true);
        }
    }

    /** The bell listener's attachment. */
    private static final Object BELL_SERVER = new Object();
    /** First word of a bell request: "RBL1". */
    static final int BELL_MAGIC = 0x314c4252;
    /** The longest node name a bell request carries, in bytes. */
    static final int BELL_NAME_MAX = 1024;
    /** How often a bell dial waiting for its answer checks that its connection is still open. */
    private static final long BELL_POLL_MILLIS = 10;
    /** The longest a bell dial waits for the peer's answer (then the sleeper keeps to doorbells for that peer). */
    private static final long BELL_ANSWER_MAX_MILLIS = 1000;

    /**
     * Opens a bell to a peer (for {@link ShmConnection#openBell}): dials its {@link ShmFabric#BELL_FILE} socket in
     * the directory this node trusted for the connection, checks the peer runs as this user, sends this node's
     * name (the peer rings the bell through its connection to it), and waits for the slot the peer assigned.
     * Blocking, at most a second (and the handshake timeout), and no longer than the connection is open; the
     * caller's thread (setup, not the data path).
     *
     * @param peerAddress the peer's directory (as the connection has it: dialed, or checked when accepted)
     * @param peerName the peer's name (errors)
     * @param open whether the connection is still open: the wait for the answer ends as soon as it is not (a
     *             stopped or dead peer never answers, and the caller, a sleeper, must see its failure)
     * @return the bell, its socket non-blocking
     * @throws RdmxException naming the peer if it cannot be opened
     */
    Bell dialBell(String peerAddress, String peerName, java.util.function.BooleanSupplier open)
        throws RdmxException {
        String bad = ShmTrust.checkDirectory(Paths.get(peerAddress), "shm peer directory");
        if (bad != null) {
            throw new RdmxException("bell from '" + name() + "' to '" + peerName + "' refused: " + bad);
        }
        byte[] me = name().getBytes(StandardCharsets.UTF_8);
        if (me.length > BELL_NAME_MAX) {
            throw new RdmxException("bell from '" + name() + "' to '" + peerName + "': node name longer than "
                + BELL_NAME_MAX + " bytes");
        }
        SocketChannel ch = null;
        try {
            ch = SocketChannel.open(StandardProtocolFamily.UNIX);
            ch.connect(UnixDomainSocketAddress.of(Paths.get(peerAddress).resolve(ShmFabric.BELL_FILE)));
            UnixDomainPrincipal p = ch.getOption(ExtendedSocketOptions.SO_PEERCRED);
            if (!p.user().equals(ShmTrust.myUser())) {
                throw new RdmxException("bell from '" + name() + "' to '" + peerName + "' refused: the peer runs "
                    + "as user=" + p.user().getName() + ", not as this process's uid=" + ShmTrust.myUid());
            }
            ByteBuffer hello = ByteBuffer.allocate(8 + me.length).order(ByteOrder.LITTLE_ENDIAN)
                .putInt(BELL_MAGIC).putInt(me.length).put(me).flip();
            while (hello.hasRemaining()) {
                ch.write(hello);
            }
            ch.configureBlocking(false);
            ByteBuffer ack = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
            // the sleeper dials on its own thread, its other peers' data waiting meanwhile: at most a second
            long wait = Math.min(options().handshakeTimeout().toNanos(), TimeUnit.MILLISECONDS.toNanos(
                BELL_ANSWER_MAX_MILLIS));
            long deadline = System.nanoTime() + wait;
            try (Selector s = Selector.open()) {
                ch.register(s, SelectionKey.OP_READ);
                while (ack.hasRemaining()) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        throw new RdmxException("bell from '" + name() + "' to '" + peerName + "': no answer within "
                            + TimeUnit.NANOSECONDS.toMillis(wait) + " ms");
                    }
                    if (!open.getAsBoolean()) {
                        throw new RdmxException("bell from '" + name() + "' to '" + peerName + "': the connection "
                            + "closed before the peer answered");
                    }
                    // in slices: a peer that is stopped never answers, and its connection's failure must end this
                    s.select(Math.max(1, Math.min(BELL_POLL_MILLIS, TimeUnit.NANOSECONDS.toMillis(left))));
                    if (ch.read(ack) < 0) {
                        throw new RdmxException("bell from '" + name() + "' to '" + peerName + "': the peer closed "
                            + "it before answering (it has no connection to '" + name() + "', or refused)");
                    }
                }
            }
            int slot = ack.getInt(0);
            if (slot < 0) {
                throw new RdmxException("bell from '" + name() + "' to '" + peerName + "' refused by the peer");
            }
            Bell b = new Bell(ch, slot);
            ch = null;
            return b;
        } catch (IOException e) {
            throw new RdmxException("bell from '" + name() + "' to '" + peerName + "' at " + peerAddress
                + " failed: " + e, e);
        } finally {
            if (ch != null) {
                try {
                    ch.close();
                } catch (IOException e) {
                    LOG.debug("closing a failed bell: {}", e.toString());
                }
            }
        }
    }

    private void acceptBells() {
        for (int i = 0; i < 16; i++) {
            SocketChannel ch;
            try {
                ch = bellServer.accept();
                if (ch == null) {
                    return;
                }
                ch.configureBlocking(false);
            } catch (IOException e) {
                LOG.warn("node '{}': accepting a bell failed: {}", name(), e.toString());
                return;
            }
            BellAccept b = new BellAccept(ch);
            if (!beginHandshake()) {
                b.refuse("too many pending handshakes (maxPendingHandshakes=" + options().maxPendingHandshakes()
                    + ")");
                continue;
            }
            b.counted = true;
            try {
                b.key = ch.register(selector, SelectionKey.OP_READ, b);
            } catch (IOException e) {
                b.close();
            }
        }
    }

    /**
     * An accepted bell socket until its request is read (I/O thread): the dialing process must run as this user
     * and name a node this one has an established connection to; the socket then belongs to that connection
     * ({@link ShmConnection#addBell}), which writes to it to ring, and the dialer learns its slot.
     */
    final class BellAccept {
        private final SocketChannel ch;
        private final ByteBuffer in = ByteBuffer.allocate(8 + BELL_NAME_MAX).order(ByteOrder.LITTLE_ENDIAN);
        private final long deadline = System.nanoTime() + options().handshakeTimeout().toNanos();
        private SelectionKey key;
        private boolean counted;

        BellAccept(SocketChannel ch) {
            this.ch = ch;
        }

        void readable() {
            int n;
            try {
                n = ch.read(in);
            } catch (IOException e) {
                close();
                return;
            }
            if (n < 0) {
                close();
                return;
            }
            if (in.position() < 8) {
                return;
            }
            int magic = in.getInt(0);
            int len = in.getInt(4);
            if (magic != BELL_MAGIC || len < 1 || len > BELL_NAME_MAX) {
                refuse("bad bell request (magic=0x" + Integer.toHexString(magic) + ", name length=" + len + ")");
                return;
            }
            if (in.position() < 8 + len) {
                return;
            }
            if (in.position() > 8 + len) {
                refuse("bytes after the bell request");
                return;
            }
            String peer = new String(in.array(), 8, len, StandardCharsets.UTF_8);
            try {
                UnixDomainPrincipal p = ch.getOption(ExtendedSocketOptions.SO_PEERCRED);
                if (!p.user().equals(ShmTrust.myUser())) {
                    refuse("bell from a process of user=" + p.user().getName() + ", not this process's uid="
                        + ShmTrust.myUid());
                    return;
                }
            } catch (IOException | UnsupportedOperationException e) {
                refuse("cannot read the bell peer's credentials: " + e);
                return;
            }
            AbstractConnection c = connectionTo(peer);
            if (!(c instanceof ShmConnection)) {
                refuse("bell from '" + peer + "', a node this one has no connection to");
                return;
            }
            key.cancel();
            int slot = ((ShmConnection) c).addBell(ch);
            if (slot < 0) {
                refuse("bell from '" + peer + "': its connection closed, or it has too many bells");
                return;
            }
            done();
            ByteBuffer ack = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(0, slot);
            try {
                ch.write(ack); // 4 bytes on a fresh socket: taken whole
            } catch (IOException e) {
                ((ShmConnection) c).removeBell(slot, ch);
            }
        }

        void tick(long now) {
            if (now - deadline >= 0) {
                refuse("no bell request within " + options().handshakeTimeout().toMillis() + " ms");
            }
        }

        void refuse(String why) {
            LOG.warn("node '{}': refusing a bell: {}", name(), why);
            try {
                ch.write(ByteBuffer.allocate(4).putInt(0, -1));
            } catch (IOException e) {
                LOG.debug("node '{}': refusing a bell: {}", name(), e.toString());
            }
            close();
        }

        void close() {
            done();
            try {
                ch.close();
            } catch (IOException e) {
                LOG.debug("node '{}': closing a bell: {}", name(), e.toString());
            }
        }

        private void done() {
            if (counted) {
                counted = false;
                endHandshake();
            }
        }
    }

    /**
     * One connection's socket ({@link ShmIo}): the frames a posting thread could not write at once wait in
     * {@link #outbox} (FIFO: copies of headers, views of payloads), written by the I/O thread when the socket is
     * writable again; every frame written meanwhile queues behind them.
     */
    final class Link implements ShmIo {
        private final SocketChannel ch;
        private final ShmHandler handler;
        private final boolean active;
        private final CompletableFuture<AbstractConnection> future;
        private final String dialed;
        private final Object outLock = new Object();
        private final ArrayDeque<ByteBuffer> outbox = new ArrayDeque<>();
        private final ByteBuffer[] iov = new ByteBuffer[2];
        /** I/O thread, under outLock: the head of {@link #outbox}, written in one gathering write. */
        private final ByteBuffer[] backlog = new ByteBuffer[32];
        /** Guarded by outLock: no frame is written after it is set. */
        private boolean closing;
        private volatile boolean closed;
        private SelectionKey key;
        /** I/O thread: when a closing socket closes whatever the peer does; 0 while not closing. */
        private long lingerDeadline;
        /**
         * Held by whoever runs {@link #handler}: the I/O thread (reads, timers, its tasks for this socket) or a
         * follower ({@link #follow}); a follower holds it only while it reads and handles, never while it waits.
         */
        private final java.util.concurrent.locks.ReentrantLock readLock =
            new java.util.concurrent.locks.ReentrantLock();
        /**
         * Who reads the input: the I/O thread, or followers ({@link #follow}) who hold it between their reads until
         * the I/O thread takes it back ({@link #heldInput}).
         */
        private final InputHold hold = new InputHold();
        /** Follower give-backs that woke the I/O thread (tests, diagnostics). */
        private final java.util.concurrent.atomic.AtomicLong releaseWakes =
            new java.util.concurrent.atomic.AtomicLong();
        /** Whether the handler wants input (false: back pressure, see {@link #reading}); guarded by readLock. */
        private volatile boolean wantRead = true;
        /** Where a follower waits for the socket (the socket registered for OP_READ); created once, lazily. */
        private volatile Selector followSelector;
        /** Set by a follower that read the end of the stream: the socket is not followed any more. */
        private volatile boolean ended;
        /**
         * Whether the next follower reads before it waits: true while input tends to be there already when one
         * comes (a stream), false while it tends to come later (a ping-pong: the read would find nothing, and the
         * wait and a second read follow anyway). Used by the thread that has the input ({@link InputHold#take}).
         */
        private boolean readFirst = true;
        /** Write system calls on the socket (posting threads and the I/O thread); written under outLock. */
        private volatile long socketWrites;
        /** Reads a follower made that brought data; written under readLock. */
        private volatile long followed;
        /**
         * Reads of the socket by followers, empty ones included; written under readLock, plain (a spinning reader
         * makes one per spin), so read by the thread that made them or after it (tests, diagnostics).
         */
        private long looked;

        Link(SocketChannel ch, boolean active, String dialed, CompletableFuture<AbstractConnection> future) {
            this.ch = ch;
            this.active = active;
            this.dialed = dialed;
            this.future = future;
            this.handler = new ShmHandler(ShmNode.this, this, active, dialed, future);
        }

        /** I/O thread: registers with the selector; starts the handshake once connected. */
        void register(boolean connected) {
            if (!running) {
                doClose();
                return;
            }
            try {
                key = ch.register(selector, connected ? SelectionKey.OP_READ : SelectionKey.OP_CONNECT, this);
            } catch (IOException e) {
                if (future != null) {
                    future.completeExceptionally(connectFailed(dialed, e));
                }
                doClose();
                return;
            }
            if (connected) {
                handler.start(System.nanoTime());
            }
        }

        /** I/O thread: a non-blocking connect completed. */
        void finishConnect() {
            try {
                if (!ch.finishConnect()) {
                    return;
                }
            } catch (IOException e) {
                if (future != null) {
                    future.completeExceptionally(connectFailed(dialed, e));
                }
                doClose();
                return;
            }
            key.interestOps(SelectionKey.OP_READ);
            handler.start(System.nanoTime());
        }

        /**
         * I/O thread: the socket is readable. Skipped while a follower reads it: the follower gives the socket
         * back when it is done ({@link #follow}: OP_READ again and a selector wake-up), and this thread's next
         * select sees what is left (level-triggered), so nothing is lost.
         */
        void readable() {
            if (hold.owned() || !readLock.tryLock()) {
                return; // a follower owns the input: it reads this itself (its own select woke it too)
            }
            try {
                if (handler.readFrom(ch, System.nanoTime()) < 0) {
                    doClose();
                }
            } catch (IOException e) {
                handler.ioFailed(e);
            } finally {
                readLock.unlock();
            }
        }

        /**
         * Leader/follower: a thread waiting for this connection's input reads the socket itself. It takes the
         * input ({@link InputHold#take}); unless followers hold it already ({@link InputHold#hold}) it stops the I/O
         * thread's watch of OP_READ (applied at that thread's next select: at worst it wakes once more and finds
         * the read lock taken or nothing to read). It reads and handles what is there under the read lock, and if
         * nothing was, waits in a selector of its own (without the lock, so the I/O thread's tasks for this
         * socket never wait for it) and reads once more. Then it gives the input back to the followers: the I/O
         * thread's watch stays off, so a follower that comes back soon (a reader between two records) finds the
         * socket its own and nothing wakes the I/O thread; that thread takes the input back (OP_READ again, and its
         * level-triggered select sees anything that came meanwhile) once no follower came back within the grace
         * ({@link #FOLLOW_GRACE_PROP}). Any thread but the I/O thread.
         */
        @Override
        public int follow(long nanos, boolean queue) {
            if (!(queue ? queueFollowerReads : followerReads) || closed || ended || key == null
                || Thread.currentThread() == thread || !wantRead) {
                return -1;
            }
            if (!hold.take()) {
                return -1;
            }
            try {
                handler.payOwedAck(); // what the last reader handled: its reply, if any, carried the ACK already
                if (hold.hold()) {
                    held.add(this); // the I/O thread may sleep with no deadline for it: the give-back wakes it
                    try {
                        key.interestOpsAnd(~SelectionKey.OP_READ);
                    } catch (CancelledKeyException e) {
                        return -1;
                    }
                }
                if (readFirst || nanos <= 0) {
                    int n = readInline();
                    if (n != 0 || nanos <= 0) {
                        return n; // nanos <= 0: a spinning waiter's look at the socket, no wait
                    }
                    readFirst = false; // nothing there: the next follower waits first (one system call less)
                }
                Selector s = followSelector();
                if (s == null) {
                    return -1;
                }
                long start = System.nanoTime();
                // with an action the ready key is not added to the selected-key set: no allocation per wait
                if (s.select(IGNORE_KEY, Math.max(1, (nanos + 999_999) / 1_000_000)) > 0) {
                    // ready at once: input comes faster than it is read (a stream), so read before waiting
                    readFirst = System.nanoTime() - start < READY_AT_ONCE_NANOS;
                }
                return readInline();
            } catch (IOException | ClosedSelectorException e) {
                return -1;
            } finally {
                giveBack();
            }
        }

        /**
         * The follower is done: the input stays held for the next follower; the I/O thread is woken only if it
         * may sleep with no deadline for this socket.
         */
        private void giveBack() {
            if (hold.giveBack(System.nanoTime())) {
                releaseWakes.incrementAndGet();
                selector.wakeup();
            }
        }

        /**
         * I/O thread, before it sleeps, for a socket whose input followers hold: takes the input back if the last
         * follower gave it back more than the grace ago, the socket closed or the handler wants no input; if a
         * follower reads now, asks it to wake this thread when it gives the input back.
         *
         * @param now the time
         * @return how long this thread may sleep as far as this socket goes (Long.MAX_VALUE: no deadline)
         */
        long heldInput(long now) {
            long wait = hold.poll(now, followGraceNanos, wantRead && !closed);
            if (wait != InputHold.TAKE_BACK) {
                return wait;
            }
            if (!hold.beginTakeBack()) {
                return 0; // a follower came back just now: look again at once
            }
            try {
                handler.payOwedAck();
                held.remove(this);
                if (wantRead && !closed) {
                    key.interestOpsOr(SelectionKey.OP_READ);
                }
            } catch (CancelledKeyException e) {
                // closed meanwhile
            } finally {
                hold.endTakeBack();
            }
            return Long.MAX_VALUE;
        }

        /**
         * A thread about to sleep another way (a writer waiting for credits): if followers hold the input and none
         * reads now, reads what is there and hands the input back to the I/O thread at once (woken to take it),
         * so that what comes while this thread sleeps is read without waiting out the grace. Any thread but the
         * I/O thread.
         *
         * @return bytes read and handled
         */
        @Override
        public int releaseInput() {
            if (!hold.held() || closed || Thread.currentThread() == thread || !hold.take()) {
                return 0; // not held, or a follower reads it now (and handles what this thread waits for)
            }
            int n = 0;
            try {
                n = readInline();
                handler.payOwedAck();
            } catch (IOException e) {
                n = 0; // readInline hands the failure to the I/O thread
            } finally {
                hold.handBack(System.nanoTime(), followGraceNanos);
                releaseWakes.incrementAndGet();
                selector.wakeup();
            }
            return Math.max(0, n);
        }

        @Override
        public long socketWrites() {
            return socketWrites;
        }

        @Override
        public long followerReleaseWakes() {
            return releaseWakes.get();
        }

        /** Follower: reads once under the read lock; 0 if another thread holds it. */
        private int readInline() throws IOException {
            if (!readLock.tryLock()) {
                return -1;
            }
            try {
                if (closed) {
                    return -1;
                }
                looked++;
                int n = handler.readFrom(ch, System.nanoTime());
                if (n < 0) {
                    ended = true; // no more following: the I/O thread closes it and fails the connection
                    ShmNode.this.execute(this::doClose);
                } else if (n > 0) {
                    followed++;
                }
                return n;
            } catch (IOException e) {
                execute(() -> handler.ioFailed(e));
                return -1;
            } finally {
                readLock.unlock();
            }
        }

        private Selector followSelector() throws IOException {
            Selector s = followSelector;
            if (s == null) {
                synchronized (this) {
                    s = followSelector;
                    if (s == null && !closed) {
                        s = Selector.open();
                        ch.register(s, SelectionKey.OP_READ);
                        followSelector = s;
                    }
                }
            }
            return s;
        }

        @Override
        public long followerReads() {
            return followed;
        }

        @Override
        public long followerLooks() {
            return looked;
        }

        @Override
        public void wakeFollower() {
            if (!followerReads && !queueFollowerReads) {
                return;
            }
            try {
                Selector s = followSelector();
                if (s != null) {
                    s.wakeup(); // ends the select now, or the next one at once
                }
            } catch (IOException | ClosedSelectorException e) {
                // closed: the follower's select ends with it
            }
        }

        /** I/O thread: timers, and the end of a linger. */
        void tick(long now) {
            if (lingerDeadline != 0 && now - lingerDeadline >= 0) {
                doClose();
                return;
            }
            readLock.lock();
            try {
                handler.tick(now);
            } finally {
                readLock.unlock();
            }
        }

        @Override
        public boolean write(ByteBuffer header, ByteBuffer payload) {
            synchronized (outLock) {
                // the header is the caller's to reuse (copied if not written now); the payload is a posted request's
                // source in a region, unchanged until the request completes (that needs the peer's ACK of every
                // byte): not copied
                iov[0] = header;
                iov[1] = payload;
                try {
                    return write(iov, payload == null ? 1 : 2, 1);
                } finally {
                    iov[0] = null;
                    iov[1] = null;
                }
            }
        }

        @Override
        public boolean write(ByteBuffer[] bufs, int n, int copyMask) {
            synchronized (outLock) {
                if (closing) {
                    return false;
                }
                if (outbox.isEmpty()) {
                    try {
                        socketWrites++;
                        ch.write(bufs, 0, n);
                    } catch (IOException e) {
                        closing = true;
                        execute(() -> handler.ioFailed(e));
                        return false;
                    }
                }
                // what the socket did not take waits for the I/O thread: the caller's reused buffers (copyMask)
                // copied, the regions' memory not (a posted request's source, unchanged until the peer's ACK)
                boolean wasEmpty = outbox.isEmpty();
                for (int i = 0; i < n; i++) {
                    ByteBuffer b = bufs[i];
                    if (b.hasRemaining()) {
                        outbox.addLast((copyMask & (1 << i)) != 0 ? ByteBuffer.allocate(b.remaining()).put(b).flip()
                            : b.slice());
                    }
                }
                if (wasEmpty && !outbox.isEmpty()) {
                    wantWrite();
                }
                return true;
            }
        }

        private void wantWrite() {
            SelectionKey k = key;
            if (k == null) {
                execute(() -> {
                    if (key != null && key.isValid()) {
                        key.interestOpsOr(SelectionKey.OP_WRITE);
                    }
                });
                return;
            }
            try {
                k.interestOpsOr(SelectionKey.OP_WRITE);
            } catch (CancelledKeyException e) {
                return; // closed: nothing will be written any more
            }
            if (Thread.currentThread() != thread) {
                selector.wakeup();
            }
        }

        /** I/O thread: writes what waits in the outbox. */
        void flush() {
            synchronized (outLock) {
                try {
                    while (!outbox.isEmpty()) {
                        // the head of the backlog in one system call (a cork's frames: up to 32 buffers), not one each
                        int n = 0;
                        long want = 0;
                        for (ByteBuffer b : outbox) {
                            backlog[n++] = b;
                            want += b.remaining();
                            if (n == backlog.length) {
                                break;
                            }
                        }
                        socketWrites++;
                        long written;
                        try {
                            written = ch.write(backlog, 0, n);
                        } finally {
                            java.util.Arrays.fill(backlog, 0, n, null);
                        }
                        while (!outbox.isEmpty() && !outbox.peekFirst().hasRemaining()) {
                            outbox.pollFirst();
                        }
                        if (written < want) {
                            return; // the socket is full: OP_WRITE stays on
                        }
                    }
                } catch (IOException e) {
                    closing = true;
                    outbox.clear();
                    execute(() -> handler.ioFailed(e));
                    return;
                }
                key.interestOpsAnd(~SelectionKey.OP_WRITE);
                if (closing && lingerDeadline != 0) {
                    shutdownOutput();
                }
            }
        }

        private void shutdownOutput() {
            try {
                ch.shutdownOutput();
            } catch (IOException e) {
                LOG.debug("node '{}': shutting the output of a socket down: {}", name(), e.toString());
            }
        }

        @Override
        public void reading(boolean on) {
            wantRead = on;
            SelectionKey k = key;
            if (k == null || !k.isValid() || hold.owned() || hold.held()) {
                return; // followers hold the input: the I/O thread takes it back as wantRead says (heldInput)
            }
            try {
                if (on) {
                    k.interestOpsOr(SelectionKey.OP_READ);
                } else {
                    k.interestOpsAnd(~SelectionKey.OP_READ);
                }
            } catch (CancelledKeyException e) {
                // closed meanwhile
            }
        }

        @Override
        public void execute(Runnable task) {
            ShmNode.this.execute(() -> {
                readLock.lock();
                try {
                    task.run();
                } finally {
                    readLock.unlock();
                }
            });
        }

        /** The I/O thread, or a follower while it reads this socket. */
        @Override
        public boolean inIoThread() {
            return Thread.currentThread() == thread || readLock.isHeldByCurrentThread();
        }

        @Override
        public boolean onIoThread() {
            return Thread.currentThread() == thread;
        }

        @Override
        public void closeAfterFlush() {
            synchronized (outLock) {
                if (closing) {
                    return;
                }
                closing = true;
            }
            execute(() -> {
                if (closed || lingerDeadline != 0) {
                    return;
                }
                lingerDeadline = System.nanoTime() + LINGER_NANOS;
                synchronized (outLock) {
                    if (outbox.isEmpty()) {
                        shutdownOutput();
                    }
                }
            });
        }

        @Override
        public void close() {
            synchronized (outLock) {
                closing = true;
            }
            if (Thread.currentThread() == thread) {
                doClose();
            } else {
                ShmNode.this.execute(this::doClose);
            }
        }

        /** I/O thread: closes the socket now and tells the handler. Idempotent. */
        void doClose() {
            if (closed) {
                return;
            }
            closed = true;
            held.remove(this);
            synchronized (outLock) {
                closing = true;
                outbox.clear();
            }
            if (key != null) {
                key.cancel();
            }
            synchronized (this) {
                Selector fs = followSelector;
                if (fs != null) {
                    try {
                        fs.close(); // a follower waiting in it returns
                    } catch (IOException e) {
                        LOG.debug("node '{}': closing a follower's selector: {}", name(), e.toString());
                    }
                }
            }
            try {
                ch.close();
            } catch (IOException e) {
                LOG.debug("node '{}': closing a socket: {}", name(), e.toString());
            }
            readLock.lock();
            try {
                handler.inactive();
            } finally {
                readLock.unlock();
            }
        }

        @Override
        public boolean isOpen() {
            return !closed;
        }

        @Override
        public UnixDomainPrincipal peerCredentials() throws IOException {
            return ch.getOption(ExtendedSocketOptions.SO_PEERCRED);
        }

        @Override
        public String sourceAddress() {
            if (active || dir != null) {
                return null;
            }
            try {
                SocketAddress a = ch.getRemoteAddress();
                return a instanceof InetSocketAddress i ? i.getAddress().getHostAddress() : String.valueOf(a);
            } catch (IOException e) {
                return "unknown";
            }
        }

        @Override
        public String describePeer() {
            if (active) {
                return dialed;
            }
            if (dir == null) {
                try {
                    return String.valueOf(ch.getRemoteAddress());
                } catch (IOException e) {
                    return "a peer of " + tcpAddress;
                }
            }
            return "a local process on " + dir.resolve(ShmFabric.SOCKET_FILE);
        }
    }
}
