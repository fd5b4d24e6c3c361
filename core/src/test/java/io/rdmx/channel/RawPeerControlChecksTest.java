package io.rdmx.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmx.transport.Access;
import io.rdmx.transport.Completion;
import io.rdmx.transport.Connection;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.Post;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Region;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.WorkRequest;
import io.rdmx.transport.loopback.LoopbackFabric;
import io.rdmx.transport.testsuite.Blocking;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every check a channel engine makes on its peers' control messages ({@code PeerChannel.handleMessage},
 * {@code onHello}, {@code onImmediate}, {@link NotificationDescriptor#validate}), driven end to end: a raw peer
 * (a plain loopback {@link Node} and {@link Connection}, no engine) connects to a real {@link ChannelEngine}, or
 * is connected to by it, and posts hand-made control messages in {@link NotificationDescriptor}'s layout. Each
 * test asserts that the engine fails THAT peer with an error naming it and the bad value, and that a healthy
 * peer of the same engine goes on working both ways. Every shape: the raw peer as the connecting and as the
 * accepting side, its name sorting before and after the engine's (the two directions of the pair layout), and
 * unequal worker counts (2 here and 3 there, and 3 and 2).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RawPeerControlChecksTest {
    private static final int CAPACITY = 4096;
    private static final int SLOT = NotificationDescriptor.MESSAGE_SLOT;
    private static final int RECVS = 16;
    private static final int SENDS = 8;
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final AtomicInteger SEQ = new AtomicInteger();
    private static final ChannelConfig.Notification SEND = ChannelConfig.Notification.SEND;
    private static final ChannelConfig.Notification IMM = ChannelConfig.Notification.WRITE_WITH_IMM;

    static {
        ChannelFuzzSupport.quietLogs();
    }

    /** Where the raw peer stands. */
    record Shape(int engineWorkers, int rawWorkers, boolean rawConnects, boolean rawIsLow) {
        @Override
        public String toString() {
            return "engine workers=" + engineWorkers + ", raw workers=" + rawWorkers + ", raw "
                + (rawConnects ? "connects" : "accepts") + ", raw name sorts " + (rawIsLow ? "first" : "last");
        }

        int rings() {
            return engineWorkers * rawWorkers;
        }
    }

    static Stream<Shape> shapes() {
        List<Shape> s = new ArrayList<>();
        for (int[] w : new int[][] {{2, 3}, {3, 2}}) {
            for (boolean connects : new boolean[] {true, false}) {
                for (boolean low : new boolean[] {true, false}) {
                    s.add(new Shape(w[0], w[1], connects, low));
                }
            }
        }
        return s.stream();
    }

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final ExecutorService executor = Executors.newCachedThreadPool();
    private Shape shape;
    private ChannelConfig.Notification mode;
    private ChannelEngine engine;
    private ChannelEngine healthy;
    private PeerChannel engineToHealthy;
    private PeerChannel healthyToEngine;
    private Raw raw;
    private Future<PeerChannel> connecting;

    @AfterEach
    void tearDown() throws Exception {
        executor.shutdownNow();
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    private Node node(String name) throws RdmxException {
        Node n = new LoopbackFabric().open(NodeOptions.builder().name(name + "-" + SEQ.incrementAndGet()).build());
        closeables.add(n);
        return n;
    }

    private ChannelEngine engine(Node n, int workers) {
        ChannelEngine e = ChannelEngine.open(n, ChannelConfig.builder(workers).ringCapacity(CAPACITY)
            .notification(mode).build());
        closeables.add(e);
        return e;
    }

    /** The engine under test, its healthy peer (channel up), and the raw peer's connection (nothing sent). */
    private void open(Shape s, ChannelConfig.Notification m) throws Exception {
        shape = s;
        mode = m;
        Node engineNode = node("m-engine");
        engine = engine(engineNode, s.engineWorkers());
        healthy = engine(node("h-healthy"), s.rawWorkers());
        healthyToEngine = healthy.connect(engineNode.address(), WAIT);
        engineToHealthy = engine.accept(WAIT);
        // 'a' < 'm' < 'z': the raw peer's name sorts before or after the engine's
        Node rawNode = node(s.rawIsLow() ? "a-raw" : "z-raw");
        Connection c;
        if (s.rawConnects()) {
            c = rawNode.connect(engineNode.address(), WAIT);
        } else {
            connecting = executor.submit(() -> engine.connect(rawNode.address(), WAIT));
            c = rawNode.accept(WAIT);
        }
        raw = new Raw(rawNode, c);
    }

    /** A peer without an engine: it posts receives, and SENDs what the test writes. */
    private final class Raw {
        final Node node;
        final Connection conn;
        final Region ctl;
        final List<ByteBuffer> received = new ArrayList<>();
        int next;
        int engineWorkers;
        RemoteRegion enginePair;

        Raw(Node node, Connection conn) throws RdmxException {
            this.node = node;
            this.conn = conn;
            this.ctl = node.register((RECVS + SENDS) * SLOT, Access.ALL);
            for (int i = 0; i < RECVS; i++) {
                assertEquals(Post.OK, conn.post(WorkRequest.recv(ctl, i * SLOT, SLOT).wrId(i)));
            }
        }

        String name() {
            return node.name();
        }

        /** Waits for the engine's message of this type, reposting receives. */
        ByteBuffer await(int type) throws Exception {
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (System.nanoTime() < deadline) {
                for (int i = 0; i < received.size(); i++) {
                    if (received.get(i).get(NotificationDescriptor.TYPE_OFFSET) == type) {
                        return received.remove(i);
                    }
                }
                List<Completion> got = new ArrayList<>();
                node.completionQueue().await(got::add, 16, 50, TimeUnit.MILLISECONDS);
                for (Completion c : got) {
                    if (c.opcode() == Opcode.RECV && c.ok()) {
                        int slot = (int) c.wrId();
                        ByteBuffer copy = ByteBuffer.allocate(c.byteLength()).order(ByteOrder.LITTLE_ENDIAN);
                        copy.put(0, ctl.buffer(), slot * SLOT, c.byteLength());
                        received.add(copy);
                        conn.post(WorkRequest.recv(ctl, slot * SLOT, SLOT).wrId(slot));
                    }
                }
            }
            throw new AssertionError("the engine sent no message of type=" + type + " within " + WAIT);
        }

        void send(ByteBuffer msg) throws RdmxException {
            int at = (RECVS + (next++ % SENDS)) * SLOT;
            ctl.buffer().put(at, msg, 0, msg.capacity());
            assertEquals(Post.OK, conn.post(WorkRequest.send(ctl, at, msg.capacity()).wrId(1000 + next)));
        }

        void hello(int workers, int capacity, int notification, int length) throws RdmxException {
            ByteBuffer b = message(length);
            NotificationDescriptor.header(b, 0, NotificationDescriptor.TYPE_HELLO, 0);
            b.putInt(NotificationDescriptor.HELLO_WORKERS_OFFSET, workers);
            b.putInt(NotificationDescriptor.HELLO_CAPACITY_OFFSET, capacity);
            b.putInt(NotificationDescriptor.HELLO_MODE_OFFSET, notification);
            send(b);
        }

        void hello() throws RdmxException {
            hello(shape.rawWorkers(), CAPACITY, mode.ordinal(), NotificationDescriptor.HELLO_LENGTH);
        }

        void region(int length) throws RdmxException {
            Region pair = node.register(length, Access.ALL);
            ByteBuffer b = message(NotificationDescriptor.REGION_LENGTH);
            NotificationDescriptor.header(b, 0, NotificationDescriptor.TYPE_REGION, 0);
            pair.descriptor().encode(b, NotificationDescriptor.REGION_OFFSET);
            send(b);
        }

        int pairLength() {
            return (shape.rawIsLow() ? new PairLayout(shape.rawWorkers(), engineWorkers, CAPACITY)
                : new PairLayout(engineWorkers, shape.rawWorkers(), CAPACITY)).regionLength();
        }

        /** HELLO both ways and the engine's REGION; ours is not sent. */
        void helloOnly() throws Exception {
            ByteBuffer h = await(NotificationDescriptor.TYPE_HELLO);
            engineWorkers = h.getInt(NotificationDescriptor.HELLO_WORKERS_OFFSET);
            assertEquals(shape.engineWorkers(), engineWorkers);
            hello();
            ByteBuffer r = await(NotificationDescriptor.TYPE_REGION);
            enginePair = RemoteRegion.decode(r, NotificationDescriptor.REGION_OFFSET);
        }

        /** The whole handshake; returns the engine's channel to this peer, ready. */
        PeerChannel handshake() throws Exception {
            helloOnly();
            region(pairLength());
            PeerChannel p = rawChannel();
            assertTrue(p.isOpen());
            assertEquals(name(), p.name());
            assertEquals(shape.rawWorkers(), p.workers());
            return p;
        }

        void notify(int kind, int ring, long position) throws RdmxException {
            ByteBuffer b = message(NotificationDescriptor.HEADER_LENGTH + NotificationDescriptor.ENTRY_LENGTH);
            NotificationDescriptor.header(b, 0, NotificationDescriptor.TYPE_NOTIFY, 1);
            NotificationDescriptor.entry(b, 0, 0, kind, ring, position);
            send(b);
        }

        /** A WRITE_WITH_IMM of 8 zero bytes at the start of the engine's pair region, with this immediate. */
        void immediate(int imm) throws RdmxException {
            assertNotNull(enginePair, "no REGION from the engine yet");
            assertEquals(Post.OK, conn.post(WorkRequest.writeImm(ctl, 0, 8, enginePair, 0, imm).wrId(2000)));
        }
    }

    private static ByteBuffer le(int v) {
        return message(8).putInt(0, v);
    }

    private static ByteBuffer message(int length) {
        return ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** The engine's channel to the raw peer once its handshake is through; throws the handshake's failure. */
    private PeerChannel rawChannel() throws Exception {
        if (shape.rawConnects()) {
            return engine.accept(WAIT);
        }
        try {
            return connecting.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw (Exception) e.getCause();
        }
    }

    /** The handshake with the raw peer fails: returns why, as the engine's caller sees it. */
    private String handshakeFailure() throws Exception {
        try {
            PeerChannel p = rawChannel();
            fail("the handshake with the raw peer succeeded: " + p.name());
            return null;
        } catch (RdmxException e) {
            return e.getMessage();
        }
    }

    /** The ready channel to the raw peer fails: returns why. */
    private static String failureOf(PeerChannel p) throws InterruptedException {
        Blocking.awaitTrue("the engine fails the raw peer", () -> !p.isOpen(), WAIT);
        return p.failure().getMessage();
    }

    /** The message names the raw peer and each part; and the engine's healthy peer works both ways. */
    private void assertOnlyTheRawPeerFailed(String message, String... parts) throws Exception {
        assertTrue(message.contains("'" + raw.name() + "'"), () -> "does not name the raw peer: " + message);
        for (String p : parts) {
            assertTrue(message.contains(p), () -> "expected \"" + p + "\" in: " + message);
        }
        assertFalse(message.contains("wrId"), () -> "internal request id in: " + message);
        assertTrue(engineToHealthy.isOpen(), () -> "the healthy peer failed too: " + engineToHealthy.failure());
        int last = shape.engineWorkers() - 1;
        int hLast = shape.rawWorkers() - 1;
        healthyToEngine.writer(hLast, last).write(7, le(4242), 5, TimeUnit.SECONDS);
        healthyToEngine.writer(hLast, last).flush();
        assertEquals(List.of(healthyToEngine.engine().node().name() + "/" + hLast + ":4242"),
            readOne(engine.reader(last)));
        engineToHealthy.writer(last, hLast).write(7, le(4343), 5, TimeUnit.SECONDS);
        engineToHealthy.writer(last, hLast).flush();
        assertEquals(List.of(engine.node().name() + "/" + last + ":4343"), readOne(healthy.reader(hLast)));
    }

    /** Reads one record; a reader may first report the raw peer's loss, once, naming it. */
    private List<String> readOne(ChannelReader r) throws Exception {
        List<String> got = new ArrayList<>();
        RecordHandler h = (s, b, o, l, src) -> got.add(src.peerName() + "/" + src.peerWorker() + ":" + b.getInt(o));
        int losses = 0;
        while (got.isEmpty()) {
            try {
                assertTrue(r.read(h, 1, 5, TimeUnit.SECONDS) > 0 || !got.isEmpty(), "the healthy peer's record");
            } catch (ConnectionClosedException e) {
                assertEquals(raw.name(), e.peer(), e.getMessage());
                assertEquals(0, losses++, "the raw peer's loss is reported once");
            }
        }
        return got;
    }

    // ---- before the raw peer's HELLO: NotificationDescriptor.validate with no rings yet

    @ParameterizedTest
    @MethodSource("shapes")
    void unknownVersion(Shape s) throws Exception {
        open(s, SEND);
        ByteBuffer b = message(NotificationDescriptor.HELLO_LENGTH);
        NotificationDescriptor.header(b, 0, NotificationDescriptor.TYPE_HELLO, 0);
        b.put(NotificationDescriptor.VERSION_OFFSET, (byte) 99);
        raw.send(b);
        assertOnlyTheRawPeerFailed(handshakeFailure(), "version=99");
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void unknownType(Shape s) throws Exception {
        open(s, SEND);
        ByteBuffer b = message(NotificationDescriptor.HEADER_LENGTH);
        NotificationDescriptor.header(b, 0, 9, 0);
        raw.send(b);
        assertOnlyTheRawPeerFailed(handshakeFailure(), "type=9");
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void messageShorterThanAHeader(Shape s) throws Exception {
        open(s, SEND);
        raw.send(message(4));
        assertOnlyTheRawPeerFailed(handshakeFailure(), "length=4");
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void helloOfTheWrongLength(Shape s) throws Exception {
        open(s, SEND);
        raw.hello(s.rawWorkers(), CAPACITY, SEND.ordinal(), NotificationDescriptor.HELLO_LENGTH + 8);
        assertOnlyTheRawPeerFailed(handshakeFailure(), "HELLO length=" + (NotificationDescriptor.HELLO_LENGTH + 8));
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void notifyCountNotMatchingItsLength(Shape s) throws Exception {
        open(s, SEND);
        ByteBuffer b = message(NotificationDescriptor.HEADER_LENGTH + NotificationDescriptor.ENTRY_LENGTH);
        NotificationDescriptor.header(b, 0, NotificationDescriptor.TYPE_NOTIFY, 2);
        raw.send(b);
        assertOnlyTheRawPeerFailed(handshakeFailure(), "count=2", "length=24");
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void notifyBeforeHello(Shape s) throws Exception {
        open(s, SEND);
        raw.notify(NotificationDescriptor.KIND_DATA, 0, 8);
        assertOnlyTheRawPeerFailed(handshakeFailure(), "ring=0 >= rings=0");
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void regionBeforeHello(Shape s) throws Exception {
        open(s, SEND);
        raw.region(CAPACITY);
        assertOnlyTheRawPeerFailed(handshakeFailure(), "REGION before HELLO");
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void byeOfTheWrongLength(Shape s) throws Exception {
        open(s, SEND);
        ByteBuffer b = message(NotificationDescriptor.BYE_LENGTH + 8);
        NotificationDescriptor.header(b, 0, NotificationDescriptor.TYPE_BYE, 0);
        raw.send(b);
        assertOnlyTheRawPeerFailed(handshakeFailure(), "BYE length=16");
    }

    // ---- HELLO: onHello

    @ParameterizedTest
    @MethodSource("shapes")
    void ringCapacityMismatch(Shape s) throws Exception {
        open(s, SEND);
        raw.hello(s.rawWorkers(), 2 * CAPACITY, SEND.ordinal(), NotificationDescriptor.HELLO_LENGTH);
        assertOnlyTheRawPeerFailed(handshakeFailure(), "ringCapacity local=" + CAPACITY + " peer=" + 2 * CAPACITY);
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void notificationModeMismatch(Shape s) throws Exception {
        open(s, SEND);
        raw.hello(s.rawWorkers(), CAPACITY, IMM.ordinal(), NotificationDescriptor.HELLO_LENGTH);
        assertOnlyTheRawPeerFailed(handshakeFailure(), "notification local=SEND peer=WRITE_WITH_IMM");
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void unknownNotificationMode(Shape s) throws Exception {
        open(s, SEND);
        raw.hello(s.rawWorkers(), CAPACITY, 7, NotificationDescriptor.HELLO_LENGTH);
        assertOnlyTheRawPeerFailed(handshakeFailure(), "notification local=SEND peer=7");
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void noWorkers(Shape s) throws Exception {
        open(s, SEND);
        raw.hello(0, CAPACITY, SEND.ordinal(), NotificationDescriptor.HELLO_LENGTH);
        assertOnlyTheRawPeerFailed(handshakeFailure(), "workers=0");
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void tooManyWorkers(Shape s) throws Exception {
        open(s, SEND);
        raw.hello(257, CAPACITY, SEND.ordinal(), NotificationDescriptor.HELLO_LENGTH);
        assertOnlyTheRawPeerFailed(handshakeFailure(), "workers=257");
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void moreRingsThanAnImmediateNames(Shape s) throws Exception {
        open(s, IMM);
        raw.hello(3000, CAPACITY, IMM.ordinal(), NotificationDescriptor.HELLO_LENGTH);
        assertOnlyTheRawPeerFailed(handshakeFailure(), "peer=3000", "exceeds 4096");
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void helloTwice(Shape s) throws Exception {
        open(s, SEND);
        raw.hello();
        raw.hello();
        assertOnlyTheRawPeerFailed(handshakeFailure(), "sent HELLO twice");
    }

    // ---- REGION

    @ParameterizedTest
    @MethodSource("shapes")
    void regionOfTheWrongLength(Shape s) throws Exception {
        open(s, SEND);
        raw.helloOnly();
        raw.region(raw.pairLength() + 4096);
        assertOnlyTheRawPeerFailed(handshakeFailure(), "pair region length=" + (raw.pairLength() + 4096),
            "expected=" + raw.pairLength());
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void regionTwice(Shape s) throws Exception {
        open(s, SEND);
        PeerChannel p = raw.handshake();
        raw.region(raw.pairLength());
        assertOnlyTheRawPeerFailed(failureOf(p), "sent REGION twice");
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void helloAfterTheHandshake(Shape s) throws Exception {
        open(s, SEND);
        PeerChannel p = raw.handshake();
        raw.hello();
        assertOnlyTheRawPeerFailed(failureOf(p), "sent HELLO twice");
    }

    // ---- NOTIFY entries

    @ParameterizedTest
    @MethodSource("shapes")
    void creditBeforeTheRegion(Shape s) throws Exception {
        open(s, SEND);
        raw.helloOnly();
        raw.notify(NotificationDescriptor.KIND_CREDIT, s.rings() - 1, 0);
        assertOnlyTheRawPeerFailed(handshakeFailure(), "credit for ring=" + (s.rings() - 1), "does not exist");
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void dataForARingOutOfRange(Shape s) throws Exception {
        open(s, SEND);
        PeerChannel p = raw.handshake();
        raw.notify(NotificationDescriptor.KIND_DATA, s.rings(), 8);
        assertOnlyTheRawPeerFailed(failureOf(p), "ring=" + s.rings() + " >= rings=" + s.rings());
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void creditForARingOutOfRange(Shape s) throws Exception {
        open(s, SEND);
        PeerChannel p = raw.handshake();
        raw.notify(NotificationDescriptor.KIND_CREDIT, s.rings(), 0);
        assertOnlyTheRawPeerFailed(failureOf(p), "ring=" + s.rings() + " >= rings=" + s.rings());
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void unknownEntryKind(Shape s) throws Exception {
        open(s, SEND);
        PeerChannel p = raw.handshake();
        raw.notify(7, 0, 8);
        assertOnlyTheRawPeerFailed(failureOf(p), "kind=7");
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void negativePosition(Shape s) throws Exception {
        open(s, SEND);
        PeerChannel p = raw.handshake();
        raw.notify(NotificationDescriptor.KIND_DATA, 0, -8);
        assertOnlyTheRawPeerFailed(failureOf(p), "position=-8");
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void dataPastTheCapacityOfTheLastRing(Shape s) throws Exception {
        open(s, SEND);
        PeerChannel p = raw.handshake();
        raw.notify(NotificationDescriptor.KIND_DATA, s.rings() - 1, CAPACITY + 8);
        assertOnlyTheRawPeerFailed(failureOf(p), "position=" + (CAPACITY + 8) + " in ring=" + (s.rings() - 1),
            "capacity=" + CAPACITY);
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void creditBeyondTheHead(Shape s) throws Exception {
        open(s, SEND);
        PeerChannel p = raw.handshake();
        raw.notify(NotificationDescriptor.KIND_CREDIT, s.rings() - 1, 8);
        assertOnlyTheRawPeerFailed(failureOf(p), "credit up to position=8 in ring=" + (s.rings() - 1), "(head=0)");
    }

    // ---- immediates: onImmediate

    @ParameterizedTest
    @MethodSource("shapes")
    void immediateForARingOutOfRange(Shape s) throws Exception {
        open(s, IMM);
        PeerChannel p = raw.handshake();
        int imm = ImmediateDescriptor.encode(s.rings(), 8);
        raw.immediate(imm);
        assertOnlyTheRawPeerFailed(failureOf(p), "immediate=0x" + Integer.toHexString(imm),
            "ring=" + s.rings() + " >= rings=" + s.rings());
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void immediateOfLengthZero(Shape s) throws Exception {
        open(s, IMM);
        PeerChannel p = raw.handshake();
        raw.immediate(ImmediateDescriptor.encode(0, 0));
        assertOnlyTheRawPeerFailed(failureOf(p), "length=0");
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void immediatePastTheCapacityOfTheLastRing(Shape s) throws Exception {
        open(s, IMM);
        PeerChannel p = raw.handshake();
        raw.immediate(ImmediateDescriptor.encode(s.rings() - 1, CAPACITY + 8));
        assertOnlyTheRawPeerFailed(failureOf(p), "position=" + (CAPACITY + 8) + " in ring=" + (s.rings() - 1),
            "capacity=" + CAPACITY);
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void immediateOnAChannelThatNotifiesBySend(Shape s) throws Exception {
        open(s, SEND);
        PeerChannel p = raw.handshake();
        int imm = ImmediateDescriptor.encode(0, 8);
        raw.immediate(imm);
        assertOnlyTheRawPeerFailed(failureOf(p), "immediate=0x" + Integer.toHexString(imm), "notification=SEND");
    }
}
