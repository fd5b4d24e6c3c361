package io.rdmx.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Access;
import io.rdmx.transport.Connection;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Post;
import io.rdmx.transport.Region;
import io.rdmx.transport.WorkRequest;
import io.rdmx.transport.selector.SocketConnection;
import io.rdmx.transport.wire.FrameDescriptor;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A WRITE or SEND payload larger than what one read of the socket brings is read straight into its region: only
 * the part that came in the read with its header goes through the connection's read buffer (at most that buffer,
 * 64 KiB), the rest is not copied a second time. The frames behind it, read in the same scattering read, are
 * handled as before. Driven by a raw peer, so the bytes on the wire are exactly the ones counted.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpDirectReadTest {
    private static final AtomicInteger SEQ = new AtomicInteger();
    /** The established connection's read buffer (SocketHandler.ESTABLISHED_READ_BUFFER). */
    private static final int READ_BUFFER = 64 << 10;
    private static final int LARGE = 512 << 10;
    private Node server;
    private Region target;

    @BeforeEach
    void setUp() throws Exception {
        server = new TcpFabric().open(NodeOptions.builder().name("direct-" + SEQ.incrementAndGet()).build());
        target = server.register(2 * LARGE, Access.ALL);
    }

    @AfterEach
    void tearDown() {
        server.close();
    }

    private static byte[] pattern(int length, int salt) {
        byte[] b = new byte[length];
        for (int i = 0; i < length; i++) {
            b[i] = (byte) (i * 31 + (i >>> 8) + salt);
        }
        return b;
    }

    /** Reads ACKs until one covers {@code seq}. */
    private static void awaitAck(RawPeer raw, long seq) throws IOException {
        RawPeer.Frame f;
        do {
            f = raw.readSkippingPings();
            assertNotNull(f, "connection closed before the ACK of seq=" + seq);
            assertEquals(FrameDescriptor.TYPE_ACK, f.type(), FrameDescriptor.typeName(f.type()) + ": " + f.text());
        } while (f.seq() < seq);
    }

    private void assertPlaced(byte[] want, int offset) {
        byte[] got = new byte[want.length];
        target.buffer().get(offset, got);
        for (int i = 0; i < want.length; i++) {
            if (got[i] != want[i]) {
                assertEquals(want[i], got[i], "byte " + i + " of the payload at offset " + offset);
            }
        }
    }

    @Test
    void aLargeWritePayloadIsReadStraightIntoTheRegionAndTheFrameBehindItIsHandled() throws Exception {
        try (RawPeer raw = new RawPeer(server.address())) {
            raw.handshake("raw-" + SEQ.incrementAndGet());
            SocketConnection c = (SocketConnection) server.accept(Duration.ofSeconds(10));
            byte[] big = pattern(LARGE, 7);
            byte[] small = pattern(8, 99);
            // one WRITE of 512 KiB and an 8-byte WRITE behind it, in one stream: the second rides in a read of
            // the first's payload
            raw.send(RawPeer.concat(RawPeer.bytes(RawPeer.writeHeader(FrameDescriptor.FLAG_UNSIGNALED, 1,
                target.remoteKey(), 0, 0, LARGE)), big, RawPeer.bytes(RawPeer.writeHeader(0, 2, target.remoteKey(), 0,
                LARGE, 8)), small));
            awaitAck(raw, 2);
            assertPlaced(big, 0);
            assertPlaced(small, LARGE);
            long staged = c.payloadBytesStaged();
            long direct = c.payloadBytesDirect();
            assertEquals(LARGE + 8, staged + direct, "every payload byte placed once");
            assertTrue(staged <= READ_BUFFER, "payload bytes copied through the read buffer: " + staged
                + " (at most one read's worth may come with the header), read straight into the region: " + direct);
        }
    }

    @Test
    void aStreamOfWritesAsLargeAsTheReadBufferIsMostlyReadStraightIntoTheRegion() throws Exception {
        try (RawPeer raw = new RawPeer(server.address())) {
            raw.handshake("raw-" + SEQ.incrementAndGet());
            SocketConnection c = (SocketConnection) server.accept(Duration.ofSeconds(10));
            int frames = 16;
            byte[][] payloads = new byte[frames][];
            ByteArrayOutputStream stream = new ByteArrayOutputStream();
            for (int i = 0; i < frames; i++) {
                payloads[i] = pattern(READ_BUFFER, i);
                // the last one signaled: one ACK for all
                stream.write(RawPeer.bytes(RawPeer.writeHeader(i == frames - 1 ? 0 : FrameDescriptor.FLAG_UNSIGNALED,
                    i + 1, target.remoteKey(), 0, (long) i * READ_BUFFER, READ_BUFFER)));
                stream.write(payloads[i]);
            }
            raw.send(stream.toByteArray());
            awaitAck(raw, frames);
            for (int i = 0; i < frames; i++) {
                assertPlaced(payloads[i], i * READ_BUFFER);
            }
            long staged = c.payloadBytesStaged();
            long direct = c.payloadBytesDirect();
            assertEquals((long) frames * READ_BUFFER, staged + direct, "every payload byte placed once");
            // a full read buffer behind each payload would stage nearly all of it (each frame is one buffer long);
            // a short read behind a large payload stages the next header and a few KiB of its payload
            assertTrue(staged < (long) frames * READ_BUFFER / 4, "payload bytes copied through the read buffer: "
                + staged + ", read straight into the region: " + direct);
        }
    }

    @Test
    void aLargeSendPayloadIsReadStraightIntoThePostedReceive() throws Exception {
        try (RawPeer raw = new RawPeer(server.address())) {
            raw.handshake("raw-" + SEQ.incrementAndGet());
            Connection conn = server.accept(Duration.ofSeconds(10));
            SocketConnection c = (SocketConnection) conn;
            assertEquals(Post.OK, conn.post(WorkRequest.recv(target, LARGE, LARGE)));
            byte[] msg = pattern(LARGE, 3);
            raw.send(RawPeer.concat(RawPeer.header(FrameDescriptor.VERSION, FrameDescriptor.TYPE_SEND, 0,
                FrameDescriptor.HEADER_LENGTH + LARGE, 1), msg));
            awaitAck(raw, 1); // a SEND is acknowledged once it is in the posted receive
            assertPlaced(msg, LARGE);
            long staged = c.payloadBytesStaged();
            long direct = c.payloadBytesDirect();
            assertEquals(LARGE, staged + direct, "every payload byte placed once");
            assertTrue(staged <= READ_BUFFER, "payload bytes copied through the read buffer: " + staged
                + ", read straight into the receive: " + direct);
        }
    }
}
