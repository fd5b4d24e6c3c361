package io.rdmx.transport.testsuite;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmx.transport.Access;
import io.rdmx.transport.Completion;
import io.rdmx.transport.Connection;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.Post;
import io.rdmx.transport.PreparedRequest;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RdmxTimeoutException;
import io.rdmx.transport.Region;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.Status;
import io.rdmx.transport.WorkRequest;
import io.rdmx.transport.capability.Capability;
import io.rdmx.transport.capability.InlineCompletions;
import io.rdmx.transport.internal.LeakDetector;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.CRC32;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The one conformance suite every provider runs unchanged (like Netty's per-transport testsuite): subclasses
 * only say how to open nodes and how to kill one abruptly.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class TransportConformanceSuite {
    /** Bound on every wait in this suite. */
    protected static final Duration WAIT = Duration.ofSeconds(10);
    private static final AtomicInteger SEQ = new AtomicInteger();

    private final List<Node> nodes = new ArrayList<>();
    /** The passive side. */
    protected Node server;
    /** The active side. */
    protected Node client;
    /** client -> server. */
    protected Connection c2s;
    /** server -> client. */
    protected Connection s2c;
    /** A remotely writable region of the server, registered before connecting. */
    protected Region target;

    /** @return the provider under test */
    protected abstract Fabric fabric();

    /**
     * The fast-path capabilities this provider's connections offer ({@link Connection#capability}), exactly: every
     * provider says which, and {@link #offersExactlyTheCapabilitiesItDeclares} checks both ends of a connection.
     *
     * @return the capability interfaces offered
     */
    protected abstract Set<Class<? extends Capability>> capabilities();

    /**
     * Kills a node the way a crashing process dies: no goodbye to its peers.
     *
     * @param node the node
     */
    protected abstract void kill(Node node);

    /**
     * Options for a new node; subclasses may adjust.
     *
     * @param name the node name
     * @return the builder
     */
    protected NodeOptions.Builder options(String name) {
        return NodeOptions.builder().name(name);
    }

    /**
     * Opens a node and remembers it for cleanup.
     *
     * @param role a short role name
     * @param tweak adjusts the options
     * @return the node
     * @throws RdmxException on failure
     */
    protected Node open(String role, java.util.function.UnaryOperator<NodeOptions.Builder> tweak)
        throws RdmxException {
        String name = role + "-" + ProcessHandle.current().pid() + "-" + SEQ.incrementAndGet();
        Node n = fabric().open(tweak.apply(options(name)).build());
        nodes.add(n);
        return n;
    }

    @BeforeEach
    void setUp() throws Exception {
        server = open("server", b -> b);
        client = open("client", b -> b);
        target = server.register(1 << 20, Access.ALL);
        c2s = client.connect(server.address(), WAIT);
        s2c = server.accept(WAIT);
    }

    @Test
    void offersExactlyTheCapabilitiesItDeclares() {
        for (Connection c : List.of(c2s, s2c)) {
            for (Class<? extends Capability> type : Capability.ALL) {
                Optional<? extends Capability> got = c.capability(type);
                assertEquals(capabilities().contains(type), got.isPresent(), fabric().name() + " connection to '"
                    + c.peerName() + "': " + type.getSimpleName());
                got.ifPresent(cap -> assertTrue(type.isInstance(cap), type + " lookup returned " + cap));
            }
        }
    }

    @AfterEach
    void tearDown() {
        for (Node n : nodes) {
            n.close();
        }
    }

    /**
     * Registers a region filled with a pattern.
     *
     * @param node the node
     * @param length bytes
     * @param seed pattern seed
     * @return the region
     * @throws RdmxException on failure
     */
    protected static Region filled(Node node, int length, long seed) throws RdmxException {
        Region r = node.register(length, Access.ALL);
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        r.buffer().put(b);
        return r;
    }

    private static byte[] bytes(Region r, int offset, int length) {
        byte[] b = new byte[length];
        r.buffer().get(offset, b);
        return b;
    }

    private static long crc(Region r, int offset, int length) {
        CRC32 c = new CRC32();
        ByteBuffer b = r.buffer();
        b.position(offset).limit(offset + length);
        c.update(b);
        return c.getValue();
    }

    private RemoteRegion targetAtClient() throws RdmxException {
        int key = target.descriptor(s2c).remoteKey(); // on verbs a node-wide region's key differs per connection
        for (RemoteRegion rr : c2s.remoteRegions()) {
            if (rr.remoteKey() == key) {
                return rr;
            }
        }
        throw new AssertionError("server region " + target + " not among " + c2s.remoteRegions());
    }

    // ---------------------------------------------------------------- discovery and setup

    @Test
    void providerIsFoundByNameAndUsable() {
        Fabric f = Fabrics.get(fabric().name());
        assertEquals(fabric().getClass(), f.getClass());
        assertTrue(f.availability().usable(), f.availability().reason());
    }

    @Test
    void connectAndAcceptSeeEachOther() {
        assertEquals(server.name(), c2s.peerName());
        assertEquals(client.name(), s2c.peerName());
        assertEquals(server.address(), c2s.peerAddress());
        assertEquals(client.address(), s2c.peerAddress());
        assertTrue(c2s.isOpen() && s2c.isOpen());
        assertSame(client, c2s.node());
    }

    @Test
    void oneConnectionPerPairOfNodes() throws Exception {
        assertSame(c2s, client.connect(server.address(), WAIT));
        assertEquals(1, client.connections().size());
        assertEquals(1, server.connections().size());
        Node marker = open("marker", b -> b);
        marker.connect(server.address(), WAIT);
        assertEquals(marker.name(), server.accept(WAIT).peerName(), "no second connection from the client is"
            + " accepted before a marker connection made after it");
    }

    @Test
    void concurrentConnectsShareOneConnection() throws Exception {
        Node other = open("other", b -> b);
        ExecutorService ex = Executors.newFixedThreadPool(4);
        try {
            List<Future<Connection>> fs = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                fs.add(ex.submit(() -> other.connect(server.address(), WAIT)));
            }
            Set<Connection> distinct = new HashSet<>();
            for (Future<Connection> f : fs) {
                distinct.add(f.get(20, TimeUnit.SECONDS));
            }
            assertEquals(1, distinct.size());
            assertEquals(other.name(), server.accept(WAIT).peerName());
            assertEquals(2, server.connections().size());
        } finally {
            ex.shutdownNow();
        }
    }

    @Test
    void regionDescriptorsAreExchangedAtSetup() throws Exception {
        RemoteRegion rr = targetAtClient();
        assertEquals(target.length(), rr.length());
        assertEquals(target.descriptor(s2c), rr);
        Region localOnly = server.register(4096, Access.LOCAL_WRITE);
        Node other = open("other", b -> b);
        Connection c = other.connect(server.address(), WAIT);
        Connection sc = server.accept(WAIT);
        assertTrue(c.remoteRegions().contains(target.descriptor(sc)));
        assertTrue(c.remoteRegions().stream().noneMatch(r -> r.address() == localOnly.address()),
            "local-only region must not be exported");
        assertThrows(IllegalArgumentException.class, () -> localOnly.descriptor(sc), "nothing to tell a peer");
        ByteBuffer enc = ByteBuffer.allocate(RemoteRegion.ENCODED_LENGTH);
        rr.encode(enc, 0);
        assertEquals(rr, RemoteRegion.decode(enc, 0));
    }

    @Test
    void aPeerFindsRegionsByTheNameGivenAtRegistration() throws Exception {
        Region small = server.register(64, Access.ALL, "small");
        Region inbox = server.register(64 << 10, Access.ALL, "inbox");
        Region hidden = server.register(4096, Access.LOCAL_WRITE, "local-only");
        Region unnamed = server.register(128, Access.ALL);
        Node other = open("other", b -> b);
        Connection c = other.connect(server.address(), WAIT);
        Connection sc = server.accept(WAIT);
        RemoteRegion rr = c.remoteRegion("inbox");
        assertEquals(inbox.descriptor(sc), rr);
        assertEquals("inbox", rr.name());
        assertEquals(inbox.descriptor(sc).remoteKey(), rr.remoteKey());
        assertEquals(64 << 10, rr.length());
        assertEquals(small.descriptor(sc).remoteKey(), c.remoteRegion("small").remoteKey());
        List<Integer> mine = List.of(target.descriptor(sc).remoteKey(), small.descriptor(sc).remoteKey(),
            inbox.descriptor(sc).remoteKey(), unnamed.descriptor(sc).remoteKey());
        List<Integer> order = new ArrayList<>();
        for (RemoteRegion x : c.remoteRegions()) {
            if (mine.contains(x.remoteKey())) {
                order.add(x.remoteKey());
            }
        }
        assertEquals(mine, order,
            "remoteRegions() lists the exported regions in registration order");
        IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
            () -> c.remoteRegion("local-only"));
        assertTrue(missing.getMessage().contains("'" + server.name() + "'")
            && missing.getMessage().contains("'local-only'") && missing.getMessage().contains("'inbox'")
            && missing.getMessage().contains("'small'"), missing.getMessage());
        Region src = filled(other, 4096, 21);
        assertEquals(Post.OK, c.post(WorkRequest.write(src, 0, 4096, rr, 1000).wrId(7)));
        assertTrue(Completions.take(other, 1, WAIT).get(0).ok());
        assertEquals(crc(src, 0, 4096), crc(inbox, 1000, 4096), "the WRITE landed in the region named inbox");
        assertTrue(hidden.refCnt() > 0);
    }

    @Test
    void regionNamesAreUniquePerNodeAndValidated() throws Exception {
        Region first = server.register(64, Access.ALL, "taken");
        IllegalArgumentException dup = assertThrows(IllegalArgumentException.class,
            () -> server.register(64, Access.LOCAL_WRITE, "taken"));
        assertTrue(dup.getMessage().contains("'taken'") && dup.getMessage().contains(server.name()),
            dup.getMessage());
        assertEquals("", server.register(64, Access.ALL, "").name(), "\"\" is unnamed, and may repeat");
        assertEquals("", server.register(64, Access.ALL).name());
        String tooLong = "x".repeat(RemoteRegion.MAX_NAME_BYTES + 1);
        IllegalArgumentException longName = assertThrows(IllegalArgumentException.class,
            () -> server.register(64, Access.ALL, tooLong));
        assertTrue(longName.getMessage().contains(String.valueOf(RemoteRegion.MAX_NAME_BYTES + 1)),
            longName.getMessage());
        assertThrows(IllegalArgumentException.class, () -> server.register(64, Access.ALL, "bad\nname"));
        assertThrows(IllegalArgumentException.class, () -> server.register(64, Access.ALL, null));
        assertTrue(first.release());
        Region again = server.register(256, Access.ALL, "taken");
        assertEquals("taken", again.name(), "a released region's name is free again");
        Node other = open("other", b -> b);
        Connection c = other.connect(server.address(), WAIT);
        Connection sc = server.accept(WAIT);
        assertEquals(again.descriptor(sc).remoteKey(), c.remoteRegion("taken").remoteKey(),
            "the live region carries the name");
        assertEquals(Post.OK, c2s.post(WorkRequest.write(filled(client, 8, 3), 0, 8, target.descriptor(s2c), 0)
            .wrId(9)));
        assertTrue(Completions.take(client, 1, WAIT).get(0).ok(), "the refused registrations broke nothing");
    }

    @Test
    void acceptTimesOutWithClearError() {
        RdmxTimeoutException e = assertThrows(RdmxTimeoutException.class, () -> server.accept(Duration.ofMillis(100)));
        assertTrue(e.getMessage().contains(server.name()), e.getMessage());
    }

    @Test
    void connectToAbsentNodeFailsClearly() throws Exception {
        Node gone = open("gone", b -> b);
        String addr = gone.address();
        gone.close();
        // no clock here: a connect that ignored its timeout would hang until the class's @Timeout fails it
        RdmxException e = assertThrows(RdmxException.class, () -> client.connect(addr, Duration.ofSeconds(5)));
        assertTrue(e.getMessage().contains(addr), e.getMessage());
    }

    @Test
    void nodeOptionsAreValidated() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> NodeOptions.builder().name("bad name!").build());
        assertTrue(e.getMessage().contains("name=bad name!"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> NodeOptions.builder().sendQueueDepth(0).build());
        assertTrue(e.getMessage().contains("sendQueueDepth=0"), e.getMessage());
    }

    // ---------------------------------------------------------------- data movement

    @Test
    void writeCompletionMeansDataIsPlaced() throws Exception {
        Region src = filled(client, 4096, 1);
        assertEquals(Post.OK, c2s.post(WorkRequest.write(src, 0, 4096, targetAtClient(), 1000).wrId(7)));
        Completion c = Completions.one(client);
        assertEquals(7, c.wrId());
        assertEquals(Opcode.WRITE, c.opcode());
        assertTrue(c.ok(), String.valueOf(c));
        assertArrayEquals(bytes(src, 0, 4096), bytes(target, 1000, 4096));
        Region rbuf = server.register(8, Access.ALL);
        assertEquals(Post.OK, s2c.post(WorkRequest.recv(rbuf, 0, 8).wrId(8)));
        assertEquals(Post.OK, c2s.post(WorkRequest.send(src, 0, 8).wrId(9)));
        assertEquals(8, Completions.one(server).wrId(), "a WRITE has no completion at the target: the first one"
            + " there is the marker SEND's receive, posted after it");
    }

    @Test
    void writeThenSendIsSeenInThatOrder() throws Exception {
        Region src = client.register(64 * 1024, Access.ALL);
        Region rbuf = server.register(64, Access.ALL);
        RemoteRegion dst = targetAtClient();
        Random rnd = new Random(2);
        for (int i = 0; i < 200; i++) {
            int len = 1 + rnd.nextInt(60 * 1024);
            byte[] data = new byte[len];
            rnd.nextBytes(data);
            src.buffer().put(0, data);
            src.buffer().putInt(len, i);
            assertEquals(Post.OK, s2c.post(WorkRequest.recv(rbuf, 0, 64).wrId(i)));
            assertEquals(Post.OK, c2s.post(WorkRequest.write(src, 0, len, dst, 0).wrId(2L * i).signaled(false)));
            assertEquals(Post.OK, c2s.post(WorkRequest.send(src, len, 4).wrId(2L * i + 1)));
            Completion r = Completions.one(server);
            assertEquals(Opcode.RECV, r.opcode());
            assertEquals(i, rbuf.buffer().getInt(0));
            assertArrayEquals(data, bytes(target, 0, len), "WRITE data must be visible when the SEND arrives, i=" + i);
            assertEquals(2L * i + 1, Completions.one(client).wrId());
        }
    }

    @Test
    void writeWithImmediateDeliversDataAndImmediate() throws Exception {
        Region src = filled(client, 10_000, 3);
        Region rbuf = server.register(16, Access.ALL);
        assertEquals(Post.OK, s2c.post(WorkRequest.recv(rbuf, 0, 16).wrId(99)));
        assertEquals(Post.OK, c2s.post(WorkRequest.writeImm(src, 0, 10_000, targetAtClient(), 5, 0xCAFE).wrId(1)));
        Completion r = Completions.one(server);
        assertEquals(99, r.wrId());
        assertEquals(Opcode.RECV, r.opcode());
        assertTrue(r.hasImmediate());
        assertEquals(0xCAFE, r.immediate());
        assertEquals(10_000, r.byteLength());
        assertArrayEquals(bytes(src, 0, 10_000), bytes(target, 5, 10_000));
        Completion s = Completions.one(client);
        assertEquals(Opcode.WRITE_WITH_IMM, s.opcode());
        assertTrue(s.ok());
    }

    @Test
    void sendLandsInPostedReceiveIntact() throws Exception {
        Region src = filled(client, 100_000, 4);
        Region rbuf = server.register(200_000, Access.ALL);
        Random rnd = new Random(5);
        for (int i = 0; i < 50; i++) {
            int off = rnd.nextInt(1000);
            int len = 1 + rnd.nextInt(99_000);
            assertEquals(Post.OK, s2c.post(WorkRequest.recv(rbuf, 7, 200_000 - 7).wrId(i)));
            assertEquals(Post.OK, c2s.post(WorkRequest.send(src, off, len).wrId(i)));
            Completion r = Completions.one(server);
            assertEquals(len, r.byteLength());
            assertFalse(r.hasImmediate());
            assertEquals(crc(src, off, len), crc(rbuf, 7, len));
            assertEquals(Opcode.SEND, Completions.one(client).opcode());
        }
    }

    @Test
    void sendWaitsForAReceiveToBePosted() throws Exception {
        Region src = filled(client, 128, 6);
        Region rbuf = server.register(128, Access.ALL);
        Region mbuf = client.register(8, Access.ALL);
        assertEquals(Post.OK, c2s.post(WorkRequest.recv(mbuf, 0, 8).wrId(3)));
        assertEquals(Post.OK, c2s.post(WorkRequest.send(src, 0, 128).wrId(1)));
        Region marker = server.register(8, Access.ALL);
        assertEquals(Post.OK, s2c.post(WorkRequest.send(marker, 0, 8).wrId(4)));
        assertEquals(3, Completions.one(client).wrId(), "the client's first completion is the receive of a marker"
            + " sent back after its SEND, not the SEND, which has no receive yet");
        assertEquals(Post.OK, s2c.post(WorkRequest.recv(rbuf, 0, 128).wrId(2)));
        List<Completion> sc = Completions.take(server, 2, WAIT);
        assertEquals(List.of(2L), sc.stream().filter(k -> k.opcode() == Opcode.RECV).map(Completion::wrId)
            .toList(), String.valueOf(sc));
        assertEquals(1, Completions.one(client).wrId());
        assertArrayEquals(bytes(src, 0, 128), bytes(rbuf, 0, 128));
    }

    @Test
    void manyOutstandingRequestsCompleteInPostingOrder() throws Exception {
        Region src = filled(client, 1 << 16, 7);
        Region rbuf = server.register(1 << 16, Access.ALL);
        RemoteRegion dst = targetAtClient();
        int n = 1000;
        for (int i = 0; i < n / 10; i++) {
            assertEquals(Post.OK, s2c.post(WorkRequest.recv(rbuf, 0, 1 << 16).wrId(i)));
        }
        int posted = 0;
        for (int i = 0; i < n; i++) {
            WorkRequest wr = i % 10 == 9 ? WorkRequest.send(src, 0, 512) : WorkRequest.write(src, i, 512, dst, i * 64L);
            assertEquals(Post.OK, c2s.post(wr.wrId(i)));
            posted++;
        }
        List<Completion> cs = Completions.take(client, posted, WAIT);
        for (int i = 0; i < n; i++) {
            assertEquals(i, cs.get(i).wrId(), "completion order");
            assertTrue(cs.get(i).ok());
        }
        List<Completion> rs = Completions.take(server, n / 10, WAIT);
        for (int i = 0; i < n / 10; i++) {
            assertEquals(i, rs.get(i).wrId(), "receives complete in posting order");
        }
    }

    @Test
    void sendQueueFullIsReportedAsACode() throws Exception {
        Node small = open("small", b -> b.sendQueueDepth(4));
        Connection c = small.connect(server.address(), WAIT);
        Connection back = server.accept(WAIT);
        Region src = filled(small, 64, 8);
        Region rbuf = server.register(64 * 8, Access.ALL);
        for (int i = 0; i < 4; i++) {
            assertEquals(Post.OK, c.post(WorkRequest.send(src, 0, 64).wrId(i)));
        }
        assertEquals(Post.SEND_QUEUE_FULL, c.post(WorkRequest.send(src, 0, 64).wrId(4)));
        assertEquals("SEND_QUEUE_FULL", Post.name(Post.SEND_QUEUE_FULL));
        for (int i = 0; i < 4; i++) {
            assertEquals(Post.OK, back.post(WorkRequest.recv(rbuf, i * 64, 64).wrId(i)));
        }
        List<Completion> cs = Completions.take(small, 4, WAIT);
        assertEquals(3, cs.get(3).wrId());
        assertEquals(Post.OK, c.post(WorkRequest.send(src, 0, 64).wrId(5)));
    }

    @Test
    void receiveQueueFullIsReportedAsACode() throws Exception {
        Node small = open("small", b -> b.recvQueueDepth(3));
        Connection c = small.connect(server.address(), WAIT);
        Region rbuf = small.register(64, Access.ALL);
        for (int i = 0; i < 3; i++) {
            assertEquals(Post.OK, c.post(WorkRequest.recv(rbuf, 0, 64)));
        }
        assertEquals(Post.RECV_QUEUE_FULL, c.post(WorkRequest.recv(rbuf, 0, 64)));
    }

    /**
     * SENDs fill the posted receives oldest first, each its own, while the queue of posted receives empties and
     * fills again and grows past its size (posted 3, two taken, 6 more posted: the oldest is in the middle of the
     * queue when it grows).
     */
    @Test
    void sendsFillReceivesInPostOrderWhileTheQueueWrapsAndGrows() throws Exception {
        Region src = filled(client, 9 * 32, 21);
        Region rbuf = server.register(9 * 32, Access.ALL);
        for (int i = 0; i < 3; i++) {
            assertEquals(Post.OK, s2c.post(WorkRequest.recv(rbuf, i * 32, 32).wrId(100 + i)));
        }
        for (int i = 0; i < 2; i++) {
            assertEquals(Post.OK, c2s.post(WorkRequest.send(src, i * 32, 32 - i).wrId(i)));
        }
        List<Completion> first = Completions.take(server, 2, WAIT);
        for (int i = 3; i < 9; i++) {
            assertEquals(Post.OK, s2c.post(WorkRequest.recv(rbuf, i * 32, 32).wrId(100 + i)));
        }
        for (int i = 2; i < 9; i++) {
            assertEquals(Post.OK, c2s.post(WorkRequest.send(src, i * 32, 32 - i).wrId(i)));
        }
        List<Completion> rest = Completions.take(server, 7, WAIT);
        List<Completion> all = new java.util.ArrayList<>(first);
        all.addAll(rest);
        for (int i = 0; i < 9; i++) {
            Completion c = all.get(i);
            assertTrue(c.ok(), c.toString());
            assertEquals(100 + i, c.wrId(), "receive " + i + " in post order");
            assertEquals(32 - i, c.byteLength(), "receive " + i + " got SEND " + i);
            assertArrayEquals(bytes(src, i * 32, 32 - i), bytes(rbuf, i * 32, 32 - i), "receive " + i + "'s bytes");
        }
        Completions.take(client, 9, WAIT);
    }

    @Test
    void zeroLengthWriteAndSendComplete() throws Exception {
        Region src = filled(client, 16, 9);
        Region rbuf = server.register(16, Access.ALL);
        byte[] before = bytes(target, 0, 16);
        assertEquals(Post.OK, s2c.post(WorkRequest.recv(rbuf, 0, 16).wrId(1)));
        assertEquals(Post.OK, c2s.post(WorkRequest.write(src, 0, 0, targetAtClient(), 0).wrId(1)));
        assertEquals(Post.OK, c2s.post(WorkRequest.send(src, 0, 0).wrId(2)));
        List<Completion> cs = Completions.take(client, 2, WAIT);
        assertTrue(cs.get(0).ok() && cs.get(1).ok());
        Completion r = Completions.one(server);
        assertEquals(0, r.byteLength());
        assertArrayEquals(before, bytes(target, 0, 16));
    }

    @Test
    void largeTransfersArriveIntact() throws Exception {
        int big = 8 << 20;
        Region bigTarget = server.register(big, Access.ALL);
        Node other = open("other", b -> b);
        Connection c = other.connect(server.address(), WAIT);
        Connection back = server.accept(WAIT);
        Region src = filled(other, big, 10);
        assertEquals(Post.OK, c.post(WorkRequest.write(src, 0, big, bigTarget.descriptor(back), 0).wrId(1)));
        assertTrue(Completions.take(other, 1, Duration.ofSeconds(30)).get(0).ok());
        assertEquals(crc(src, 0, big), crc(bigTarget, 0, big));
        Region rbuf = server.register(4 << 20, Access.ALL);
        assertEquals(Post.OK, back.post(WorkRequest.recv(rbuf, 0, 4 << 20).wrId(2)));
        assertEquals(Post.OK, c.post(WorkRequest.send(src, 123, 4 << 20).wrId(3)));
        assertEquals(4 << 20, Completions.take(server, 1, Duration.ofSeconds(30)).get(0).byteLength());
        assertEquals(crc(src, 123, 4 << 20), crc(rbuf, 0, 4 << 20));
    }

    @Test
    void unsignaledWriteHasNoCompletionButIsOrdered() throws Exception {
        Region src = filled(client, 256, 11);
        Region rbuf = server.register(16, Access.ALL);
        assertEquals(Post.OK, s2c.post(WorkRequest.recv(rbuf, 0, 16)));
        assertEquals(Post.OK, c2s.post(WorkRequest.write(src, 0, 256, targetAtClient(), 0).wrId(1).signaled(false)));
        assertEquals(Post.OK, c2s.post(WorkRequest.send(src, 0, 8).wrId(2)));
        Completion c = Completions.one(client);
        assertEquals(2, c.wrId());
        Completions.one(server);
        assertArrayEquals(bytes(src, 0, 256), bytes(target, 0, 256));
        assertEquals(Post.OK, c2s.post(WorkRequest.write(src, 0, 8, targetAtClient(), 0).wrId(3)));
        assertEquals(3, Completions.one(client).wrId(), "the next completion is the marker WRITE's");
    }

    @Test
    void preparedRequestIsRepostedWithNewOffsets() throws Exception {
        Region src = filled(client, 1 << 16, 12);
        PreparedRequest p = c2s.prepare(WorkRequest.write(src, 0, 0, targetAtClient(), 0));
        assertSame(c2s, p.connection());
        for (int i = 0; i < 64; i++) {
            assertEquals(Post.OK, p.post(i, i * 1024, 1024, 4096L * i));
        }
        List<Completion> cs = Completions.take(client, 64, WAIT);
        for (int i = 0; i < 64; i++) {
            assertEquals(i, cs.get(i).wrId());
            assertArrayEquals(bytes(src, i * 1024, 1024), bytes(target, 4096 * i, 1024));
        }
        Region rbuf = server.register(64, Access.ALL);
        assertEquals(Post.OK, s2c.post(WorkRequest.recv(rbuf, 0, 64)));
        PreparedRequest imm = c2s.prepare(WorkRequest.writeImm(src, 0, 0, targetAtClient(), 0, 0));
        assertEquals(Post.OK, imm.post(100, 0, 10, 0, 42));
        assertEquals(42, Completions.one(server).immediate());
    }

    @Test
    void threadsPostingConcurrentlyLoseNothing() throws Exception {
        int threads = 4;
        int perThread = 250;
        Region rbuf = server.register(threads * perThread * 8, Access.ALL);
        for (int i = 0; i < threads * perThread; i++) {
            assertEquals(Post.OK, s2c.post(WorkRequest.recv(rbuf, i * 8, 8).wrId(i)));
        }
        ExecutorService ex = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
                fs.add(ex.submit(() -> {
                    Region src = client.register(perThread * 8, Access.ALL);
                    for (int i = 0; i < perThread; i++) {
                        src.buffer().putInt(i * 8, id).putInt(i * 8 + 4, i);
                        int rc;
                        while ((rc = c2s.post(WorkRequest.send(src, i * 8, 8).wrId(id * 100_000L + i))) != Post.OK) {
                            assertEquals(Post.SEND_QUEUE_FULL, rc);
                            Thread.sleep(1);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            ex.shutdownNow();
        }
        List<Completion> rs = Completions.take(server, threads * perThread, Duration.ofSeconds(30));
        int[] next = new int[threads];
        for (Completion r : rs) {
            int slot = (int) r.wrId();
            int who = rbuf.buffer().getInt(slot * 8);
            int seq = rbuf.buffer().getInt(slot * 8 + 4);
            assertEquals(next[who]++, seq, "per-thread order of thread " + who);
        }
        for (int t = 0; t < threads; t++) {
            assertEquals(perThread, next[t]);
        }
        assertEquals(threads * perThread, Completions.take(client, threads * perThread, WAIT).size());
    }

    @Test
    void bothDirectionsAtOnce() throws Exception {
        Region a = filled(client, 4096, 13);
        Region b = filled(server, 4096, 14);
        Region ra = client.register(4096 * 100, Access.ALL);
        Region rb = server.register(4096 * 100, Access.ALL);
        for (int i = 0; i < 100; i++) {
            c2s.post(WorkRequest.recv(ra, i * 4096, 4096).wrId(i));
            s2c.post(WorkRequest.recv(rb, i * 4096, 4096).wrId(i));
        }
        for (int i = 0; i < 100; i++) {
            assertEquals(Post.OK, c2s.post(WorkRequest.send(a, 0, 4096).wrId(1000 + i)));
            assertEquals(Post.OK, s2c.post(WorkRequest.send(b, 0, 4096).wrId(1000 + i)));
        }
        List<Completion> cc = Completions.take(client, 200, WAIT);
        List<Completion> sc = Completions.take(server, 200, WAIT);
        assertEquals(200, cc.stream().filter(Completion::ok).count());
        assertEquals(200, sc.stream().filter(Completion::ok).count());
        assertArrayEquals(bytes(b, 0, 4096), bytes(ra, 99 * 4096, 4096));
        assertArrayEquals(bytes(a, 0, 4096), bytes(rb, 99 * 4096, 4096));
    }

    @Test
    void heavyTrafficBothWaysKeepsFramesIntact() throws Exception {
        int rounds = 1500;
        Region tgtC = client.register(1 << 16, Access.ALL);
        Node[] ends = {client, server};
        Connection[] conns = {c2s, s2c};
        Region[] targets = {target, tgtC};
        ExecutorService ex = Executors.newFixedThreadPool(2);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int side = 0; side < 2; side++) {
                int me = side;
                fs.add(ex.submit(() -> {
                    Region src = filled(ends[me], 1 << 16, 30 + me);
                    RemoteRegion dst = targets[me].descriptor(conns[1 - me]); // as the peer at the other end has it
                    Random rnd = new Random(me);
                    int inFlight = 0;
                    for (int i = 0; i < rounds; i++) {
                        int len = 1 + rnd.nextInt(60_000);
                        int rc;
                        while ((rc = conns[me].post(WorkRequest.write(src, 0, len, dst, 0).wrId(i))) != Post.OK) {
                            assertEquals(Post.SEND_QUEUE_FULL, rc);
                            inFlight -= Completions.take(ends[me], 1, WAIT).size();
                        }
                        inFlight++;
                    }
                    List<Completion> cs = Completions.take(ends[me], inFlight, WAIT);
                    for (Completion k : cs) {
                        assertTrue(k.ok(), String.valueOf(k));
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            ex.shutdownNow();
        }
        assertTrue(c2s.isOpen() && s2c.isOpen(), "no frame may be torn: " + c2s.closeCause() + " / "
            + s2c.closeCause());
        Region probe = filled(client, 4096, 30);
        assertEquals(crc(probe, 0, 4096), crc(target, 0, 4096), "last WRITE from the client landed intact");
    }

    // ---------------------------------------------------------------- refused access

    private void assertRefusedAndIsolated(Completion c, String... mustContain) throws Exception {
        assertEquals(Status.REMOTE_ACCESS_ERROR, c.status(), String.valueOf(c));
        assertNotNull(c.error());
        for (String s : mustContain) {
            assertTrue(c.detail().contains(s), "detail '" + c.detail() + "' should contain '" + s + "'");
        }
        assertTrue(c.error().getMessage().contains(server.name()), c.error().getMessage());
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (c2s.isOpen() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertFalse(c2s.isOpen(), "a remote access error moves the connection to the error state");
        Region mine = client.register(8, Access.ALL);
        ConnectionClosedException closed = assertThrows(ConnectionClosedException.class,
            () -> c2s.post(WorkRequest.send(mine, 0, 0)));
        assertTrue(closed.getMessage().contains(server.name()), closed.getMessage());
        // The server and its other connections are unaffected.
        Node other = open("other", b -> b);
        Connection c2 = other.connect(server.address(), WAIT);
        Connection sc2 = server.accept(WAIT);
        Region src = filled(other, 64, 15);
        assertEquals(Post.OK, c2.post(WorkRequest.write(src, 0, 64, target.descriptor(sc2), 0).wrId(5)));
        assertTrue(Completions.one(other).ok());
        assertArrayEquals(bytes(src, 0, 64), bytes(target, 0, 64));
    }

    @Test
    void writeWithWrongKeyIsRefusedAndWritesNothing() throws Exception {
        Region src = filled(client, 64, 16);
        byte[] before = bytes(target, 0, 4096);
        RemoteRegion forged = new RemoteRegion(0, target.length(), target.remoteKey() ^ 0x1234);
        assertEquals(Post.OK, c2s.post(WorkRequest.write(src, 0, 64, forged, 0).wrId(1)));
        Completion c = Completions.one(client);
        assertArrayEquals(before, bytes(target, 0, 4096));
        assertRefusedAndIsolated(c, "rkey=0x" + Integer.toHexString(forged.remoteKey()));
    }

    @Test
    void aRegionGrantedToOnePeerIsReachedByThatPeerAndNeverListed() throws Exception {
        Region granted = s2c.register(4096, Access.ALL);
        assertFalse(c2s.remoteRegions().contains(granted.descriptor()), "a grant is not in the setup message");
        Node other = open("other", b -> b);
        Connection c = other.connect(server.address(), WAIT);
        Connection sc = server.accept(WAIT);
        assertTrue(c.remoteRegions().stream().noneMatch(r -> r.address() == granted.address()),
            "a region granted to one peer is never listed to another");
        assertTrue(c.remoteRegions().contains(target.descriptor(sc)), "node-wide regions are still listed");
        assertEquals(granted.descriptor(), granted.descriptor(s2c), "a grant has one key: its grantee's");
        assertThrows(IllegalArgumentException.class, () -> granted.descriptor(sc), "nor described to another");
        // the grantee writes into it (its descriptor reaches it through the application, as the channel's REGION)
        Region src = filled(client, 64, 40);
        assertEquals(Post.OK, c2s.post(WorkRequest.write(src, 0, 64, granted.descriptor(), 128).wrId(9)));
        assertTrue(Completions.one(client).ok());
        assertArrayEquals(bytes(src, 0, 64), bytes(granted, 128, 64));
    }

    @Test
    void aWriteToARegionGrantedToAnotherPeerIsRefusedAndWritesNothing() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(fabric().scopesRegions(), fabric().name()
            + " leaves key checks to the NIC and does not scope keys yet (docs/security.md)");
        Node victim = open("victim", b -> b);
        victim.connect(server.address(), WAIT);
        Connection serverToVictim = server.accept(WAIT);
        assertEquals(victim.name(), serverToVictim.peerName());
        Region victimsRing = serverToVictim.register(4096, Access.ALL);
        Region src = filled(client, 64, 41);
        byte[] before = bytes(victimsRing, 0, 4096);
        // the client names the key of a region granted to another peer, with the right length and offset
        assertEquals(Post.OK, c2s.post(WorkRequest.write(src, 0, 64, victimsRing.descriptor(), 0).wrId(4)));
        Completion c = Completions.one(client);
        assertArrayEquals(before, bytes(victimsRing, 0, 4096), "the other peer's region is untouched");
        assertRefusedAndIsolated(c, "rkey=0x" + Integer.toHexString(victimsRing.remoteKey()));
        assertTrue(serverToVictim.isOpen(), "the peer whose region was named is not affected");
    }

    @Test
    void writeOutsideRegionIsRefusedAndWritesNothing() throws Exception {
        Region src = filled(client, 4096, 17);
        byte[] before = bytes(target, target.length() - 4096, 4096);
        assertEquals(Post.OK, c2s.post(WorkRequest.write(src, 0, 4096, targetAtClient(), target.length() - 100)));
        Completion c = Completions.one(client);
        assertArrayEquals(before, bytes(target, target.length() - 4096, 4096), "nothing written at the edge");
        assertRefusedAndIsolated(c, "offset=" + (target.length() - 100), "length=4096");
    }

    @Test
    void writeAtAnOverflowingOffsetIsRefusedLikeAnyOutOfBoundsWrite() throws Exception {
        // offset + length overflows a long: a bounds check written as "offset + length > length" lets it through
        Region src = filled(client, 64, 22);
        byte[] before = bytes(target, 0, 4096);
        long offset = Long.MAX_VALUE - 3;
        assertEquals(Post.OK, c2s.post(WorkRequest.write(src, 0, 8, targetAtClient(), offset).wrId(3)));
        Completion c = Completions.one(client);
        assertEquals(3, c.wrId());
        assertArrayEquals(before, bytes(target, 0, 4096), "nothing written");
        assertRefusedAndIsolated(c, "offset=" + offset, "length=8");
    }

    @Test
    void writeToLocalOnlyRegionIsRefused() throws Exception {
        Region local = server.register(4096, Access.LOCAL_WRITE);
        Region src = filled(client, 64, 18);
        assertEquals(Post.OK, c2s.post(WorkRequest.write(src, 0, 64, local.descriptor(), 0)));
        Completion c = Completions.one(client);
        assertEquals(0, local.buffer().getLong(0));
        assertRefusedAndIsolated(c, "rkey=0x" + Integer.toHexString(local.remoteKey()));
    }

    @Test
    void writeToReleasedRegionIsRefused() throws Exception {
        Region gone = server.register(4096, Access.ALL);
        RemoteRegion d = gone.descriptor(s2c);
        assertTrue(gone.release());
        Region src = filled(client, 64, 19);
        assertEquals(Post.OK, c2s.post(WorkRequest.write(src, 0, 64, d, 0)));
        assertRefusedAndIsolated(Completions.one(client), "rkey=0x" + Integer.toHexString(d.remoteKey()));
    }

    @Test
    void receiveTooSmallFailsBothSides() throws Exception {
        Region src = filled(client, 256, 20);
        Region rbuf = server.register(256, Access.ALL);
        assertEquals(Post.OK, s2c.post(WorkRequest.recv(rbuf, 0, 100).wrId(1)));
        assertEquals(Post.OK, c2s.post(WorkRequest.send(src, 0, 256).wrId(2)));
        Completion r = Completions.one(server);
        assertEquals(Status.LOCAL_LENGTH_ERROR, r.status(), String.valueOf(r));
        // The receiver names its own buffer: on RDMA hardware it cannot know the length of the refused SEND.
        assertTrue(r.detail().contains("length=100"), r.detail());
        assertTrue(r.error().getMessage().contains(client.name()), r.error().getMessage());
        Completion s = Completions.one(client);
        assertEquals(Status.REMOTE_INVALID_REQUEST, s.status(), String.valueOf(s));
        assertEquals(2, s.wrId());
    }

    // ---------------------------------------------------------------- misuse

    @Test
    void localMisuseThrowsAndLeavesTheConnectionUsable() throws Exception {
        Region src = filled(client, 64, 21);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> c2s.post(WorkRequest.write(src, 32, 64, targetAtClient(), 0)));
        assertTrue(e.getMessage().contains("offset=32") && e.getMessage().contains("length=64"), e.getMessage());
        Region foreign = server.register(64, Access.ALL);
        e = assertThrows(IllegalArgumentException.class, () -> c2s.post(WorkRequest.send(foreign, 0, 8)));
        assertTrue(e.getMessage().contains(client.name()), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> c2s.post(WorkRequest.write(src, 0, 8, null, 0)));
        Region ro = client.register(64, Access.REMOTE_WRITE);
        assertThrows(IllegalArgumentException.class, () -> c2s.post(WorkRequest.recv(ro, 0, 8)));
        assertTrue(c2s.isOpen());
        assertEquals(Post.OK, c2s.post(WorkRequest.write(src, 0, 64, targetAtClient(), 0).wrId(3)));
        assertEquals(3, Completions.one(client).wrId());
    }

    @Test
    void transferOverTheLimitIsMisuse() throws Exception {
        Node small = open("small", b -> b.maxTransferSize(1024));
        Connection c = small.connect(server.address(), WAIT);
        Region src = small.register(4096, Access.ALL);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> c.post(WorkRequest.send(src, 0, 2048)));
        assertTrue(e.getMessage().contains("maxTransferSize=1024"), e.getMessage());
        assertTrue(c.isOpen());
    }

    @Test
    void regionsAreReferenceCounted() throws Exception {
        Region r = client.register(128, Access.ALL);
        assertEquals(1, r.refCnt());
        r.retain();
        assertFalse(r.release());
        assertTrue(r.release());
        assertEquals(0, r.refCnt());
        IllegalStateException e = assertThrows(IllegalStateException.class, r::release);
        assertTrue(e.getMessage().contains("rkey=0x"), e.getMessage());
        assertThrows(IllegalStateException.class, () -> c2s.post(WorkRequest.send(r, 0, 8)));
    }

    @Test
    void aPostAfterItsNodeClosedReportsTheClosedConnectionNotTheRegionTheCloseReleased() throws Exception {
        Region src = filled(client, 64, 24);
        client.close(); // closes c2s, then releases src (a leak report): a post now must say the connection is closed
        assertEquals(0, src.refCnt(), "the node's close released the region");
        ConnectionClosedException e = assertThrows(ConnectionClosedException.class,
            () -> c2s.post(WorkRequest.send(src, 0, 8)));
        assertTrue(e.getMessage().contains(server.name()), e.getMessage());
        assertEquals(server.name(), e.peer());
    }

    @Test
    void leakedRegionsAreReportedWhenTheNodeCloses() throws Exception {
        Node n = open("leaky", b -> b);
        n.register(64, Access.ALL);
        Region released = n.register(64, Access.ALL);
        released.release();
        long before = LeakDetector.leakCount();
        n.close();
        assertEquals(before + 1, LeakDetector.leakCount());
    }

    // ---------------------------------------------------------------- failure and close

    @Test
    void peerDeathWakesWaiterWithErrorNamingPeer() throws Exception {
        Region rbuf = client.register(64, Access.ALL);
        assertEquals(Post.OK, c2s.post(WorkRequest.recv(rbuf, 0, 64).wrId(77)));
        CompletableFuture<Completion> got = new CompletableFuture<>();
        CountDownLatch waiting = new CountDownLatch(1);
        Thread waiter = new Thread(() -> {
            waiting.countDown();
            List<Completion> out = new ArrayList<>();
            try {
                client.completionQueue().await(out::add, 1, 30, TimeUnit.SECONDS);
                got.complete(out.isEmpty() ? null : out.get(0));
            } catch (Exception e) {
                got.completeExceptionally(e);
            }
        });
        waiter.start();
        waiting.await();
        Blocking.awaitBlockedIn(waiter, "await", WAIT);
        kill(server);
        Completion c = got.get(5, TimeUnit.SECONDS);
        assertNotNull(c, "waiter woke without completion");
        assertEquals(77, c.wrId());
        assertEquals(Status.FLUSHED, c.status());
        RdmxException e = c.error();
        assertTrue(e.getMessage().contains(server.name()), e.getMessage());
        assertEquals(server.name(), ((ConnectionClosedException) e).peer());
        ConnectionClosedException post = assertThrows(ConnectionClosedException.class,
            () -> c2s.post(WorkRequest.send(rbuf, 0, 1)));
        assertTrue(post.getMessage().contains(server.name()), post.getMessage());
        waiter.join(5000);
    }

    @Test
    void peerDeathFlushesOutstandingSends() throws Exception {
        Region src = filled(client, 64, 22);
        for (int i = 0; i < 5; i++) {
            assertEquals(Post.OK, c2s.post(WorkRequest.send(src, 0, 64).wrId(i)));
        }
        kill(server);
        List<Completion> cs = Completions.take(client, 5, Duration.ofSeconds(5));
        for (int i = 0; i < 5; i++) {
            assertEquals(i, cs.get(i).wrId());
            assertEquals(Status.FLUSHED, cs.get(i).status());
            assertTrue(cs.get(i).detail().contains(server.name()), cs.get(i).detail());
        }
    }

    @Test
    void closeWhileBusyFlushesEverythingOnBothSides() throws Exception {
        Region src = filled(client, 64, 23);
        Region rbuf = server.register(64, Access.ALL);
        for (int i = 0; i < 20; i++) {
            assertEquals(Post.OK, c2s.post(WorkRequest.send(src, 0, 64).wrId(i)));
        }
        assertEquals(Post.OK, s2c.post(WorkRequest.recv(rbuf, 0, 64).wrId(100)));
        assertEquals(Post.OK, s2c.post(WorkRequest.recv(rbuf, 0, 64).wrId(101)));
        List<Completion> first = Completions.take(server, 2, WAIT);
        assertTrue(first.get(0).ok() && first.get(1).ok());
        assertEquals(Post.OK, s2c.post(WorkRequest.recv(rbuf, 0, 64).wrId(102)));
        Completions.take(server, 1, WAIT);
        assertEquals(Post.OK, s2c.post(WorkRequest.recv(rbuf, 0, 64).wrId(103)));
        c2s.close();
        List<Completion> cs = Completions.take(client, 20, WAIT);
        long ok = cs.stream().filter(Completion::ok).count();
        long flushed = cs.stream().filter(c -> c.status() == Status.FLUSHED).count();
        assertEquals(20, ok + flushed, String.valueOf(cs));
        assertTrue(flushed >= 16, "at most 4 sends had receives: " + cs);
        ConnectionClosedException e = assertThrows(ConnectionClosedException.class,
            () -> c2s.post(WorkRequest.send(src, 0, 8)));
        assertTrue(e.getMessage().contains(server.name()), e.getMessage());
        // the server side learns of the close; its posted receives are flushed
        List<Completion> rest = new ArrayList<>();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (s2c.isOpen() || server.completionQueue().size() > 0) {
            server.completionQueue().poll(rest::add, 100);
            assertTrue(System.nanoTime() < deadline, "server never saw the close");
            Thread.sleep(5);
        }
        server.completionQueue().poll(rest::add, 100);
        assertEquals(1, rest.stream().filter(c -> c.wrId() == 103).count(),
            "receive 103 completes exactly once (data or flushed): " + rest);
        assertNotNull(s2c.closeCause());
        assertTrue(s2c.closeCause().getMessage().contains(client.name()), s2c.closeCause().getMessage());
    }

    @Test
    void closingTheNodeWakesTheCompletionWaiter() throws Exception {
        AtomicReference<Throwable> err = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        Thread t = new Thread(() -> {
            try {
                client.completionQueue().await(c -> { }, 1, 30, TimeUnit.SECONDS);
            } catch (Throwable e) {
                err.set(e);
            } finally {
                done.countDown();
            }
        });
        t.start();
        Blocking.awaitBlockedIn(t, "await", WAIT);
        client.close();
        assertTrue(done.await(5, TimeUnit.SECONDS), "waiter not woken by close");
        assertTrue(err.get() instanceof RdmxException, String.valueOf(err.get()));
        assertTrue(err.get().getMessage().contains(client.name()), err.get().getMessage());
        assertFalse(client.isOpen());
        assertThrows(RdmxException.class, () -> client.register(8, Access.ALL));
    }

    @Test
    void closingTheNodeWakesAcceptAndClosesPeers() throws Exception {
        CompletableFuture<Throwable> f = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                server.accept(Duration.ofSeconds(30));
                f.complete(null);
            } catch (Throwable e) {
                f.complete(e);
            }
        });
        t.start();
        Blocking.awaitBlockedIn(t, "accept", WAIT);
        server.close();
        Throwable e = f.get(5, TimeUnit.SECONDS);
        assertTrue(e instanceof RdmxException && e.getMessage().contains("closed"), String.valueOf(e));
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (c2s.isOpen() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertFalse(c2s.isOpen(), "client must see the server close");
        assertTrue(c2s.closeCause().getMessage().contains(server.name()), c2s.closeCause().getMessage());
    }

    @Test
    void awaitReturnsZeroOnTimeout() throws Exception {
        List<Completion> out = new ArrayList<>();
        assertEquals(0, client.completionQueue().await(out::add, 1, 50, TimeUnit.MILLISECONDS));
        assertTrue(out.isEmpty());
    }

    /**
     * An inline completion handler that throws an {@link Error} (the {@link NoSuchMethodError} of a log call
     * made against another version of a library, say) fails its own connection only: the provider's I/O thread
     * goes on delivering the completions of the node's other connections, and of connections made after.
     */
    @Test
    void anErrorFromAnInlineHandlerFailsThatConnectionOnly() throws Exception {
        BlockingQueue<String> seen = new ArrayBlockingQueue<>(16);
        Optional<InlineCompletions> inline = s2c.capability(InlineCompletions.class);
        assumeTrue(inline.isPresent(), fabric().name() + " delivers no completion inline");
        inline.get().completionHandler((wrId, op, status, len, imm, hasImm, detail) -> {
            throw new NoSuchMethodError("'org.slf4j.spi.LoggingEventBuilder org.slf4j.Logger.atInfo()'");
        });
        Node other = open("other", b -> b);
        Connection o2s = other.connect(server.address(), WAIT);
        Connection s2o = server.accept(WAIT);
        s2o.capability(InlineCompletions.class).orElseThrow().completionHandler(
            (wrId, op, status, len, imm, hasImm, detail) -> seen.add("other wrId=" + wrId + " len=" + len));
        Region rbuf = server.register(256, Access.ALL);
        Region src = filled(client, 64, 11);
        Region osrc = filled(other, 64, 12);
        assertEquals(Post.OK, s2c.post(WorkRequest.recv(rbuf, 0, 64).wrId(1)));
        assertEquals(Post.OK, s2o.post(WorkRequest.recv(rbuf, 64, 64).wrId(2)));
        assertEquals(Post.OK, c2s.post(WorkRequest.send(src, 0, 5)));
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (s2c.isOpen() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertFalse(s2c.isOpen(), "the connection whose handler threw is still open");
        assertTrue(String.valueOf(s2c.closeCause()).contains("NoSuchMethodError"), String.valueOf(s2c.closeCause()));
        // the other connection, on the same node (and I/O thread), still gets its completions
        assertEquals(Post.OK, o2s.post(WorkRequest.send(osrc, 0, 6)));
        assertEquals("other wrId=2 len=6", seen.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS));
        // and a connection made after works too
        Node late = open("late", b -> b);
        Connection l2s = late.connect(server.address(), WAIT);
        Connection s2l = server.accept(WAIT);
        s2l.capability(InlineCompletions.class).orElseThrow().completionHandler(
            (wrId, op, status, len, imm, hasImm, detail) -> seen.add("late wrId=" + wrId + " len=" + len));
        assertEquals(Post.OK, s2l.post(WorkRequest.recv(rbuf, 128, 64).wrId(3)));
        assertEquals(Post.OK, l2s.post(WorkRequest.send(filled(late, 64, 13), 0, 7)));
        assertEquals("late wrId=3 len=7", seen.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS));
        assertTrue(o2s.isOpen() && s2o.isOpen(), "the other connection went down");
    }
}
