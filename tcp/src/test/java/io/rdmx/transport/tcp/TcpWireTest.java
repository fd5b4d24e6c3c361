package io.rdmx.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.wire.FrameDescriptor;
import io.rdmx.transport.Access;
import io.rdmx.transport.Connection;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Post;
import io.rdmx.transport.ProtocolException;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RdmxTimeoutException;
import io.rdmx.transport.Region;
import io.rdmx.transport.Status;
import io.rdmx.transport.WorkRequest;
import io.rdmx.transport.testsuite.Completions;
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
 * Malformed input on the tcp wire: each bad frame gets a clear error, closes only its own connection, and the
 * node keeps serving others. Also the cluster secret and hung-peer detection.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpWireTest {
    private static final AtomicInteger SEQ = new AtomicInteger();
    private static final Duration WAIT = Duration.ofSeconds(10);
    private final List<Node> nodes = new ArrayList<>();
    private Node server;
    private Region target;

    private Node open(String role, java.util.function.UnaryOperator<NodeOptions.Builder> tweak) throws RdmxException {
        Node n = new TcpFabric().open(tweak.apply(NodeOptions.builder().name(role + "-" + SEQ.incrementAndGet()))
            .build());
        nodes.add(n);
        return n;
    }

    @BeforeEach
    void setUp() throws Exception {
        server = open("server", b -> b.maxTransferSize(1 << 20).peerTimeout(Duration.ofSeconds(5)));
        target = server.register(4096, Access.ALL);
    }

    @AfterEach
    void tearDown() {
        nodes.forEach(Node::close);
    }

    /** The server's connection to the raw peer, closed with a ProtocolException whose message contains text. */
    private void assertClosedWith(Connection c, String text) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (c.isOpen() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        Throwable cause = c.closeCause();
        assertNotNull(cause, "connection still open");
        assertTrue(cause.getMessage().contains(text), "cause '" + cause.getMessage() + "' lacks '" + text + "'");
    }

    private void assertServerStillWorks() throws Exception {
        Node other = open("other", b -> b);
        Connection c = other.connect(server.address(), WAIT);
        Region src = other.register(64, Access.ALL);
        src.buffer().putLong(0, 0x1122334455667788L);
        assertEquals(Post.OK, c.post(WorkRequest.write(src, 0, 8, target.descriptor(), 100)));
        assertTrue(Completions.one(other).ok());
        assertEquals(0x1122334455667788L, target.buffer().getLong(100));
    }

    private void badFrameAfterHandshake(byte[] frame, String expected) throws Exception {
        try (RawPeer raw = new RawPeer(server.address())) {
            raw.handshake("raw-" + SEQ.incrementAndGet());
            Connection c = server.accept(WAIT);
            raw.send(frame);
            RawPeer.Frame err = raw.expect(FrameDescriptor.TYPE_ERROR);
            assertNotNull(err, "expected an ERROR frame before the close");
            assertTrue(err.text().contains(expected), err.text());
            assertClosedWith(c, expected);
            assertInstanceOf(ProtocolException.class, c.closeCause());
        }
        assertServerStillWorks();
    }

    @Test
    void unknownVersionClosesOnlyThatConnection() throws Exception {
        badFrameAfterHandshake(RawPeer.header(9, FrameDescriptor.TYPE_SEND, 0, 16, 1),
            "unsupported frame version=9");
    }

    @Test
    void oversizedFrameClosesOnlyThatConnection() throws Exception {
        badFrameAfterHandshake(RawPeer.header(FrameDescriptor.VERSION, FrameDescriptor.TYPE_SEND, 0, (1 << 20) + 17, 1),
            "exceeds the limit=" + ((1 << 20) + 16));
    }

    @Test
    void unknownTypeClosesOnlyThatConnection() throws Exception {
        badFrameAfterHandshake(RawPeer.header(FrameDescriptor.VERSION, 77, 0, 16, 1), "unknown frame type=77");
    }

    @Test
    void outOfSequenceRequestIsRefused() throws Exception {
        badFrameAfterHandshake(RawPeer.header(FrameDescriptor.VERSION, FrameDescriptor.TYPE_SEND, 0, 16, 5),
            "seq=5, expected=1");
    }

    @Test
    void inconsistentWriteLengthIsRefused() throws Exception {
        var b = RawPeer.writeHeader(0, 1, target.remoteKey(), 0, 0, 100);
        b.putInt(FrameDescriptor.LENGTH_OFFSET, FrameDescriptor.WRITE_HEADER_LENGTH + 50);
        byte[] a = java.util.Arrays.copyOf(RawPeer.bytes(b), FrameDescriptor.WRITE_HEADER_LENGTH + 50);
        badFrameAfterHandshake(a, "dataLength=100 but carries 50 bytes");
    }

    @Test
    void truncatedFrameIsReportedAndWritesOnlyWhatArrived() throws Exception {
        Connection c;
        try (RawPeer raw = new RawPeer(server.address())) {
            raw.handshake("raw-" + SEQ.incrementAndGet());
            c = server.accept(WAIT);
            raw.send(RawPeer.writeHeader(0, 1, target.remoteKey(), 0, 0, 1000));
            raw.send(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
            // close only once the ten bytes were placed (the state, not a guess at how long that takes)
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (target.buffer().get(9) != 10 && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertEquals(10, target.buffer().get(9), "the bytes that arrived are placed as they arrive");
        }
        assertClosedWith(c, "truncated frame");
        assertTrue(c.closeCause().getMessage().contains("after 50 of 1040 bytes"), c.closeCause().getMessage());
        assertEquals(0, target.buffer().get(10), "no byte past what arrived");
        assertServerStillWorks();
    }

    @Test
    void garbageBeforeHandshakeIsRefusedWithoutAConnection() throws Exception {
        try (RawPeer raw = new RawPeer(server.address())) {
            raw.send(RawPeer.header(FrameDescriptor.VERSION, FrameDescriptor.TYPE_WRITE, 0, 40, 1));
            raw.send(new byte[24]);
            RawPeer.Frame err = raw.expect(FrameDescriptor.TYPE_ERROR);
            assertNotNull(err);
            assertTrue(err.text().contains("before the handshake completed"), err.text());
        }
        assertThrows(RdmxTimeoutException.class, () -> server.accept(Duration.ofMillis(200)));
        assertServerStillWorks();
    }

    @Test
    void writeWithWrongKeyGetsNakAndNothingIsWritten() throws Exception {
        try (RawPeer raw = new RawPeer(server.address())) {
            raw.handshake("raw-" + SEQ.incrementAndGet());
            Connection c = server.accept(WAIT);
            raw.send(RawPeer.writeHeader(0, 1, target.remoteKey() + 1, 0, 0, 8));
            raw.send(new byte[] {9, 9, 9, 9, 9, 9, 9, 9});
            RawPeer.Frame nak = raw.expect(FrameDescriptor.TYPE_NAK);
            assertNotNull(nak);
            assertEquals(1, nak.seq());
            assertEquals(Status.REMOTE_ACCESS_ERROR.ordinal(), nak.payload()[0]);
            assertArrayEquals(new byte[8], readTarget(0, 8));
            assertClosedWith(c, "rkey=0x" + Integer.toHexString(target.remoteKey() + 1));
        }
        assertServerStillWorks();
    }

    private byte[] readTarget(int off, int len) {
        byte[] b = new byte[len];
        target.buffer().get(off, b);
        return b;
    }

    @Test
    void silentPeerIsDetectedAsHung() throws Exception {
        // 2 s, not less: the test thread must accept and post its receive within the timeout on a loaded machine
        Node strict = open("strict", b -> b.peerTimeout(Duration.ofSeconds(2)));
        try (RawPeer raw = new RawPeer(strict.address())) {
            raw.handshake("raw-" + SEQ.incrementAndGet());
            Connection c = strict.accept(WAIT);
            Region r = strict.register(64, Access.ALL);
            assertEquals(Post.OK, c.post(WorkRequest.recv(r, 0, 64).wrId(5)));
            var got = Completions.one(strict);
            assertEquals(Status.FLUSHED, got.status());
            assertTrue(got.detail().contains("silent for 2000 ms"), got.detail());
            assertTrue(got.detail().contains("raw-"), got.detail());
        }
    }

    @Test
    void clusterSecretIsChecked() throws Exception {
        Node guarded = open("guarded", b -> b.secret("s3cret"));
        Node none = open("nosecret", b -> b.secret(null));
        RdmxException e = assertThrows(RdmxException.class, () -> none.connect(guarded.address(), WAIT));
        assertTrue(e.getMessage().contains("cluster secret mismatch"), e.getMessage());
        Node wrong = open("wrong", b -> b.secret("guess"));
        e = assertThrows(RdmxException.class, () -> wrong.connect(guarded.address(), WAIT));
        assertTrue(e.getMessage().contains("failed authentication"), e.getMessage());
        Node right = open("right", b -> b.secret("s3cret"));
        Connection c = right.connect(guarded.address(), WAIT);
        assertEquals(guarded.name(), c.peerName());
        assertEquals(right.name(), guarded.accept(WAIT).peerName());
        assertThrows(RdmxTimeoutException.class, () -> guarded.accept(Duration.ofMillis(100)),
            "refused peers never reach accept");
    }
}
