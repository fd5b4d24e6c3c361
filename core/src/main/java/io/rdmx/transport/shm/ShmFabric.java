package io.rdmx.transport.shm;

import io.rdmx.transport.Availability;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.FabricTraits;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
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
    /** Name of the socket file in a node directory on which peers open {@link io.rdmx.transport.Bell bells}. */
    public static final String BELL_FILE = "bell";
    /** {@link io.rdmx.transport.selector.SelectorNode#FOLLOW_GRACE_PROP}, for shm and tcp nodes alike. */
    public static final String FOLLOW_GRACE_PROP = io.rdmx.transport.selector.SelectorNode.FOLLOW_GRACE_PROP;
    /** Default of {@link #FOLLOW_GRACE_PROP}. */
    public static final long FOLLOW_GRACE_DEFAULT_MICROS =
        io.rdmx.transport.selector.SelectorNode.FOLLOW_GRACE_DEFAULT_MICROS;

    private static final Logger LOG = LoggerFactory.getLogger(ShmFabric.class);

    /** Creates the provider (ServiceLoader). */
    public ShmFabric() {
    }

    @Override
    public String name() {
        return NAME;
    }

    /** Processes of this host, through memory: {@code auto}'s first choice for a peer on this host. */
    @Override
    public FabricTraits traits() {
        return new FabricTraits(FabricTraits.Reach.SAME_HOST, FabricTraits.Nic.NONE, 100);
    }

    /** A node's address is its directory under the shm root, by its name. */
    @Override
    public String addressOf(String nodeName, String hostAndPort) {
        return root().resolve(nodeName).toAbsolutePath().toString();
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
            return Availability.unusable("needs Linux (peer credentials of Unix-domain sockets, /proc/self, "
                + "memory-mapped region files)", "run on Linux (shm uses the JDK's Unix-domain sockets with "
                + "SO_PEERCRED, /proc/self and memory-mapped files; any os.arch)");
        }
        return Availability.usable("shared memory under " + root() + " + the JDK's Unix-domain sockets");
    }

    @Override
    public Node open(NodeOptions options) throws RdmxException {
        Availability a = availability();
        if (!a.usable()) {
            throw new RdmxException("shm provider unusable here: " + a.reason());
        }
        io.rdmx.transport.internal.CompletionQueueImpl.followerReads(); // a bad value fails before any file is made
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

    /**
     * @param dir a node's directory
     * @param scope a connection's scope token (16 hex digits)
     * @return the directory of the region files granted to that connection
     */
    static Path scopeDir(Path dir, String scope) {
        return dir.resolve("s-" + scope);
    }

    /**
     * @param dir a node's directory, or a scope directory in it
     * @param remoteKey a region's key
     * @return the file of a region peers WRITE into and do not READ ({@code r-<key>})
     */
    static Path regionFile(Path dir, int remoteKey) {
        return dir.resolve(String.format("r-%08x", remoteKey));
    }

    /**
     * The file of a region of memory, by what peers may do with it: its name says it, so a peer maps a file only for
     * what the owner allowed ({@code r-<key>}: WRITE, {@code q-<key>}: READ, {@code b-<key>}: both).
     *
     * @param dir a node's directory, or a scope directory in it
     * @param remoteKey the region's key
     * @param access the region's access flags ({@link io.rdmx.transport.Access#REMOTE_WRITE} or
     *     {@link io.rdmx.transport.Access#REMOTE_READ} or both)
     * @return the file
     */
    static Path regionFile(Path dir, int remoteKey, int access) {
        boolean write = (access & io.rdmx.transport.Access.REMOTE_WRITE) != 0;
        boolean read = (access & io.rdmx.transport.Access.REMOTE_READ) != 0;
        return write && !read ? regionFile(dir, remoteKey)
            : dir.resolve(String.format(write ? "b-%08x" : "q-%08x", remoteKey));
    }
}
