package io.rdmx.transport.shm;

import io.netty.channel.Channel;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.rdmx.transport.Access;
import io.rdmx.transport.Availability;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.PeerNotListeningException;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.stream.Placer;
import io.rdmx.transport.stream.StreamNode;
import java.io.IOException;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
import java.util.Locale;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The {@code shm} provider. A node's address is its directory. */
public final class ShmFabric implements Fabric {
    /** Provider name. */
    public static final String NAME = "shm";
    /** System property: the parent directory of node directories. */
    public static final String ROOT_PROP = "rdmx.shm.root";
    /** Name of the socket file in a node directory. */
    public static final String SOCKET_FILE = "sock";

    private static final Logger LOG = LoggerFactory.getLogger(ShmFabric.class);

    /** Creates the provider (ServiceLoader). */
    public ShmFabric() {
    }

    @Override
    public String name() {
        return NAME;
    }

    /** @return the parent directory of node directories */
    public static Path root() {
        String p = System.getProperty(ROOT_PROP);
        if (p != null && !p.isBlank()) {
            return Paths.get(p);
        }
        Path shm = Paths.get("/dev/shm");
        Path base = Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Paths.get(System.getProperty(
            "java.io.tmpdir"));
        return base.resolve("rdmx-" + System.getProperty("user.name", "user"));
    }

    @Override
    public Availability availability() {
        if (!System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux")) {
            return Availability.unusable("needs Linux (Unix-domain sockets through Netty epoll)");
        }
        if (!Epoll.isAvailable()) {
            return Availability.unusable("Netty epoll unavailable: " + Epoll.unavailabilityCause());
        }
        return Availability.usable("shared memory under " + root() + " + Unix-domain sockets");
    }

    @Override
    public StreamNode open(NodeOptions options) throws RdmxException {
        Availability a = availability();
        if (!a.usable()) {
            throw new RdmxException("shm provider unusable here: " + a.reason());
        }
        Path dir = (options.bindAddress() != null ? Paths.get(options.bindAddress())
            : root().resolve(options.name())).toAbsolutePath();
        prepareRoot(dir.getParent());
        sweepStale(dir.getParent());
        prepareDirectory(dir);
        ShmNode n = new ShmNode(this, options, dir);
        n.start();
        return n;
    }

    /**
     * Creates the root (the parent of node directories) if absent, mode 0700, and checks that it can be trusted:
     * owned by this user, not writable by group or others, not a symbolic link.
     */
    private static void prepareRoot(Path root) throws RdmxException {
        if (root == null) {
            throw new RdmxException("shm node directory has no parent directory");
        }
        try {
            if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
                Files.createDirectories(root.getParent());
                try {
                    Files.createDirectory(root, PosixFilePermissions.asFileAttribute(
                        PosixFilePermissions.fromString("rwx------")));
                } catch (FileAlreadyExistsException e) {
                    // created by another process meanwhile: checked below like any existing root
                }
            }
        } catch (IOException e) {
            throw new RdmxException("cannot create the shm root " + root + ": " + e, e);
        }
        String bad = ShmTrust.checkDirectory(root, "shm root");
        if (bad != null) {
            throw new RdmxException(bad + " (set " + ROOT_PROP + " to a directory of your own, mode 0700)");
        }
    }

    private static void prepareDirectory(Path dir) throws RdmxException {
        try {
            if (Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
                String bad = ShmTrust.checkDirectory(dir, "shm node directory");
                if (bad != null) {
                    throw new RdmxException(bad);
                }
                Path sock = dir.resolve(SOCKET_FILE);
                if (Files.exists(sock) && alive(sock)) {
                    throw new RdmxException("shm node directory " + dir + " belongs to a live node");
                }
                LOG.info("removing stale shm node directory {}", dir);
                deleteTree(dir);
            }
            Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwx------")));
        } catch (IOException e) {
            throw new RdmxException("cannot create shm node directory " + dir + ": " + e, e);
        }
    }

    /**
     * Removes the directories of nodes whose process died (their socket no longer accepts connections) and that
     * are older than a minute (a node being created right now has no listening socket yet).
     */
    static void sweepStale(Path parent) {
        if (parent == null || !Files.isDirectory(parent)) {
            return;
        }
        long cutoff = System.currentTimeMillis() - 60_000;
        try (Stream<Path> dirs = Files.list(parent)) {
            for (Path d : (Iterable<Path>) dirs::iterator) {
                Path sock = d.resolve(SOCKET_FILE);
                try {
                    if (Files.isDirectory(d) && Files.exists(sock)
                        && Files.getLastModifiedTime(d).toMillis() < cutoff && !alive(sock)) {
                        LOG.info("removing the directory of dead shm node {}", d);
                        deleteTree(d);
                    }
                } catch (IOException e) {
                    LOG.debug("skipping {} while sweeping: {}", d, e.toString());
                }
            }
        } catch (IOException | java.io.UncheckedIOException e) {
            LOG.debug("cannot sweep {}: {}", parent, e.toString());
        }
    }

    private static boolean alive(Path sock) {
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.connect(UnixDomainSocketAddress.of(sock));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    LOG.warn("cannot delete {}: {}", p, e.toString());
                }
            });
        } catch (IOException | java.io.UncheckedIOException e) {
            // another process may be sweeping the same dead directory: what it removed is gone either way
            LOG.debug("cannot delete {}: {}", dir, e.toString());
        }
    }

    static Path regionFile(Path dir, int remoteKey) {
        return dir.resolve(String.format("r-%08x", remoteKey));
    }

    /** An shm node. */
    static final class ShmNode extends StreamNode {
        private final Path dir;

        ShmNode(ShmFabric fabric, NodeOptions options, Path dir) {
            super(fabric, options, new EpollEventLoopGroup(1, new io.rdmx.transport.stream.BindingThreadFactory(
                "rdmx-shm-" + options.name(), NAME, dir.toString())));
            this.dir = dir;
        }

        void start() throws RdmxException {
            bind(new DomainSocketAddress(dir.resolve(SOCKET_FILE).toString()));
        }

        @Override
        protected Class<? extends Channel> channelClass() {
            return EpollDomainSocketChannel.class;
        }

        @Override
        protected Class<? extends ServerChannel> serverChannelClass() {
            return EpollServerDomainSocketChannel.class;
        }

        @Override
        protected SocketAddress parseAddress(String address) throws RdmxException {
            Path p = Paths.get(address).resolve(SOCKET_FILE);
            if (!Files.exists(p)) {
                throw new PeerNotListeningException("connect from '" + name() + "' to address=" + address
                    + " failed: no shm node listens there (" + p + " missing)");
            }
            String bad = ShmTrust.checkDirectory(Paths.get(address), "shm peer directory");
            if (bad != null) {
                throw new RdmxException("connect from '" + name() + "' to address=" + address + " refused: " + bad);
            }
            return new DomainSocketAddress(p.toString());
        }

        @Override
        protected String checkAcceptedPeer(Channel channel, String peerAddress) {
            try {
                int peerUid = ((EpollDomainSocketChannel) channel).peerCredentials().uid();
                if (peerUid != ShmTrust.myUid()) {
                    return "shm peer runs as uid=" + peerUid + ", not as this process's uid=" + ShmTrust.myUid();
                }
            } catch (IOException e) {
                return "cannot read the shm peer's credentials: " + e;
            }
            return ShmTrust.checkDirectory(Paths.get(peerAddress), "shm peer directory");
        }

        @Override
        protected String formatAddress(SocketAddress bound) {
            return dir.toAbsolutePath().toString();
        }

        @Override
        protected Placer placerFor(String peerAddress) {
            return new ShmPlacer(Paths.get(peerAddress));
        }

        @Override
        protected boolean acceptsPlacedWrites() {
            return true;
        }

        @Override
        protected Allocation allocate(int length, int access, int remoteKey) throws RdmxException {
            if ((access & Access.REMOTE_WRITE) == 0) {
                return new Allocation(ByteBuffer.allocateDirect(length), () -> { });
            }
            Path file = regionFile(dir, remoteKey);
            try {
                Files.createFile(file, PosixFilePermissions.asFileAttribute(
                    PosixFilePermissions.fromString("rw-------")));
                MappedByteBuffer m;
                try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                    m = ch.map(FileChannel.MapMode.READ_WRITE, 0, length);
                }
                return new Allocation(m, () -> {
                    try {
                        Files.deleteIfExists(file);
                    } catch (IOException e) {
                        LOG.warn("cannot delete region file {}: {}", file, e.toString());
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
            deleteTree(dir);
        }
    }
}
