package io.rdmx.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Access;
import io.rdmx.transport.Completion;
import io.rdmx.transport.Connection;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Post;
import io.rdmx.transport.ProtocolException;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Region;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.Status;
import io.rdmx.transport.WorkRequest;
import io.rdmx.transport.selector.SocketConnection;
import io.rdmx.transport.testsuite.Completions;
import io.rdmx.transport.wire.FrameBuffers;
import io.rdmx.transport.wire.FrameDescriptor;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * READ on the tcp wire against a peer that does not play by the rules (a raw socket speaking the protocol): a READ
 * of 2 GiB, of an unknown key, at a negative offset is refused with a READ_ANSWER naming the value, and the
 * connection stays up; a flood of READs whose answers the peer never reads leaves a bounded queue at the node,
 * whose other connections keep working; an answer nobody asked for, of the wrong length, or an ACK that overtakes
 * an answer closes that one connection with a protocol error naming the peer.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpReadWireTest {
    private static final AtomicInteger SEQ = new AtomicInteger();
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final int REGION = 16 << 10;
    private final List<Node> nodes = new ArrayList<>();
    private Node server;
    private Region readable;

    private Node open(String role) throws RdmxException {
        Node n = new TcpFabric().open(NodeOptions.builder().name(role + "-" + SEQ.incrementAndGet())
            .maxTransferSize(1 << 20).build());
        nodes.add(n);
        return n;
    }

    @BeforeEach
    void setUp() throws Exception {
        server = open("server");
        readable = server.register(REGION, Access.LOCAL_WRITE | Access.REMOTE_READ, "readable");
        byte[] b = new byte[REGION];
        new Random(3).nextBytes(b);
        readable.buffer().put(b);
    }

    @AfterEach
    void tearDown() {
        nodes.forEach(Node::close);
    }

    private static ByteBuffer readFrame(long seq, int rkey, long offset, int length) {
        ByteBuffer b = ByteBuffer.allocate(FrameDescriptor.READ_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        FrameBuffers.header(b, FrameDescriptor.TYPE_READ, 0, FrameDescriptor.READ_LENGTH, seq);
        b.putInt(rkey).putInt(0).putLong(offset).putInt(length).putInt(0);
        return b.flip();
    }

    private static ByteBuffer answerFrame(long seq, int status, byte[] payload) {
        ByteBuffer b = ByteBuffer.allocate(FrameDescriptor.ANSWER_HEADER_LENGTH + payload.length)
            .order(ByteOrder.LITTLE_ENDIAN);
        FrameBuffers.header(b, FrameDescriptor.TYPE_READ_ANSWER, 0, b.capacity(), seq);
        b.putShort((short) status).putShort((short) 0).putInt(payload.length).put(payload);
        return b.flip();
    }

    private static int status(RawPeer.Frame answer) {
        return ByteBuffer.wrap(answer.payload()).order(ByteOrder.LITTLE_ENDIAN).getShort(0) & 0xffff;
    }

    private static String message(RawPeer.Frame answer) {
        byte[] p = answer.payload();
        return new String(p, FrameDescriptor.ANSWER_HEADER_LENGTH - FrameDescriptor.HEADER_LENGTH,
            p.length - (FrameDescriptor.ANSWER_HEADER_LENGTH - FrameDescriptor.HEADER_LENGTH),
            java.nio.charset.StandardCharsets.UTF_8);
    }

    private static byte[] data(RawPeer.Frame answer) {
        byte[] p = answer.payload();
        return Arrays.copyOfRange(p, FrameDescriptor.ANSWER_HEADER_LENGTH - FrameDescriptor.HEADER_LENGTH, p.length);
    }

    private void assertServerStillWorks() throws Exception {
        Node other = open("other");
        Connection c = other.connect(server.address(), WAIT);
        Region into = other.register(256, Access.LOCAL_WRITE);
        assertEquals(Post.OK, c.post(WorkRequest.read(into, 0, 256, c.remoteRegion("readable"), 100).wrId(5)));
        Completion done = Completions.one(other);
        assertTrue(done.ok(), String.valueOf(done));
        byte[] want = new byte[256];
        readable.buffer().get(100, want);
        byte[] got = new byte[256];
        into.buffer().get(0, got);
        assertArrayEquals(want, got);
    }

    private static void assertClosedWith(Connection c, String text) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (c.isOpen() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        Throwable cause = c.closeCause();
        assertNotNull(cause, "connection still open");
        assertTrue(cause.getMessage().contains(text), "cause '" + cause.getMessage() + "' lacks '" + text + "'");
    }

    @Test
    void badReadsAreRefusedNamingTheValueAndTheConnectionServesTheNext() throws Exception {
        try (RawPeer raw = new RawPeer(server.address())) {
            List<RemoteRegion> regions = raw.handshake("raw-" + SEQ.incrementAndGet(), "127.0.0.1:1");
            Connection c = server.accept(WAIT);
            int key = regions.get(0).remoteKey();
            Object[][] bad = {
                {readFrame(1, key, 0, Integer.MIN_VALUE), "length=" + Integer.MIN_VALUE}, // 2 GiB, as an int
                {readFrame(2, key, 0, Integer.MAX_VALUE), "length=" + Integer.MAX_VALUE},
                {readFrame(3, key ^ 0x5555, 0, 64), "rkey=0x" + Integer.toHexString(key ^ 0x5555)},
                {readFrame(4, key, -5, 64), "offset=-5"},
                {readFrame(5, key, Long.MAX_VALUE - 3, 8), "offset=" + (Long.MAX_VALUE - 3)},
            };
            long seq = 0;
            for (Object[] b : bad) {
                raw.send((ByteBuffer) b[0]);
                RawPeer.Frame a = raw.expect(FrameDescriptor.TYPE_READ_ANSWER);
                assertNotNull(a, "no answer to READ " + b[1]);
                assertEquals(++seq, a.seq());
                assertEquals(Status.REMOTE_ACCESS_ERROR.ordinal(), status(a), message(a));
                assertTrue(message(a).contains((String) b[1]), "'" + message(a) + "' should name " + b[1]);
                assertTrue(message(a).contains(server.name()), message(a));
            }
            // a region longer than maxTransferSize (a file, say) is still read at most that much at once
            Region big = c.register((1 << 20) + 4096, Access.LOCAL_WRITE | Access.REMOTE_READ);
            raw.send(readFrame(++seq, big.remoteKey(), 0, (1 << 20) + 1));
            RawPeer.Frame tooLong = raw.expect(FrameDescriptor.TYPE_READ_ANSWER);
            assertEquals(seq, tooLong.seq());
            assertEquals(Status.REMOTE_ACCESS_ERROR.ordinal(), status(tooLong), message(tooLong));
            assertTrue(message(tooLong).contains("length=" + ((1 << 20) + 1)) && message(tooLong).contains(
                "maxTransferSize=" + (1 << 20)), message(tooLong));
            assertTrue(c.isOpen(), "refused READs leave the connection up: " + c.closeCause());
            raw.send(readFrame(++seq, key, 10, 100));
            RawPeer.Frame ok = raw.expect(FrameDescriptor.TYPE_READ_ANSWER);
            assertEquals(seq, ok.seq());
            assertEquals(Status.SUCCESS.ordinal(), status(ok));
            byte[] want = new byte[100];
            readable.buffer().get(10, want);
            assertArrayEquals(want, data(ok));
            RawPeer.Frame ack = raw.expect(FrameDescriptor.TYPE_ACK);
            assertEquals(seq, ack.seq(), "the ACK covering the READ follows its answer");
        }
        assertServerStillWorks();
    }

    @Test
    void aFloodOfReadsWhoseAnswersAreNotReadLeavesABoundedQueue() throws Exception {
        int n = 3000; // 3000 x 16 KiB = 47 MiB of answers, far above what the sockets buffer
        try (RawPeer raw = new RawPeer(server.address())) {
            List<RemoteRegion> regions = raw.handshake("raw-" + SEQ.incrementAndGet(), "127.0.0.1:1");
            SocketConnection c = (SocketConnection) server.accept(WAIT);
            int key = regions.get(0).remoteKey();
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            for (int i = 1; i <= n; i++) {
                all.write(RawPeer.bytes(readFrame(i, key, 0, REGION)));
            }
            // the node stops reading the flood once its answers back up: the raw peer's send blocks, so it sends
            // from another thread while this one watches the node
            CompletableFuture<Void> sent = CompletableFuture.runAsync(() -> {
                try {
                    raw.send(all.toByteArray());
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            int most = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            while (System.nanoTime() < deadline) {
                most = Math.max(most, c.queuedBuffers());
                Thread.onSpinWait();
            }
            assertTrue(most > 0, "the answers backed up (the test would prove nothing otherwise)");
            // a cork of answers (2 buffers each), the one that found the outbox full, and an ACK or two
            assertTrue(most <= 2 * 16 + 8, "queued buffers=" + most);
            assertTrue(c.isOpen(), String.valueOf(c.closeCause()));
            assertServerStillWorks(); // the node's I/O thread serves its other connections meanwhile
            // now the peer reads: every READ is answered, in order, with the region's bytes
            byte[] want = new byte[REGION];
            readable.buffer().get(0, want);
            for (int i = 1; i <= n; i++) {
                RawPeer.Frame a = raw.expect(FrameDescriptor.TYPE_READ_ANSWER);
                assertNotNull(a, "answer " + i);
                assertEquals(i, a.seq());
                if (i % 500 == 0 || i == n) {
                    assertArrayEquals(want, data(a), "answer " + i);
                }
            }
            sent.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertTrue(c.isOpen(), String.valueOf(c.closeCause()));
        }
    }

    /** The server posts a READ to the raw peer, which answers as the case says; the server's side must close. */
    private void badAnswer(java.util.function.BiConsumer<RawPeer, RawPeer.Frame> answer, String expected)
        throws Exception {
        try (RawPeer raw = new RawPeer(server.address())) {
            raw.handshake("raw-" + SEQ.incrementAndGet(), "127.0.0.1:1");
            Connection c = server.accept(WAIT);
            Region into = server.register(4096, Access.LOCAL_WRITE);
            assertEquals(Post.OK, c.post(WorkRequest.read(into, 0, 100, new RemoteRegion(0, 4096, 0x77), 0)
                .wrId(9)));
            RawPeer.Frame read = raw.expect(FrameDescriptor.TYPE_READ);
            assertNotNull(read);
            answer.accept(raw, read);
            RawPeer.Frame err = raw.expect(FrameDescriptor.TYPE_ERROR);
            assertNotNull(err, "expected an ERROR frame before the close");
            assertTrue(err.text().contains(expected), err.text());
            assertClosedWith(c, expected);
            assertInstanceOf(ProtocolException.class, c.closeCause());
            assertTrue(c.closeCause().getMessage().contains(c.peerName()), c.closeCause().getMessage());
            Completion flushed = Completions.one(server);
            assertEquals(9, flushed.wrId());
            assertTrue(flushed.status() == Status.FLUSHED || flushed.status() == Status.REMOTE_ACCESS_ERROR,
                String.valueOf(flushed));
        }
        assertServerStillWorks();
    }

    private static void send(RawPeer raw, ByteBuffer b) {
        try {
            raw.send(b);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void anAnswerToNoReadIsAProtocolError() throws Exception {
        badAnswer((raw, read) -> send(raw, answerFrame(read.seq() + 7, 0, new byte[100])),
            "for seq=8, which is not the oldest unanswered READ");
    }

    @Test
    void anAnswerOfTheWrongLengthIsAProtocolError() throws Exception {
        badAnswer((raw, read) -> send(raw, answerFrame(read.seq(), 0, new byte[50])),
            "has length=50, the READ asked for length=100");
    }

    @Test
    void anAckThatOvertakesTheAnswerIsAProtocolError() throws Exception {
        badAnswer((raw, read) -> send(raw, ByteBuffer.wrap(RawPeer.header(FrameDescriptor.VERSION,
            FrameDescriptor.TYPE_ACK, 0, FrameDescriptor.HEADER_LENGTH, read.seq()))), "without answering it");
    }

    @Test
    void aRefusalWithAStatusThatIsNotARefusalOfAReadIsAProtocolError() throws Exception {
        badAnswer((raw, read) -> send(raw, answerFrame(read.seq(), Status.FLUSHED.ordinal(), "no".getBytes(
            java.nio.charset.StandardCharsets.UTF_8))), "status=FLUSHED");
    }
}
