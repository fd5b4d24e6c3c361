package io.rdmx.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Connection;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.wire.FrameBuffers;
import io.rdmx.transport.wire.FrameDescriptor;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The handshake limits of the shm provider's JDK socket path, against a raw peer on the node's Unix-domain
 * socket: a frame the current step does not expect is refused on its header, pending handshakes are capped
 * ({@code maxPendingHandshakes}), a handshake that does not finish is cut at {@code handshakeTimeout}, and the
 * stream ending inside a handshake frame releases the slot.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShmHandshakeTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    Path tmp;

    private final List<Node> nodes = new ArrayList<>();
    private final List<SocketChannel> raws = new ArrayList<>();

    @AfterEach
    void tearDown() throws IOException {
        for (SocketChannel r : raws) {
            r.close();
        }
        nodes.forEach(Node::close);
    }

    private ShmNode open(String name, UnaryOperator<NodeOptions.Builder> opts) throws Exception {
        Path root = tmp.resolve("root");
        if (!Files.exists(root)) {
            Files.createDirectory(root, PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwx------")));
        }
        Node n = new ShmFabric().open(opts.apply(NodeOptions.builder().name(name)
            .bindAddress(root.resolve(name).toString())).build());
        nodes.add(n);
        return (ShmNode) n;
    }

    private SocketChannel raw(Node server) throws IOException {
        SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
        raws.add(ch);
        ch.connect(UnixDomainSocketAddress.of(Path.of(server.address()).resolve(ShmFabric.SOCKET_FILE)));
        ch.configureBlocking(false);
        return ch;
    }

    private static void send(SocketChannel ch, ByteBuffer b) throws IOException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (b.hasRemaining()) {
            ch.write(b);
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the node did not take " + b.remaining() + " more bytes");
            }
        }
    }

    /** Reads frames until an ERROR (returned as its text) or the end of the stream (null); fails after WAIT. */
    private static String untilError(SocketChannel ch) throws IOException {
        ByteBuffer in = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
        try (Selector s = Selector.open()) {
            ch.register(s, SelectionKey.OP_READ);
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (true) {
                in.flip();
                while (in.remaining() >= FrameDescriptor.HEADER_LENGTH) {
                    int length = in.getInt(in.position() + FrameDescriptor.LENGTH_OFFSET);
                    if (in.remaining() < length) {
                        break;
                    }
                    ByteBuffer f = in.slice(in.position(), length).order(ByteOrder.LITTLE_ENDIAN);
                    in.position(in.position() + length);
                    if (f.get(FrameDescriptor.TYPE_OFFSET) == FrameDescriptor.TYPE_ERROR) {
                        return FrameBuffers.text(f, FrameDescriptor.HEADER_LENGTH);
                    }
                }
                in.compact();
                long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (left <= 0) {
                    throw new AssertionError("no ERROR and no end of stream within " + WAIT);
                }
                s.select(left);
                s.selectedKeys().clear();
                if (ch.read(in) < 0) {
                    return null;
                }
            }
        }
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting until " + what);
            }
            Thread.sleep(2);
        }
    }

    private static ByteBuffer partialHello() {
        ByteBuffer b = ByteBuffer.allocate(FrameDescriptor.MAX_HELLO_FRAME - 1).order(ByteOrder.LITTLE_ENDIAN);
        FrameBuffers.header(b, FrameDescriptor.TYPE_HELLO, 0, FrameDescriptor.MAX_HELLO_FRAME, 0);
        return b.clear();
    }

    @Test
    void aFrameTheHandshakeStepDoesNotExpectIsRefusedOnItsHeader() throws Exception {
        ShmNode server = open("server", b -> b);
        SocketChannel ch = raw(server);
        ByteBuffer send = ByteBuffer.allocate(FrameDescriptor.HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        FrameBuffers.header(send, FrameDescriptor.TYPE_SEND, 0, FrameDescriptor.HEADER_LENGTH + 8, 1);
        send(ch, send.flip());
        String err = untilError(ch);
        assertNotNull(err, "the stream ended without an ERROR");
        assertTrue(err.contains("before the handshake completed"), err);
        await(() -> server.pendingHandshakes() == 0, "the refused handshake is released");
    }

    @Test
    void pendingHandshakesAreCapped() throws Exception {
        int cap = 4;
        ShmNode server = open("server", b -> b.maxPendingHandshakes(cap).handshakeTimeout(Duration.ofMinutes(2)));
        List<SocketChannel> held = new ArrayList<>();
        for (int i = 0; i < cap; i++) {
            SocketChannel ch = raw(server);
            send(ch, partialHello());
            held.add(ch);
            int want = i + 1;
            await(() -> server.pendingHandshakes() == want, "handshake " + want + " is pending");
        }
        String err = untilError(raw(server));
        assertNotNull(err, "connection " + (cap + 1) + " was neither refused nor answered");
        assertTrue(err.contains("too many pending handshakes (maxPendingHandshakes=" + cap + ")"), err);
        Node late = open("late", b -> b);
        RdmxException e = assertThrows(RdmxException.class, () -> late.connect(server.address(), WAIT));
        assertTrue(e.getMessage().contains("maxPendingHandshakes=" + cap), e.getMessage());
        for (SocketChannel ch : held) {
            ch.close(); // the stream ends inside a HELLO: each slot is released
        }
        await(() -> server.pendingHandshakes() == 0, "the held handshakes are released");
        Connection c = open("friend", b -> b).connect(server.address(), WAIT);
        assertEquals("server", c.peerName(), "legitimate handshakes succeed once the holders left");
    }

    @Test
    void aHandshakeThatDoesNotFinishIsCutAtTheDeadline() throws Exception {
        ShmNode server = open("server", b -> b.handshakeTimeout(Duration.ofMillis(300)));
        SocketChannel ch = raw(server);
        send(ch, partialHello());
        await(() -> server.pendingHandshakes() == 1, "the handshake is pending");
        String err = untilError(ch);
        assertNotNull(err, "the stream ended without an ERROR");
        assertTrue(err.contains("handshake not completed within handshakeTimeout=300 ms"), err);
        await(() -> server.pendingHandshakes() == 0, "the cut handshake is released");
    }
}
