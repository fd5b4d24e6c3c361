package io.rdmx.transport.shm;

import io.rdmx.transport.Access;
import io.rdmx.transport.Bell;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.PeerNotListeningException;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.internal.CompletionQueueImpl;
import io.rdmx.transport.selector.SelectorNode;
import io.rdmx.transport.selector.SocketConnection;
import io.rdmx.transport.selector.SocketHandler;
import io.rdmx.transport.selector.SocketIo;
import io.rdmx.transport.wire.Placer;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.charset.StandardCharsets;
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
import java.util.List;
import java.util.concurrent.TimeUnit;
import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An shm node: a directory holding its listening Unix-domain socket ({@link ShmFabric#SOCKET_FILE}) and the
 * files of its remotely writable regions, on the selector engine ({@link SelectorNode}: one I/O thread
 * {@code rdmx-shm-<node>}, posting threads writing their own frames). What is shm's own lives here: the
 * directory and its trust ({@link ShmTrust}), the peer's credentials (SO_PEERCRED), region files (mapped, under
 * a connection's scope directory when granted to one), the placer that copies WRITE data into a peer's files,
 * and bells ({@link ShmFabric#BELL_FILE}).
 */
class ShmNode extends SelectorNode {
    private static final Logger LOG = LoggerFactory.getLogger(ShmNode.class);

    /** Guards the creation and removal of scope directories (a file created in one never loses its directory). */
    private final Object scopeDirs = new Object();
    /** The node directory. */
    private final Path dir;

    /**
     * @param fabric the provider
     * @param options validated options
     * @param dir the node directory (created, trusted)
     */
    ShmNode(ShmFabric fabric, NodeOptions options, Path dir) {
        super(fabric, options, false, CompletionQueueImpl.followerReads());
        this.dir = dir;
    }

    /**
     * Listens on the directory's socket and its bell socket, and starts the I/O thread. Called once, right after
     * construction.
     *
     * @throws RdmxException if the socket cannot be bound
     */
    void start() throws RdmxException {
        Path sock = dir.resolve(ShmFabric.SOCKET_FILE);
        try {
            ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            listen(server, null);
            server.bind(UnixDomainSocketAddress.of(sock), Math.max(64, options().maxPendingHandshakes()));
            ServerSocketChannel bells = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            listen(bells, bellServer);
            bells.bind(UnixDomainSocketAddress.of(dir.resolve(ShmFabric.BELL_FILE)), 64);
        } catch (IOException e) {
            closeQuietly();
            throw new RdmxException("shm node '" + name() + "' cannot listen on " + sock + ": " + e, e);
        }
        startIo();
    }

    @Override
    public String address() {
        return dir.toString();
    }

    /** @return the node directory */
    Path directory() {
        return dir;
    }

    @Override
    protected SocketChannel openSocket() throws IOException {
        return SocketChannel.open(StandardProtocolFamily.UNIX);
    }

    @Override
    protected String describeAccepted(SocketChannel ch) {
        return "a local process on " + dir.resolve(ShmFabric.SOCKET_FILE);
    }

    @Override
    protected SocketConnection newConnection(String peerName, String peerAddress, List<RemoteRegion> regions,
                                             SocketIo io, SocketHandler handler, String scope) {
        return new ShmConnection(this, peerName, peerAddress, regions, io, handler, placerFor(peerAddress, scope),
            scope);
    }

    /**
     * Checks an accepted peer after its HELLO, before anything is sent back to it: the process at the other end
     * of the socket runs as this user (SO_PEERCRED), and the directory it claims is trusted ({@link ShmTrust}).
     *
     * @param io the accepted socket
     * @param peerAddress the address the peer advertises
     * @return null to go on, else why the peer is refused
     */
    @Override
    protected String checkAcceptedPeer(SocketIo io, String peerAddress) {
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
        return new ShmPlacer(Paths.get(peerAddress), scope);
    }

    /** @return true: shm peers place WRITE data themselves */
    @Override
    protected boolean acceptsPlacedWrites() {
        return true;
    }

    @Override
    public AbstractConnection connect(String peerAddress, Duration timeout) throws RdmxException {
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

    @Override
    protected Allocation allocate(int length, int access, int remoteKey) throws RdmxException {
        if ((access & REMOTE) == 0) {
            return super.allocate(length, access, remoteKey);
        }
        return mapFile(ShmFabric.regionFile(dir, remoteKey, access), length, null);
    }

    /** What peers may do to a region: one of them makes it a file they map. */
    private static final int REMOTE = Access.REMOTE_WRITE | Access.REMOTE_READ;

    /**
     * A region granted to one connection: its file goes under the connection's scope directory ({@code s-<scope>},
     * 0700), where only that connection's peer looks for it, so a key of it named on another connection is
     * unknown there and refused before anything is written.
     */
    @Override
    protected Allocation allocateGranted(int length, int access, int remoteKey, AbstractConnection grantee)
        throws RdmxException {
        if ((access & REMOTE) == 0) {
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
            return mapFile(ShmFabric.regionFile(scopeDir, remoteKey, access), length, scopeDir);
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
        super.closeTransport();
        ShmFabric.deleteTree(dir);
    }

    /** The bell listener's attachment: accepts bells. */
    private final Attachment bellServer = new Attachment() {
        @Override
        public void ready(SelectionKey k) {
            acceptBells((ServerSocketChannel) k.channel());
        }

        @Override
        public void closeNow() {
            // the listening sockets close with the selector
        }
    };
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

    private void acceptBells(ServerSocketChannel bellListener) {
        for (int i = 0; i < 16; i++) {
            SocketChannel ch;
            try {
                ch = bellListener.accept();
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
                b.key = register(ch, SelectionKey.OP_READ, b);
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
    final class BellAccept implements Attachment {
        private final SocketChannel ch;
        private final ByteBuffer in = ByteBuffer.allocate(8 + BELL_NAME_MAX).order(ByteOrder.LITTLE_ENDIAN);
        private final long deadline = System.nanoTime() + options().handshakeTimeout().toNanos();
        private SelectionKey key;
        private boolean counted;

        BellAccept(SocketChannel ch) {
            this.ch = ch;
        }

        @Override
        public void ready(SelectionKey k) {
            if (k.isValid() && k.isReadable()) {
                readable();
            }
        }

        @Override
        public void closeNow() {
            close();
        }

        private void readable() {
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

        @Override
        public void tick(long now) {
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

}
