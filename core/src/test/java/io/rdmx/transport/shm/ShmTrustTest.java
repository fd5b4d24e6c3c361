package io.rdmx.transport.shm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmx.transport.Access;
import io.rdmx.transport.Completion;
import io.rdmx.transport.Connection;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Post;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Region;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.Status;
import io.rdmx.transport.WorkRequest;
import io.rdmx.transport.wire.FrameBuffers;
import io.rdmx.transport.wire.FrameDescriptor;
import io.rdmx.transport.testsuite.Completions;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shm provider does not trust a path another local user could have prepared: a root of another owner, a
 * root open to everyone, links, a peer advertising a directory other than the one dialed.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShmTrustTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final int NOBODY = 65534;

    @TempDir
    Path tmp;

    private final List<Node> nodes = new ArrayList<>();

    @AfterEach
    void tearDown() {
        nodes.forEach(Node::close);
    }

    private Node open(Path root, String name) throws RdmxException {
        Node n = new ShmFabric().open(NodeOptions.builder().name(name).bindAddress(root.resolve(name).toString())
            .build());
        nodes.add(n);
        return n;
    }

    private Path dir(String name, String mode) throws IOException {
        Path d = Files.createDirectory(tmp.resolve(name));
        Files.setPosixFilePermissions(d, PosixFilePermissions.fromString(mode));
        return d;
    }

    @Test
    void aRootOwnedByAnotherUserIsRefused() throws Exception {
        assumeTrue(ShmTrust.myUid() == 0, "only root can give a directory to another user here (running as uid="
            + ShmTrust.myUid() + ")");
        Path root = dir("theirs", "rwx------");
        Files.setAttribute(root, "unix:uid", NOBODY);
        RdmxException e = assertThrows(RdmxException.class, () -> open(root, "victim"));
        assertTrue(e.getMessage().contains("shm root " + root + " is owned by uid=" + NOBODY), e.getMessage());
        assertTrue(Files.notExists(root.resolve("victim")), "nothing created under it");
    }

    @Test
    void aRootWritableByOthersIsRefused() throws Exception {
        Path root = dir("open", "rwxrwxrwx");
        RdmxException e = assertThrows(RdmxException.class, () -> open(root, "victim"));
        assertTrue(e.getMessage().contains("writable by group or others (mode=rwxrwxrwx)"), e.getMessage());
        assertTrue(e.getMessage().contains(ShmFabric.ROOT_PROP), "says how to fix it: " + e.getMessage());
    }

    @Test
    void aRootThatIsALinkIsRefused() throws Exception {
        Path real = dir("real", "rwx------");
        Path link = Files.createSymbolicLink(tmp.resolve("link"), real);
        RdmxException e = assertThrows(RdmxException.class, () -> open(link, "victim"));
        assertTrue(e.getMessage().contains("is a symbolic link"), e.getMessage());
        Node ok = open(real, "fine");
        assertTrue(ok.isOpen(), "the real directory is fine");
    }

    @Test
    void aRegionFileReplacedByALinkIsNotWrittenThrough() throws Exception {
        Path root = dir("root", "rwx------");
        Node server = open(root, "server");
        Node client = open(root, "client");
        Region target = server.register(4096, Access.ALL);
        Path victim = Files.write(tmp.resolve("victim"), new byte[4096]);
        Files.setPosixFilePermissions(victim, PosixFilePermissions.fromString("rw-------"));
        Path file = ShmFabric.regionFile(root.resolve("server"), target.remoteKey());
        Files.delete(file);
        Files.createSymbolicLink(file, victim);
        Connection c = client.connect(server.address(), WAIT);
        Region src = client.register(64, Access.ALL);
        src.buffer().putLong(0, -1L);
        assertEquals(Post.OK, c.post(WorkRequest.write(src, 0, 8, target.descriptor(), 0)));
        Completion done = Completions.one(client);
        assertEquals(Status.REMOTE_ACCESS_ERROR, done.status(), String.valueOf(done));
        assertTrue(done.detail().contains("is a symbolic link"), done.detail());
        assertArrayEquals(new byte[4096], Files.readAllBytes(victim), "the link's target was written");
    }

    @Test
    void writesGoToTheDialedDirectoryNeverToTheOneThePeerAdvertises() throws Exception {
        Path root = dir("root", "rwx------");
        Node client = open(root, "client");
        // a decoy: a directory of ours with a region file a fake peer wants us to write into
        Path decoy = Files.createDirectory(root.resolve("decoy"));
        int key = 0x5eed;
        Path decoyFile = Files.write(ShmFabric.regionFile(decoy, key), new byte[4096]);
        Files.setPosixFilePermissions(decoyFile, PosixFilePermissions.fromString("rw-------"));
        Path dialed = Files.createDirectory(root.resolve("fake"));
        AtomicReference<Throwable> peerFailure = new AtomicReference<>();
        try (ServerSocketChannel ss = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            ss.bind(UnixDomainSocketAddress.of(dialed.resolve(ShmFabric.SOCKET_FILE)));
            Thread fake = new Thread(() -> {
                try (SocketChannel ch = ss.accept()) {
                    readFrame(ch);
                    write(ch, FrameBuffers.hello(new FrameBuffers.Hello(false,
                        new byte[FrameDescriptor.NONCE_LENGTH], "fake", decoy.toString())));
                    readFrame(ch);
                    write(ch, FrameBuffers.ready(List.of(new RemoteRegion(0, 4096, key))));
                    while (readFrame(ch) != null) {
                        // hold the connection until the client goes
                    }
                } catch (IOException | RuntimeException e) {
                    peerFailure.set(e);
                }
            }, "fake-shm-peer");
            fake.setDaemon(true);
            fake.start();
            Connection c = client.connect(dialed.toString(), WAIT);
            assertEquals(1, c.remoteRegions().size());
            Region src = client.register(64, Access.ALL);
            src.buffer().putLong(0, -1L);
            assertEquals(Post.OK, c.post(WorkRequest.write(src, 0, 8, c.remoteRegions().get(0), 0)));
            Completion done = Completions.one(client);
            assertEquals(Status.REMOTE_ACCESS_ERROR, done.status(), String.valueOf(done));
            assertTrue(done.detail().contains(dialed.toString()), "names the dialed directory: " + done.detail());
            assertArrayEquals(new byte[4096], Files.readAllBytes(decoyFile), "the advertised directory was written");
        }
        assertEquals(null, peerFailure.get());
    }

    private static void write(SocketChannel ch, ByteBuffer nio) throws IOException {
        while (nio.hasRemaining()) {
            ch.write(nio);
        }
    }

    private static byte[] readFrame(SocketChannel ch) throws IOException {
        ByteBuffer h = ByteBuffer.allocate(FrameDescriptor.HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        if (!fill(ch, h)) {
            return null;
        }
        int length = h.getInt(FrameDescriptor.LENGTH_OFFSET);
        assertTrue(length >= FrameDescriptor.HEADER_LENGTH && length < 1 << 20, "frame length=" + length);
        ByteBuffer body = ByteBuffer.allocate(length - FrameDescriptor.HEADER_LENGTH);
        assertNotNull(fill(ch, body) ? body : null);
        return body.array();
    }

    private static boolean fill(SocketChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (ch.read(b) < 0) {
                return false;
            }
        }
        return true;
    }
}
