package io.rdmx.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.rdmx.transport.wire.FrameDescriptor;
import io.rdmx.transport.Access;
import io.rdmx.transport.Connection;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.Post;
import io.rdmx.transport.Region;
import io.rdmx.transport.WorkRequest;
import io.rdmx.transport.capability.InlineCompletions;
import io.rdmx.transport.selector.SocketConnection;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Acknowledgements on the tcp wire are batched: one cumulative ACK per read from the socket, and none for
 * frames marked {@link FrameDescriptor#FLAG_UNSIGNALED} (a later ACK covers them); a frame that a completion of
 * the read posts on the I/O thread (a reply, a notification whose slot an ACK freed) leaves with that ACK in one
 * write system call. Driven by a raw peer, so the frames on the wire are exactly the ones counted.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpAckBatchingTest {
    private static final AtomicInteger SEQ = new AtomicInteger();
    private Node server;
    private Region target;

    @BeforeEach
    void setUp() throws Exception {
        server = new TcpFabric().open(NodeOptions.builder().name("acks-" + SEQ.incrementAndGet()).build());
        target = server.register(4096, Access.ALL);
    }

    @AfterEach
    void tearDown() {
        server.close();
    }

    /** WRITE frame {@code seq} placing 8 bytes of value {@code seq} at offset 8 * seq. */
    private byte[] write(long seq, int flags) {
        byte[] h = RawPeer.bytes(RawPeer.writeHeader(flags, seq, target.remoteKey(), 0, 8 * seq, 8));
        byte[] a = java.util.Arrays.copyOf(h, h.length + 8);
        java.nio.ByteBuffer.wrap(a, FrameDescriptor.WRITE_HEADER_LENGTH, 8).order(java.nio.ByteOrder.LITTLE_ENDIAN)
            .putLong(seq);
        return a;
    }

    private void awaitPlaced(long seq) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (target.buffer().getLong((int) (8 * seq)) != seq && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertEquals(seq, target.buffer().getLong((int) (8 * seq)), "WRITE seq=" + seq + " not placed");
    }

    @Test
    void framesOfOneReadAreAcknowledgedByOneCumulativeAck() throws Exception {
        try (RawPeer raw = new RawPeer(server.address())) {
            raw.handshake("raw-" + SEQ.incrementAndGet());
            server.accept(Duration.ofSeconds(10));
            // eight signaled WRITEs in one segment: one read at the server
            raw.send(RawPeer.concat(write(1, 0), write(2, 0), write(3, 0), write(4, 0), write(5, 0), write(6, 0),
                write(7, 0), write(8, 0)));
            RawPeer.Frame ack = raw.readSkippingPings();
            assertNotNull(ack, "connection closed");
            assertEquals(FrameDescriptor.TYPE_ACK, ack.type(), FrameDescriptor.typeName(ack.type()));
            assertEquals(8, ack.seq(), "one ACK for the whole read, not one per frame");
            raw.send(write(9, 0));
            RawPeer.Frame second = raw.readSkippingPings();
            assertEquals(FrameDescriptor.TYPE_ACK, second.type());
            assertEquals(9, second.seq(), "no other ACK between the two");
        }
    }

    @Test
    void unsignaledFramesAreNotAcknowledgedUntilASignaledOne() throws Exception {
        try (RawPeer raw = new RawPeer(server.address())) {
            raw.handshake("raw-" + SEQ.incrementAndGet());
            server.accept(Duration.ofSeconds(10));
            raw.send(write(1, FrameDescriptor.FLAG_UNSIGNALED));
            raw.send(write(2, FrameDescriptor.FLAG_UNSIGNALED));
            raw.send(write(3, FrameDescriptor.FLAG_UNSIGNALED));
            awaitPlaced(3);
            // an ACK for 1..3 would have been written before the server reads the next frame
            raw.send(write(4, 0));
            RawPeer.Frame ack = raw.readSkippingPings();
            assertNotNull(ack, "connection closed");
            assertEquals(FrameDescriptor.TYPE_ACK, ack.type(), FrameDescriptor.typeName(ack.type()));
            assertEquals(4, ack.seq(), "the first ACK covers the unsignaled frames too; none was sent for them");
        }
    }

    @Test
    void aFramePostedByACompletionOfTheReadLeavesWithItsAckInOneWrite() throws Exception {
        try (RawPeer raw = new RawPeer(server.address())) {
            raw.handshake("raw-" + SEQ.incrementAndGet());
            Connection c = server.accept(Duration.ofSeconds(10));
            AtomicReference<Throwable> failed = new AtomicReference<>();
            CountDownLatch replied = new CountDownLatch(1);
            WorkRequest reply = WorkRequest.send(target, 0, 8).signaled(false);
            // inline: on the I/O thread that read the SEND, before the read's ACK is written
            InlineCompletions inline = c.capability(InlineCompletions.class).orElseThrow();
            inline.completionHandler((wrId, opcode, status, len, imm, hasImm, detail) -> {
                if (opcode == Opcode.RECV.ordinal()) {
                    try {
                        assertEquals(Post.OK, c.post(reply));
                    } catch (Throwable t) {
                        failed.set(t);
                    }
                    replied.countDown();
                }
            });
            assertEquals(Post.OK, c.post(WorkRequest.recv(target, 64, 64)));
            long before = ((SocketConnection) c).socketWrites();
            byte[] send = java.util.Arrays.copyOf(RawPeer.header(FrameDescriptor.VERSION, FrameDescriptor.TYPE_SEND,
                0, FrameDescriptor.HEADER_LENGTH + 8, 1), FrameDescriptor.HEADER_LENGTH + 8);
            raw.send(send);
            RawPeer.Frame first = raw.readSkippingPings();
            RawPeer.Frame second = raw.readSkippingPings();
            assertNotNull(second, "connection closed");
            assertEquals(true, replied.await(10, TimeUnit.SECONDS));
            assertEquals(null, failed.get());
            assertEquals(FrameDescriptor.TYPE_SEND, first.type(), "the reply, then the ACK of the read: "
                + FrameDescriptor.typeName(first.type()));
            assertEquals(FrameDescriptor.TYPE_ACK, second.type(), FrameDescriptor.typeName(second.type()));
            assertEquals(1, second.seq());
            assertEquals(1, ((SocketConnection) c).socketWrites() - before,
                "the reply and the ACK went out in separate write system calls");
        }
    }
}
