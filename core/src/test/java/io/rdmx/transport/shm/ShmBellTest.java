package io.rdmx.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Bell;
import io.rdmx.transport.Connection;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.capability.Bells;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Bells of the shm provider ({@link Bells#openBell}, {@link Bells#ringBell}): a sleeper's socket the
 * peer writes a byte to, opened only for a node the peer has a connection to; bad requests are refused without
 * harm to the node; bells close with their connection.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShmBellTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final AtomicInteger SEQ = new AtomicInteger();
    private final List<Node> nodes = new ArrayList<>();
    private Node server;
    private Node client;
    private Connection c2s;
    private ShmConnection s2c;

    @BeforeEach
    void setUp() throws Exception {
        server = open("bserver");
        client = open("bclient");
        c2s = client.connect(server.address(), WAIT);
        s2c = (ShmConnection) server.accept(WAIT);
    }

    private Node open(String role) throws RdmxException {
        Node n = new ShmFabric().open(NodeOptions.builder().name(role + "-" + ProcessHandle.current().pid() + "-"
            + SEQ.incrementAndGet()).build());
        nodes.add(n);
        return n;
    }

    @AfterEach
    void tearDown() {
        for (Node n : nodes) {
            n.close();
        }
    }

    /** Reads what arrives on the bell within the wait; -1 at its end of stream. */
    private static int awaitBytes(SocketChannel ch) throws IOException {
        try (Selector s = Selector.open()) {
            ch.register(s, SelectionKey.OP_READ);
            ByteBuffer b = ByteBuffer.allocate(16);
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (System.nanoTime() < deadline) {
                s.select(100);
                int n = ch.read(b);
                if (n < 0) {
                    return -1;
                }
                if (b.position() > 0) {
                    return b.position();
                }
            }
            return 0;
        }
    }

    /** Sends a raw bell request and returns the peer's answer (4 bytes, little endian), or null if it closed. */
    private Integer rawRequest(int magic, String name) throws IOException {
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.connect(UnixDomainSocketAddress.of(Paths.get(server.address()).resolve(ShmFabric.BELL_FILE)));
            byte[] n = name.getBytes(StandardCharsets.UTF_8);
            ch.write(ByteBuffer.allocate(8 + n.length).order(ByteOrder.LITTLE_ENDIAN).putInt(magic)
                .putInt(n.length).put(n).flip());
            ByteBuffer ack = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
            while (ack.hasRemaining()) {
                if (ch.read(ack) < 0) {
                    return null;
                }
            }
            return ack.getInt(0);
        }
    }

    /** @return the client connection's bells (shm offers them) */
    private Bells bells() {
        return c2s.capability(Bells.class).orElseThrow();
    }

    @Test
    void aRingReachesTheBellsSocketOnly() throws Exception {
        Bell b = bells().openBell();
        Bell other = bells().openBell();
        try {
            assertTrue(b.slot() >= 0 && other.slot() >= 0 && b.slot() != other.slot(), b + " " + other);
            assertEquals(2, s2c.bells());
            assertTrue(s2c.ringBell(b.slot()));
            assertEquals(1, awaitBytes(b.channel()), "one byte per ring");
            ByteBuffer none = ByteBuffer.allocate(1);
            assertEquals(0, other.channel().read(none), "the other bell did not ring");
        } finally {
            b.close();
            other.close();
        }
    }

    @Test
    void unknownSlotsAreNotRungAndAClosedBellFreesItsSlot() throws Exception {
        assertFalse(s2c.ringBell(-1));
        assertFalse(s2c.ringBell(7));
        Bell b = bells().openBell();
        b.close();
        assertFalse(s2c.ringBell(b.slot()), "a ring on a bell its sleeper closed fails (the caller rings a doorbell)");
        assertEquals(0, s2c.bells(), "and frees its slot");
    }

    @Test
    void badRequestsAreRefusedAndTheNodeGoesOn() throws Exception {
        assertEquals(-1, rawRequest(0x12345678, client.name()), "bad magic refused");
        assertEquals(-1, rawRequest(ShmNode.BELL_MAGIC, "nobody"), "a node without a connection is refused");
        assertEquals(0, s2c.bells());
        Bell b = bells().openBell();
        try {
            assertTrue(s2c.ringBell(b.slot()), "the node still opens and rings bells");
            assertEquals(1, awaitBytes(b.channel()));
        } finally {
            b.close();
        }
    }

    @Test
    void bellsCloseWithTheirConnection() throws Exception {
        Bell b = bells().openBell();
        try {
            s2c.close();
            assertEquals(-1, awaitBytes(b.channel()), "the sleeper's side sees the end of stream");
            assertFalse(s2c.ringBell(b.slot()));
            ConnectionClosedException e = assertThrows(ConnectionClosedException.class, s2c::openBell);
            assertTrue(e.getMessage().contains(client.name()), e.getMessage());
        } finally {
            b.close();
        }
    }
}
