package io.rdmx.transport.shm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Access;
import io.rdmx.transport.Completion;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Post;
import io.rdmx.transport.Region;
import io.rdmx.transport.Status;
import io.rdmx.transport.WorkRequest;
import io.rdmx.transport.selector.SocketConnection;
import io.rdmx.transport.testsuite.Completions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which way a READ goes on shm: a region of the peer's memory that it lets this connection read is copied from its
 * mapped file by the posting thread (no frame on the socket); a file the peer registered ({@code registerFile}, at a
 * path of its choosing) is never opened by the reader, but served by the peer's I/O thread through a request frame.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ShmReadPathTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private Node server;
    private Node client;
    private SocketConnection c2s;
    private Region readable;
    private Region file;
    private Region sink;
    @TempDir
    Path tmp;

    @BeforeEach
    void setUp() throws Exception {
        ShmFabric f = new ShmFabric();
        server = f.open(NodeOptions.builder().name("srv-" + ProcessHandle.current().pid()).build());
        client = f.open(NodeOptions.builder().name("cli-" + ProcessHandle.current().pid()).build());
        readable = server.register(8192, Access.LOCAL_WRITE | Access.REMOTE_READ, "readable");
        byte[] b = new byte[8192];
        new Random(1).nextBytes(b);
        readable.buffer().put(b);
        Path data = tmp.resolve("data");
        new Random(2).nextBytes(b);
        Files.write(data, b);
        file = server.registerFile(data, 0, 8192, "file");
        sink = client.register(8192, Access.LOCAL_WRITE);
        c2s = (SocketConnection) client.connect(server.address(), WAIT);
        server.accept(WAIT);
    }

    @AfterEach
    void tearDown() {
        client.close();
        server.close();
    }

    private Completion read(String name, int length, long wrId) {
        try {
            assertEquals(Post.OK, c2s.post(WorkRequest.read(sink, 0, length, c2s.remoteRegion(name), 0).wrId(wrId)));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        return Completions.one(client);
    }

    @Test
    void aMemoryRegionIsReadFromItsMappingWithoutAFrame() throws Exception {
        long writes = c2s.socketWrites();
        Completion c = read("readable", 8192, 1);
        assertTrue(c.ok(), String.valueOf(c));
        assertArrayEquals(bytes(readable), bytes(sink));
        assertEquals(writes, c2s.socketWrites(), "no frame: the bytes were copied from the mapping");
        assertTrue(Files.exists(ShmFabric.regionFile(Path.of(server.address()), readable.remoteKey(),
            Access.REMOTE_READ)), "a readable region is a file of the owner's directory, named as readable only");
    }

    @Test
    void aFileRegionIsServedByTheOwnerThroughAFrame() throws Exception {
        long writes = c2s.socketWrites();
        Completion c = read("file", 8192, 2);
        assertTrue(c.ok(), String.valueOf(c));
        assertArrayEquals(bytes(file), bytes(sink));
        assertTrue(c2s.socketWrites() > writes, "the READ went to the owner as a request frame");
        try (var files = Files.list(Path.of(server.address()))) {
            assertTrue(files.noneMatch(p -> p.getFileName().toString().endsWith(
                String.format("%08x", file.remoteKey()))), "a registered file is never placed in the directory");
        }
    }

    @Test
    void aReleasedRegionIsNotReadFromAStaleMapping() throws Exception {
        assertTrue(read("readable", 64, 3).ok());
        assertTrue(readable.release());
        Completion c = read("readable", 64, 4);
        assertEquals(Status.REMOTE_ACCESS_ERROR, c.status(), String.valueOf(c));
        assertTrue(c2s.isOpen());
    }

    private static byte[] bytes(Region r) {
        byte[] b = new byte[r.length()];
        r.buffer().get(0, b);
        return b;
    }
}
