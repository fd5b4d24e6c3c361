package io.rdmx.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Completion;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.Status;
import io.rdmx.transport.internal.RegionImpl;
import io.rdmx.transport.loopback.LoopbackFabric;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every check a {@link PeerChannel} makes on what its peer sends, each driven by a scripted peer (the fuzz
 * harness's {@link ChannelFuzzSupport.FakeConnection}) in both directions of the pair layout (the peer's name
 * sorts before or after ours) with unequal worker counts (2 here and 3 there, and 3 and 2), in both
 * notification modes. A broken message fails the channel with a reason that names the peer and the value.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ControlMessageChecksTest {
    private static final String LOW_PEER = "ctl-a";
    private static final String HIGH_PEER = "ctl-z";
    private static final int CAPACITY = 1024;
    private static final AtomicInteger SEQ = new AtomicInteger();

    static {
        ChannelFuzzSupport.quietLogs();
    }

    private Node node;
    private ChannelEngine engine;
    private ChannelFuzzSupport.FakeConnection conn;
    private PeerChannel peer;
    private Shape shape;

    /** Who the scripted peer is. */
    record Shape(int localWorkers, int peerWorkers, String peerName, ChannelConfig.Notification mode) {
        boolean peerIsLow() {
            return LOW_PEER.equals(peerName);
        }

        int rings() {
            return localWorkers * peerWorkers;
        }

        PairLayout layout() {
            return peerIsLow() ? new PairLayout(peerWorkers, localWorkers, CAPACITY)
                : new PairLayout(localWorkers, peerWorkers, CAPACITY);
        }
    }

    static Stream<Shape> shapes() {
        List<Shape> s = new ArrayList<>();
        for (int[] w : new int[][] {{2, 3}, {3, 2}}) {
            for (String name : new String[] {LOW_PEER, HIGH_PEER}) {
                for (ChannelConfig.Notification mode : ChannelConfig.Notification.values()) {
                    s.add(new Shape(w[0], w[1], name, mode));
                }
            }
        }
        return s.stream();
    }

    private void open(Shape s) throws RdmxException {
        shape = s;
        node = new LoopbackFabric().open(NodeOptions.builder().name("ctl-m-" + SEQ.incrementAndGet())
            .sendQueueDepth(1 << 14).recvQueueDepth(1 << 12).build());
        // shapes of up to 256 peer workers: this engine accepts as many as the protocol allows
        engine = ChannelEngine.open(node, ChannelConfig.builder(s.localWorkers()).ringCapacity(CAPACITY)
            .maxPeerWorkers(256).notification(s.mode()).flushInterval(Duration.ZERO).build());
        conn = new ChannelFuzzSupport.FakeConnection(node, s.peerName());
        peer = new PeerChannel(engine, 1, conn);
        peer.start();
    }

    @AfterEach
    void close() {
        if (peer != null) {
            if (peer.isOpen()) {
                peer.fail(new ConnectionClosedException(shape.peerName(), "end of test", null));
            }
            peer.release();
        }
        if (engine != null) {
            engine.close();
        }
        if (node != null) {
            node.close();
        }
    }

    // ---- what the peer sends

    private static ByteBuffer message(int length) {
        return ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
    }

    private void send(ByteBuffer msg) {
        ChannelFuzzSupport.PostedRecv r = conn.takeRecv();
        assertNotNull(r, "the channel posted no receive");
        r.region().buffer().put(r.offset(), msg, 0, msg.capacity());
        peer.onCompletion(new Completion(conn, r.wrId(), Opcode.RECV, Status.SUCCESS, msg.capacity(), 0, false,
            null));
    }

    private void immediate(int imm) {
        ChannelFuzzSupport.PostedRecv r = conn.takeRecv();
        assertNotNull(r, "the channel posted no receive");
        peer.onCompletion(new Completion(conn, r.wrId(), Opcode.RECV, Status.SUCCESS, 0, imm, true, null));
    }

    private void hello(int workers) {
        ByteBuffer b = message(NotificationDescriptor.HELLO_LENGTH);
        NotificationDescriptor.header(b, 0, NotificationDescriptor.TYPE_HELLO, 0);
        b.putInt(NotificationDescriptor.HELLO_WORKERS_OFFSET, workers);
        b.putInt(NotificationDescriptor.HELLO_CAPACITY_OFFSET, CAPACITY);
        b.putInt(NotificationDescriptor.HELLO_MODE_OFFSET, shape.mode().ordinal());
        send(b);
    }

    private void region() {
        ByteBuffer b = message(NotificationDescriptor.REGION_LENGTH);
        NotificationDescriptor.header(b, 0, NotificationDescriptor.TYPE_REGION, 0);
        new RemoteRegion(1L << 31, shape.layout().regionLength(), 0x5eed)
            .encode(b, NotificationDescriptor.REGION_OFFSET);
        send(b);
    }

    private void handshake() {
        hello(shape.peerWorkers());
        region();
        assertTrue(peer.isOpen(), () -> "handshake failed: " + peer.failure());
        assertEquals(shape.peerWorkers(), peer.workers());
    }

    private void notify(int kind, int ring, long position) {
        ByteBuffer b = message(NotificationDescriptor.HEADER_LENGTH + NotificationDescriptor.ENTRY_LENGTH);
        NotificationDescriptor.header(b, 0, NotificationDescriptor.TYPE_NOTIFY, 1);
        NotificationDescriptor.entry(b, 0, 0, kind, ring, position);
        send(b);
    }

    private void assertFailed(String... parts) {
        assertFalse(peer.isOpen(), "the channel must fail");
        String msg = peer.failure().getMessage();
        assertTrue(msg.contains("'" + shape.peerName() + "'"), () -> "does not name the peer: " + msg);
        for (String p : parts) {
            assertTrue(msg.contains(p), () -> "expected \"" + p + "\" in: " + msg);
        }
        assertFalse(msg.contains("wrId"), () -> "internal request id in: " + msg);
    }

    /** An immediate's own check in WRITE_WITH_IMM mode; in SEND mode any immediate is refused first. */
    private void assertImmediateRefused(String... parts) {
        if (shape.mode() == ChannelConfig.Notification.SEND) {
            assertFailed("notification=SEND, not by immediates");
        } else {
            assertFailed(parts);
        }
    }

    // ---- handshake

    @ParameterizedTest
    @MethodSource("shapes")
    void helloTwice(Shape s) throws RdmxException {
        open(s);
        hello(s.peerWorkers());
        hello(s.peerWorkers());
        assertFailed("sent HELLO twice");
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void regionBeforeHello(Shape s) throws RdmxException {
        open(s);
        region();
        assertFailed("sent REGION before HELLO");
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void regionTwice(Shape s) throws RdmxException {
        open(s);
        handshake();
        region();
        assertFailed("sent REGION twice");
    }

    // ---- NOTIFY entries

    @ParameterizedTest
    @MethodSource("shapes")
    void dataForARingOutOfRange(Shape s) throws RdmxException {
        open(s);
        handshake();
        notify(NotificationDescriptor.KIND_DATA, s.rings(), 8);
        assertFailed("ring=" + s.rings() + " >= rings=" + s.rings());
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void creditForARingOutOfRange(Shape s) throws RdmxException {
        open(s);
        handshake();
        notify(NotificationDescriptor.KIND_CREDIT, s.rings(), 0);
        assertFailed("ring=" + s.rings() + " >= rings=" + s.rings());
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void dataPastTheCapacityOfTheLastRing(Shape s) throws RdmxException {
        open(s);
        handshake();
        notify(NotificationDescriptor.KIND_DATA, s.rings() - 1, CAPACITY + 8);
        assertFailed("position=" + (CAPACITY + 8) + " in ring=" + (s.rings() - 1), "capacity=" + CAPACITY);
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void creditPastWhatWasWritten(Shape s) throws RdmxException {
        open(s);
        handshake();
        notify(NotificationDescriptor.KIND_CREDIT, s.rings() - 1, 8);
        assertFailed("credit up to position=8 in ring=" + (s.rings() - 1), "(head=0)");
    }

    // ---- immediates

    @ParameterizedTest
    @MethodSource("shapes")
    void immediateForARingOutOfRange(Shape s) throws RdmxException {
        open(s);
        handshake();
        int imm = ImmediateDescriptor.encode(s.rings(), 8);
        immediate(imm);
        assertImmediateRefused("immediate=0x" + Integer.toHexString(imm), "ring=" + s.rings() + " >= rings="
            + s.rings());
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void immediatePastTheCapacityOfTheLastRing(Shape s) throws RdmxException {
        open(s);
        handshake();
        immediate(ImmediateDescriptor.encode(s.rings() - 1, CAPACITY + 8));
        assertImmediateRefused("position=" + (CAPACITY + 8) + " in ring=" + (s.rings() - 1), "capacity=" + CAPACITY);
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void immediateOfLengthZero(Shape s) throws RdmxException {
        open(s);
        handshake();
        immediate(ImmediateDescriptor.encode(0, 0));
        assertImmediateRefused("length=0");
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void immediateBeforeHello(Shape s) throws RdmxException {
        open(s);
        immediate(ImmediateDescriptor.encode(0, 8));
        assertFailed("before HELLO");
    }

    // ---- the direction mapping, at the boundary the checks guard

    @ParameterizedTest
    @MethodSource("shapes")
    void theLastRingReachesTheLastWorkerFromTheLastPeerWorker(Shape s) throws RdmxException {
        open(s);
        handshake();
        PairLayout layout = s.layout();
        int ring = layout.ringIndex(s.peerIsLow(), s.peerWorkers() - 1, s.localWorkers() - 1);
        assertEquals(s.rings() - 1, ring);
        RingBuffer scratch = new RingBuffer(ByteBuffer.allocateDirect(CAPACITY), CAPACITY / 4);
        scratch.write(7, ByteBuffer.allocate(20));
        int length = (int) scratch.headAcquire();
        RegionImpl ours = conn.ourPairRegion();
        int offset = layout.offset(s.peerIsLow(), ring);
        for (int i = 0; i < length; i++) {
            ours.memory().put(offset + i, scratch.buffer().get(i));
        }
        if (s.mode() == ChannelConfig.Notification.WRITE_WITH_IMM) {
            immediate(ImmediateDescriptor.encode(ring, length));
        } else {
            notify(NotificationDescriptor.KIND_DATA, ring, length);
        }
        assertTrue(peer.isOpen(), () -> "valid data failed the channel: " + peer.failure());
        List<String> got = new ArrayList<>();
        for (int w = 0; w < s.localWorkers(); w++) {
            int me = w;
            engine.reader(w).poll((stream, b, o, l, src) -> got.add("worker " + me + " got stream " + stream
                + " length " + l + " from " + src.peerName() + " worker " + src.peerWorker()), 10);
        }
        assertEquals(List.of("worker " + (s.localWorkers() - 1) + " got stream 7 length 20 from " + s.peerName()
            + " worker " + (s.peerWorkers() - 1)), got);
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void aRecordAfterTheEndOfStreamFailsThePeer(Shape s) throws RdmxException {
        open(s);
        handshake();
        PairLayout layout = s.layout();
        int ring = layout.ringIndex(s.peerIsLow(), 0, 0);
        RingBuffer scratch = new RingBuffer(ByteBuffer.allocateDirect(CAPACITY), CAPACITY / 4);
        scratch.write(5, ByteBuffer.allocate(8));
        int at = scratch.tryClaim(0, 0);
        scratch.buffer().put(at - RecordDescriptor.HEADER_LENGTH + RecordDescriptor.TYPE_OFFSET,
            (byte) RecordDescriptor.TYPE_END);
        scratch.commit();
        scratch.write(6, ByteBuffer.allocate(8));
        int length = (int) scratch.headAcquire();
        RegionImpl ours = conn.ourPairRegion();
        int offset = layout.offset(s.peerIsLow(), ring);
        for (int i = 0; i < length; i++) {
            ours.memory().put(offset + i, scratch.buffer().get(i));
        }
        if (s.mode() == ChannelConfig.Notification.WRITE_WITH_IMM) {
            immediate(ImmediateDescriptor.encode(ring, length));
        } else {
            notify(NotificationDescriptor.KIND_DATA, ring, length);
        }
        List<String> got = new ArrayList<>();
        engine.reader(0).poll(new RecordHandler() {
            @Override
            public void onRecord(int streamId, ByteBuffer buffer, int off, int len, RecordSource source) {
                got.add("record " + streamId);
            }

            @Override
            public void onEndOfStream(RecordSource source) {
                got.add("end from worker " + source.peerWorker());
            }
        }, 10);
        assertEquals(List.of("record 5", "end from worker 0"), got, "nothing after the end is delivered");
        assertFailed("worker 0 wrote a record after its end of stream (ring=" + ring + ")");
    }

    // ---- the immediate's ring limit, where the two worker counts meet

    static Stream<Shape> tooManyRings() {
        List<Shape> s = new ArrayList<>();
        for (int[] w : new int[][] {{64, 65}, {65, 64}}) {
            for (String name : new String[] {LOW_PEER, HIGH_PEER}) {
                s.add(new Shape(w[0], w[1], name, ChannelConfig.Notification.WRITE_WITH_IMM));
            }
        }
        return s.stream();
    }

    @ParameterizedTest
    @MethodSource("tooManyRings")
    void moreRingsThanAnImmediateNamesFailTheHandshake(Shape s) throws RdmxException {
        open(s);
        hello(s.peerWorkers());
        assertTrue(peer.isOpen(), "the refusal waits until our HELLO has reached the peer, so it can name it too");
        peer.onCompletion(new Completion(conn, peer.wrId(WrIdDescriptor.KIND_HANDSHAKE, WrIdDescriptor.HELLO),
            Opcode.SEND, Status.SUCCESS, NotificationDescriptor.HELLO_LENGTH, 0, false, null));
        assertFailed("workers local=" + s.localWorkers() + " x peer=" + s.peerWorkers(), "4160 rings",
            "exceeds 4096");
        assertEquals(null, conn.ourPairRegion(), "no pair region was advertised");
    }

    @ParameterizedTest
    @MethodSource("tooManyRings")
    void asManyRingsInSendModeAreFine(Shape s) throws RdmxException {
        open(new Shape(s.localWorkers(), s.peerWorkers(), s.peerName(), ChannelConfig.Notification.SEND));
        handshake();
    }
}
