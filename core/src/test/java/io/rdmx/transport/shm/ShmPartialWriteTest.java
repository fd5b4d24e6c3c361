package io.rdmx.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Access;
import io.rdmx.transport.Completion;
import io.rdmx.transport.Connection;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.Post;
import io.rdmx.transport.Region;
import io.rdmx.transport.Status;
import io.rdmx.transport.WorkRequest;
import io.rdmx.transport.testsuite.Completions;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A frame larger than the socket takes at once: the posting thread writes what fits and leaves the rest to the I/O
 * thread without copying the payload (the posted request's source region stays unchanged until the peer
 * acknowledged it), and every byte arrives in order.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShmPartialWriteTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    /** Far above a Unix-domain socket's send buffer (about 200 KiB by default): the first write is partial. */
    private static final int SIZE = 8 << 20;

    @TempDir
    Path tmp;

    private final List<Node> nodes = new ArrayList<>();

    @AfterEach
    void tearDown() {
        nodes.forEach(Node::close);
    }

    private Node open(Path root, String name) throws Exception {
        Node n = new ShmFabric().open(NodeOptions.builder().name(name).bindAddress(root.resolve(name).toString())
            .maxTransferSize(SIZE).build());
        nodes.add(n);
        return n;
    }

    @Test
    void theRestOfALargeSendIsWrittenFromItsRegionNotFromACopy() throws Exception {
        Path root = Files.createDirectory(tmp.resolve("root"),
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Node server = open(root, "server");
        Node client = open(root, "client");
        Connection c = client.connect(server.address(), WAIT);
        Connection s = server.accept(WAIT);
        Region dst = server.register(SIZE, Access.ALL);
        assertEquals(Post.OK, s.post(WorkRequest.recv(dst, 0, SIZE)));
        Region src = client.register(SIZE, Access.ALL);
        for (int i = 0; i < SIZE; i += 8) {
            src.buffer().putLong(i, i * 0x9E3779B97F4A7C15L);
        }
        com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long id = Thread.currentThread().getId();
        WorkRequest send = WorkRequest.send(src, 0, SIZE);
        long before = threads.getThreadAllocatedBytes(id);
        assertEquals(Post.OK, c.post(send));
        long allocated = threads.getThreadAllocatedBytes(id) - before;
        // a copy of what the socket did not take would be most of the 8 MiB
        assertTrue(allocated < 64 << 10, "the posting thread allocated " + allocated + " bytes for a " + SIZE
            + "-byte SEND the socket took only in part: the rest was copied");
        Completion got = Completions.one(server);
        assertEquals(Status.SUCCESS, got.status(), String.valueOf(got));
        assertEquals(Opcode.RECV, got.opcode());
        assertEquals(SIZE, got.byteLength());
        for (int i = 0; i < SIZE; i += 8) {
            if (dst.buffer().getLong(i) != i * 0x9E3779B97F4A7C15L) {
                throw new AssertionError("byte " + i + " of the SEND arrived wrong");
            }
        }
        Completion sent = Completions.one(client);
        assertEquals(Status.SUCCESS, sent.status(), String.valueOf(sent));
        assertEquals(Opcode.SEND, sent.opcode());
    }
}
