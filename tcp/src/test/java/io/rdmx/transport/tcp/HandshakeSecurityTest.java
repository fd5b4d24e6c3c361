package io.rdmx.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.wire.FrameDescriptor;
import io.rdmx.transport.wire.FrameBuffers;
import io.rdmx.transport.Access;
import io.rdmx.transport.Connection;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RdmxTimeoutException;
import io.rdmx.transport.Region;
import io.rdmx.transport.internal.AbstractNode;
import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The handshake against peers that do not have the cluster secret or do not play by the rules: a reflected
 * proof, descriptors before authentication, a flood of half-open handshakes, a slow drip. Each was a hole in
 * the first protocol version; each test fails on it.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class HandshakeSecurityTest {
    private static final AtomicInteger SEQ = new AtomicInteger();
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final SecureRandom RANDOM = new SecureRandom();
    private final List<Node> nodes = new ArrayList<>();

    private Node open(String role, UnaryOperator<NodeOptions.Builder> tweak) throws RdmxException {
        Node n = new TcpFabric().open(tweak.apply(NodeOptions.builder().name(role + "-" + SEQ.incrementAndGet()))
            .build());
        nodes.add(n);
        return n;
    }

    @AfterEach
    void tearDown() {
        nodes.forEach(Node::close);
    }

    private static byte[] nonce() {
        byte[] n = new byte[FrameDescriptor.NONCE_LENGTH];
        RANDOM.nextBytes(n);
        return n;
    }

    private static void hello(RawPeer raw, boolean secret, byte[] nonce, String name) throws IOException {
        raw.send(FrameBuffers.hello(new FrameBuffers.Hello(secret, nonce, name, "127.0.0.1:9")));
    }

    /** Reads frames (skipping PING and ACK) until one of the wanted types, ERROR, or the end of the stream. */
    private static RawPeer.Frame until(RawPeer raw, List<RawPeer.Frame> seen, int... types) throws IOException {
        while (true) {
            RawPeer.Frame f = raw.read();
            if (f == null) {
                return null;
            }
            seen.add(f);
            if (f.type() == FrameDescriptor.TYPE_ERROR) {
                return f;
            }
            for (int t : types) {
                if (f.type() == t) {
                    return f;
                }
            }
        }
    }

    private static void assertNeverReady(RawPeer raw, List<RawPeer.Frame> seen) throws IOException {
        RawPeer.Frame end = until(raw, seen, FrameDescriptor.TYPE_READY);
        assertTrue(end == null || end.type() == FrameDescriptor.TYPE_ERROR,
            "the server established a connection with a peer that has no secret");
    }

    @Test
    void aProofReflectedFromAnotherConnectionDoesNotAuthenticate() throws Exception {
        Node guarded = open("guarded", b -> b.secret("s3cret"));
        guarded.register(4096, Access.ALL);
        // the attack of the first version: claim the server's own name, feed the server's nonce back to it on a
        // second connection and replay the proof it computes; and the same with a name of the attacker's own
        for (String claimed : List.of(guarded.name(), "mallory")) {
            try (RawPeer c1 = new RawPeer(guarded.address()); RawPeer c2 = new RawPeer(guarded.address())) {
                List<RawPeer.Frame> seen = new ArrayList<>();
                hello(c1, true, nonce(), claimed);
                RawPeer.Frame h1 = until(c1, seen, FrameDescriptor.TYPE_HELLO);
                assertNotNull(h1, "no answer to a HELLO");
                if (h1.type() == FrameDescriptor.TYPE_ERROR) {
                    assertEquals(guarded.name(), claimed, "only the stolen name is refused at once: " + h1.text());
                    assertTrue(h1.text().contains("the name of node"), h1.text());
                    continue;
                }
                byte[] serverNonce = java.util.Arrays.copyOf(h1.payload(), FrameDescriptor.NONCE_LENGTH);
                hello(c2, true, serverNonce, claimed);
                RawPeer.Frame proof = until(c2, new ArrayList<>(), FrameDescriptor.TYPE_AUTH);
                assertNotNull(proof);
                if (proof.type() == FrameDescriptor.TYPE_ERROR) {
                    continue; // refused on the second connection: nothing to replay
                }
                c1.send(FrameBuffers.auth(proof.payload()));
                c1.send(FrameBuffers.ready(List.of()));
                assertNeverReady(c1, seen);
                RawPeer.Frame err = seen.get(seen.size() - 1);
                assertTrue(err.text().contains("failed authentication"), err.text());
            }
        }
        assertThrows(RdmxTimeoutException.class, () -> guarded.accept(Duration.ofMillis(200)),
            "no connection may reach accept");
        Node friend = open("friend", b -> b.secret("s3cret"));
        assertEquals(guarded.name(), friend.connect(guarded.address(), WAIT).peerName(), "real peers still get in");
    }

    @Test
    void noRegionDescriptorLeavesTheNodeBeforeThePeerIsAuthenticated() throws Exception {
        Node guarded = open("guarded", b -> b.secret("s3cret"));
        Region r = guarded.register(4096, Access.ALL);
        List<RawPeer.Frame> seen = new ArrayList<>();
        try (RawPeer raw = new RawPeer(guarded.address())) {
            hello(raw, true, nonce(), "probe");
            assertNotNull(until(raw, seen, FrameDescriptor.TYPE_AUTH));
            raw.send(FrameBuffers.auth(new byte[FrameDescriptor.MAC_LENGTH]));
            raw.send(FrameBuffers.ready(List.of()));
            assertNeverReady(raw, seen);
        }
        byte[] key = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(r.remoteKey()).array();
        byte[] address = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(r.descriptor().address())
            .array();
        for (RawPeer.Frame f : seen) {
            assertNotEquals(FrameDescriptor.TYPE_READY, f.type());
            assertTrue(indexOf(f.payload(), key) < 0 && indexOf(f.payload(), address) < 0,
                FrameDescriptor.typeName(f.type()) + " frame carries a region descriptor before authentication");
        }
        assertTrue(seen.get(seen.size() - 1).text().contains("failed authentication"));
    }

    private static int indexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    @Test
    void anOversizedHelloIsRefusedOnItsHeader() throws Exception {
        Node server = open("server", b -> b);
        try (RawPeer raw = new RawPeer(server.address())) {
            raw.send(RawPeer.header(FrameDescriptor.VERSION, FrameDescriptor.TYPE_HELLO, 0, 1 << 20, 0));
            raw.send(new byte[100]);
            RawPeer.Frame err = until(raw, new ArrayList<>());
            assertNotNull(err, "expected an ERROR, the server waited for the rest of a 1 MiB HELLO");
            assertTrue(err.text().contains("HELLO frame length=1048576 exceeds the limit="
                + FrameDescriptor.MAX_HELLO_FRAME), err.text());
        }
    }

    @Test
    void aFrameTheHandshakeStepDoesNotExpectIsRefusedOnItsHeader() throws Exception {
        Node server = open("server", b -> b.secret("s3cret"));
        try (RawPeer raw = new RawPeer(server.address())) {
            hello(raw, true, nonce(), "early");
            assertNotNull(until(raw, new ArrayList<>(), FrameDescriptor.TYPE_AUTH));
            // a READY (up to 64 KiB) before the proof: refused before its payload is waited for
            raw.send(RawPeer.header(FrameDescriptor.VERSION, FrameDescriptor.TYPE_READY, 0,
                FrameDescriptor.MAX_READY_FRAME, 0));
            RawPeer.Frame err = until(raw, new ArrayList<>());
            assertNotNull(err);
            assertTrue(err.text().contains("READY frame from 'early' during the handshake, where AUTH was expected"),
                err.text());
        }
    }

    private static long directMemory() {
        for (BufferPoolMXBean p : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if (p.getName().equals("direct")) {
                return p.getMemoryUsed();
            }
        }
        return 0;
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

    @Test
    void pendingHandshakesAreCappedAndCostLittleMemory() throws Exception {
        // the node-wide cap alone (every raw peer here comes from 127.0.0.1: the cap per source is set to it)
        int cap = 64;
        AbstractNode server = (AbstractNode) open("server", b -> b.handshakeTimeout(Duration.ofMinutes(2))
            .maxPendingHandshakes(cap).maxPendingHandshakesPerSource(cap));
        long before = directMemory();
        List<RawPeer> raws = new ArrayList<>();
        try {
            // each holds the largest HELLO a node buffers before authentication, but one byte
            byte[] partial = new byte[FrameDescriptor.MAX_HELLO_FRAME - 1];
            System.arraycopy(RawPeer.header(FrameDescriptor.VERSION, FrameDescriptor.TYPE_HELLO, 0,
                FrameDescriptor.MAX_HELLO_FRAME, 0), 0, partial, 0, FrameDescriptor.HEADER_LENGTH);
            for (int i = 0; i < 200; i++) {
                RawPeer raw = new RawPeer(server.address());
                raws.add(raw);
                if (i < cap) {
                    raw.send(partial);
                    int want = i + 1;
                    await(() -> server.pendingHandshakes() == want, "handshake " + want + " is pending");
                } else {
                    RawPeer.Frame err = until(raw, new ArrayList<>());
                    assertNotNull(err, "connection " + i + " was neither refused nor answered");
                    assertTrue(err.text().contains("too many pending handshakes (maxPendingHandshakes=" + cap + ")"),
                        err.text());
                }
            }
            long grown = directMemory() - before;
            assertTrue(grown < 16L << 20, "200 unauthenticated connections took " + grown + " bytes of direct memory");
            Node late = open("late", b -> b);
            RdmxException e = assertThrows(RdmxException.class, () -> late.connect(server.address(), WAIT));
            assertTrue(e.getMessage().contains("maxPendingHandshakes=" + cap), e.getMessage());
        } finally {
            for (RawPeer r : raws) {
                r.close();
            }
        }
        await(() -> server.pendingHandshakes() == 0, "the attackers' handshakes are released");
        Node friend = open("friend", b -> b);
        Connection c = friend.connect(server.address(), WAIT);
        assertEquals(server.name(), c.peerName(), "legitimate handshakes succeed once the attacker left");
    }

    @Test
    void aSlowDripIsCutAtTheHandshakeDeadline() throws Exception {
        Node server = open("server", b -> b.handshakeTimeout(Duration.ofMillis(1000)).peerTimeout(WAIT));
        byte[] ping = RawPeer.header(FrameDescriptor.VERSION, FrameDescriptor.TYPE_PING, 0,
            FrameDescriptor.HEADER_LENGTH, 0);
        byte[] helloHeader = RawPeer.header(FrameDescriptor.VERSION, FrameDescriptor.TYPE_HELLO, 0,
            FrameDescriptor.MAX_HELLO_FRAME, 0);
        // a peer that keeps the connection busy with PINGs after its HELLO, and one that sends a HELLO a byte
        // at a time: neither may hold a handshake open past the deadline
        for (boolean pings : new boolean[] {true, false}) {
            try (RawPeer raw = new RawPeer(server.address())) {
                AtomicReference<RawPeer.Frame> end = new AtomicReference<>();
                Thread reader = new Thread(() -> {
                    try {
                        end.set(until(raw, new ArrayList<>()));
                    } catch (IOException e) {
                        end.set(new RawPeer.Frame(-1, 0, 0, e.toString().getBytes()));
                    }
                }, "drip-reader");
                if (pings) {
                    hello(raw, false, nonce(), "dripper");
                } else {
                    raw.send(new byte[] {helloHeader[0]});
                }
                reader.start();
                // the attacker's pace: a frame or a byte every 20 ms, for at most 20 s
                for (int i = 1; i < 1000 && reader.isAlive(); i++) {
                    try {
                        raw.send(pings ? ping : new byte[] {helloHeader[Math.min(i, helloHeader.length - 1)]});
                    } catch (IOException closed) {
                        break;
                    }
                    Thread.sleep(20);
                }
                reader.join(WAIT.toMillis());
                RawPeer.Frame err = end.get();
                assertNotNull(err, "the dripping connection was never closed");
                assertTrue(err.text().contains("handshake not completed within handshakeTimeout=1000 ms"),
                    err.text());
            }
        }
        Node friend = open("friend", b -> b);
        assertEquals(server.name(), friend.connect(server.address(), WAIT).peerName());
    }

    @Test
    void oneSourceHoldingIdleHandshakesDoesNotKeepOtherHostsOut() throws Exception {
        int perSource = NodeOptions.MAX_PENDING_HANDSHAKES_PER_SOURCE_DEFAULT;
        AbstractNode server = (AbstractNode) open("server", b -> b.handshakeTimeout(Duration.ofMinutes(2)));
        List<RawPeer> raws = new ArrayList<>();
        try {
            // the attacking host is 127.0.0.2 (any 127/8 address reaches the node over loopback)
            for (int i = 0; i < perSource; i++) {
                RawPeer raw = new RawPeer(server.address(), "127.0.0.2");
                raws.add(raw);
                raw.send(RawPeer.header(FrameDescriptor.VERSION, FrameDescriptor.TYPE_HELLO, 0, 64, 0));
                int want = i + 1;
                await(() -> server.pendingHandshakes() == want, "handshake " + want + " is pending");
            }
            RawPeer more = new RawPeer(server.address(), "127.0.0.2");
            raws.add(more);
            RawPeer.Frame err = until(more, new ArrayList<>());
            assertNotNull(err, "one more connection from the same host is refused");
            assertTrue(err.text().contains("from 127.0.0.2 (maxPendingHandshakesPerSource=" + perSource + ")"),
                err.text());
            Node friend = open("friend", b -> b);
            Connection c = friend.connect(server.address(), WAIT);
            assertEquals(server.name(), c.peerName(), "a peer of another host is served meanwhile");
        } finally {
            for (RawPeer r : raws) {
                r.close();
            }
        }
        await(() -> server.pendingHandshakes() == 0, "the attacker's handshakes are released");
    }

    @Test
    void acceptedConnectionsAreCappedPerSourceAndPerNode() throws Exception {
        Node server = open("server", b -> b.maxConnections(3).maxConnectionsPerSource(2));
        List<RawPeer> raws = new ArrayList<>();
        try {
            for (int i = 0; i < 2; i++) {
                RawPeer raw = new RawPeer(server.address(), "127.0.0.3");
                raws.add(raw);
                raw.handshake("raw3-" + SEQ.incrementAndGet());
            }
            RawPeer third = new RawPeer(server.address(), "127.0.0.3");
            raws.add(third);
            third.send(FrameBuffers.hello(new FrameBuffers.Hello(false, nonce(),
                "raw3-" + SEQ.incrementAndGet(), "127.0.0.1:9")));
            RawPeer.Frame refused = until(third, new ArrayList<>());
            assertNotNull(refused);
            assertTrue(refused.text().contains("from 127.0.0.3 (maxConnectionsPerSource=2)"), refused.text());
            Node friend = open("friend", b -> b);
            friend.connect(server.address(), WAIT);
            RawPeer fourth = new RawPeer(server.address(), "127.0.0.4");
            raws.add(fourth);
            fourth.send(FrameBuffers.hello(new FrameBuffers.Hello(false, nonce(),
                "raw4-" + SEQ.incrementAndGet(), "127.0.0.1:9")));
            RawPeer.Frame err = until(fourth, new ArrayList<>());
            assertNotNull(err);
            assertTrue(err.text().contains("(maxConnections=3)"), err.text());
        } finally {
            for (RawPeer r : raws) {
                r.close();
            }
        }
    }
}
