package io.rdmx.transport.testsuite;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmx.transport.Access;
import io.rdmx.transport.Completion;
import io.rdmx.transport.Connection;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.Post;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Region;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.Status;
import io.rdmx.transport.WorkRequest;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The conformance suite of one-sided {@link Opcode#READ} and of file-backed regions ({@link Node#registerFile}), run
 * unchanged by every provider that offers them (a one-line subclass, as {@link TransportConformanceSuite}): reads of
 * node-wide and granted regions, keys, bounds and per-connection scope (the rules of WRITE), a READ after a WRITE on
 * the same connection, a released region, file regions, the largest transfer and many READs outstanding.
 *
 * <p>A refused READ completes {@link Status#REMOTE_ACCESS_ERROR} and, on the providers that serve READs in software
 * (loopback, shm, tcp), leaves the connection usable: the peer answered, nothing is out of step. A provider whose
 * hardware moves the queue pair to the error state on a remote access error (verbs) says so with
 * {@link #remoteReadErrorsAreFatal()}, and the suite then checks that the connection goes down instead.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class ReadConformanceSuite {
    /** Bound on every wait in this suite. */
    protected static final Duration WAIT = Duration.ofSeconds(10);
    /** Length of the regions set up for each test. */
    protected static final int LENGTH = 1 << 16;
    /** Length of the file behind the node-wide file region, and where in it the region starts. */
    private static final int FILE_LENGTH = 3 * 4096;
    private static final int FILE_POSITION = 4096 + 17;
    private static final int FILE_REGION_LENGTH = 4096;
    private static final AtomicInteger SEQ = new AtomicInteger();

    private final List<Node> nodes = new ArrayList<>();
    /** The passive side: owns the regions that are read. */
    protected Node server;
    /** The active side: reads. */
    protected Node client;
    /** client -> server. */
    protected Connection c2s;
    /** server -> client. */
    protected Connection s2c;
    /** A node-wide region of the server, {@code LOCAL_WRITE | REMOTE_READ}, filled with a pattern: "readable". */
    protected Region readable;
    /** A node-wide region of the server, {@link Access#ALL} (remotely writable, not readable): "writable". */
    protected Region writable;
    /** A node-wide region of the server, writable and readable: "both". */
    protected Region both;
    /** A node-wide file region of the server ("file"): {@link #FILE_REGION_LENGTH} bytes at {@link #FILE_POSITION}. */
    protected Region file;
    /** The file behind {@link #file}. */
    protected Path backing;
    /** Where the client reads into. */
    protected Region sink;

    @TempDir
    Path tmp;

    /** @return the provider under test */
    protected abstract Fabric fabric();

    /**
     * Whether a refused READ takes the connection down (the hardware's error state: verbs), rather than leaving it
     * usable as the software providers do.
     *
     * @return false by default
     */
    protected boolean remoteReadErrorsAreFatal() {
        return false;
    }

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
    protected Node open(String role, UnaryOperator<NodeOptions.Builder> tweak) throws RdmxException {
        String name = role + "-" + ProcessHandle.current().pid() + "-" + SEQ.incrementAndGet();
        Node n = fabric().open(tweak.apply(options(name)).build());
        nodes.add(n);
        return n;
    }

    @BeforeEach
    void setUp() throws Exception {
        server = open("server", b -> b);
        client = open("client", b -> b);
        readable = server.register(LENGTH, Access.LOCAL_WRITE | Access.REMOTE_READ, "readable");
        fill(readable, 1);
        writable = server.register(LENGTH, Access.ALL, "writable");
        both = server.register(LENGTH, Access.ALL | Access.REMOTE_READ, "both");
        backing = tmp.resolve("map-output.data");
        byte[] content = new byte[FILE_LENGTH];
        new Random(2).nextBytes(content);
        Files.write(backing, content);
        file = server.registerFile(backing, FILE_POSITION, FILE_REGION_LENGTH, "file");
        sink = client.register(LENGTH, Access.LOCAL_WRITE);
        c2s = client.connect(server.address(), WAIT);
        s2c = server.accept(WAIT);
    }

    @AfterEach
    void tearDown() {
        for (Node n : nodes) {
            n.close();
        }
    }

    // ---------------------------------------------------------------- helpers

    private static void fill(Region r, long seed) {
        byte[] b = new byte[r.length()];
        new Random(seed).nextBytes(b);
        r.buffer().put(b);
    }

    /**
     * @param r a region
     * @param offset where
     * @param length how many
     * @return a copy of those bytes
     */
    protected static byte[] bytes(Region r, int offset, int length) {
        byte[] b = new byte[length];
        r.buffer().get(offset, b);
        return b;
    }

    /** The descriptor the client has of a node-wide region of the server, by the name it was registered under. */
    private RemoteRegion atClient(String name) {
        RemoteRegion rr = c2s.remoteRegion(name);
        assertNotNull(rr, "server region '" + name + "' not among " + c2s.remoteRegions());
        return rr;
    }

    private Completion read(Connection via, Node reader, Region into, int intoOffset, int length, RemoteRegion from,
                            long fromOffset, long wrId) throws Exception {
        assertEquals(Post.OK, via.post(WorkRequest.read(into, intoOffset, length, from, fromOffset).wrId(wrId)));
        Completion c = Completions.one(reader);
        assertEquals(wrId, c.wrId(), String.valueOf(c));
        assertEquals(Opcode.READ, c.opcode(), String.valueOf(c));
        return c;
    }

    private void assertRead(Completion c, int length) {
        assertEquals(Status.SUCCESS, c.status(), String.valueOf(c));
        assertEquals(length, c.byteLength(), String.valueOf(c));
    }

    /**
     * A refused READ: REMOTE_ACCESS_ERROR with a detail naming the values; then the connection is still usable (a
     * READ and a WRITE on it succeed) or, where refusals are fatal, down.
     */
    private void assertRefused(Completion c, String... mustContain) throws Exception {
        assertEquals(Status.REMOTE_ACCESS_ERROR, c.status(), String.valueOf(c));
        assertEquals(Opcode.READ, c.opcode(), String.valueOf(c));
        assertNotNull(c.detail(), String.valueOf(c));
        for (String s : mustContain) {
            assertTrue(c.detail().contains(s), "detail '" + c.detail() + "' should contain '" + s + "'");
        }
        assertTrue(c.error().getMessage().contains(server.name()), c.error().getMessage());
        if (remoteReadErrorsAreFatal()) {
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (c2s.isOpen() && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertFalse(c2s.isOpen(), "this provider declares a remote access error fatal to the connection");
            return;
        }
        assertTrue(c2s.isOpen(), "a refused READ leaves the connection up: " + c2s.closeCause());
        assertStillUsable();
    }

    /** A READ and a WRITE on the client's connection succeed, and the data is right. */
    private void assertStillUsable() throws Exception {
        assertRead(read(c2s, client, sink, 0, 256, atClient("readable"), 512, 77), 256);
        assertArrayEquals(bytes(readable, 512, 256), bytes(sink, 0, 256));
        Region src = client.register(64, Access.ALL);
        fill(src, 78);
        assertEquals(Post.OK, c2s.post(WorkRequest.write(src, 0, 64, atClient("writable"), 64).wrId(78)));
        Completion w = Completions.one(client);
        assertEquals(78, w.wrId());
        assertTrue(w.ok(), String.valueOf(w));
        assertArrayEquals(bytes(src, 0, 64), bytes(writable, 64, 64));
        assertTrue(s2c.isOpen(), "the server's side is up: " + s2c.closeCause());
    }

    // ---------------------------------------------------------------- reads that succeed

    @Test
    void aNodeWideReadableRegionIsListedAtSetupAndRead() throws Exception {
        RemoteRegion rr = atClient("readable");
        assertEquals(LENGTH, rr.length());
        Completion c = read(c2s, client, sink, 100, 4096, rr, 777, 1);
        assertRead(c, 4096);
        assertArrayEquals(bytes(readable, 777, 4096), bytes(sink, 100, 4096));
        assertEquals(0, sink.buffer().get(99), "nothing before the target range");
        assertEquals(0, sink.buffer().get(100 + 4096), "nothing after the target range");
        // a region registered after the connection is read by its descriptor, passed along by the application
        Region late = server.register(4096, Access.LOCAL_WRITE | Access.REMOTE_READ);
        fill(late, 3);
        assertRead(read(c2s, client, sink, 0, 4096, late.descriptor(s2c), 0, 2), 4096);
        assertArrayEquals(bytes(late, 0, 4096), bytes(sink, 0, 4096));
    }

    @Test
    void aReadOfTheWholeRegionAndOfItsLastByteSucceed() throws Exception {
        assertRead(read(c2s, client, sink, 0, LENGTH, atClient("readable"), 0, 1), LENGTH);
        assertArrayEquals(bytes(readable, 0, LENGTH), bytes(sink, 0, LENGTH));
        sink.buffer().put(0, (byte) ~readable.buffer().get(LENGTH - 1));
        assertRead(read(c2s, client, sink, 0, 1, atClient("readable"), LENGTH - 1, 2), 1);
        assertEquals(readable.buffer().get(LENGTH - 1), sink.buffer().get(0));
    }

    @Test
    void aReadAfterAWriteOnTheSameConnectionSeesTheWrite() throws Exception {
        Region src = client.register(8192, Access.ALL);
        RemoteRegion dst = atClient("both");
        for (int round = 0; round < 20; round++) {
            fill(src, 100 + round);
            // posted back to back: the READ must not overtake the WRITE, whatever the provider
            assertEquals(Post.OK, c2s.post(WorkRequest.write(src, 0, 8192, dst, 1024).wrId(2L * round)));
            assertEquals(Post.OK, c2s.post(WorkRequest.read(sink, 0, 8192, dst, 1024).wrId(2L * round + 1)));
            List<Completion> cs = Completions.take(client, 2, WAIT);
            assertEquals(List.of(2L * round, 2L * round + 1), cs.stream().map(Completion::wrId).toList());
            assertTrue(cs.get(0).ok() && cs.get(1).ok(), String.valueOf(cs));
            assertArrayEquals(bytes(src, 0, 8192), bytes(sink, 0, 8192), "round " + round);
        }
    }

    @Test
    void manyReadsOutstandingCompleteEachWithItsIdInPostingOrder() throws Exception {
        Region src = client.register(4096, Access.ALL);
        fill(src, 5);
        RemoteRegion from = atClient("readable");
        int n = Math.min(600, client.options().sendQueueDepth());
        for (int i = 0; i < n; i++) {
            // a WRITE now and then: READs and WRITEs share the send queue and its order
            WorkRequest wr = i % 7 == 6 ? WorkRequest.write(src, 0, 64, atClient("writable"), i)
                : WorkRequest.read(sink, i * 100, 100, from, (i * 31L) % (LENGTH - 100));
            assertEquals(Post.OK, c2s.post(wr.wrId(1000 + i)), "post " + i);
        }
        List<Completion> cs = Completions.take(client, n, WAIT);
        for (int i = 0; i < n; i++) {
            Completion c = cs.get(i);
            assertEquals(1000 + i, c.wrId(), "completion order");
            assertTrue(c.ok(), String.valueOf(c));
            assertEquals(i % 7 == 6 ? Opcode.WRITE : Opcode.READ, c.opcode());
            if (i % 7 != 6) {
                assertArrayEquals(bytes(readable, (int) ((i * 31L) % (LENGTH - 100)), 100), bytes(sink, i * 100, 100),
                    "READ " + i);
            }
        }
    }

    @Test
    void aReadOfMaxTransferSizeArrivesIntact() throws Exception {
        int max = 1 << 20;
        Node big = open("bigserver", b -> b.maxTransferSize(max));
        Node reader = open("bigclient", b -> b.maxTransferSize(max));
        Region src = big.register(max + 4096, Access.LOCAL_WRITE | Access.REMOTE_READ, "big");
        fill(src, 9);
        Region into = reader.register(max, Access.LOCAL_WRITE);
        Connection c = reader.connect(big.address(), WAIT);
        big.accept(WAIT);
        assertRead(read(c, reader, into, 0, max, c.remoteRegion("big"), 4096, 1), max);
        assertArrayEquals(bytes(src, 4096, max), bytes(into, 0, max));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> c.post(WorkRequest.read(reader.register(max + 1, Access.LOCAL_WRITE), 0, max + 1,
                c.remoteRegion("big"), 0)));
        assertTrue(e.getMessage().contains("maxTransferSize=" + max), e.getMessage());
        assertTrue(c.isOpen());
    }

    @Test
    void aReadIntoARegionWithoutLocalWriteIsMisuse() throws Exception {
        Region ro = client.register(64, Access.REMOTE_WRITE);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> c2s.post(WorkRequest.read(ro, 0, 8, atClient("readable"), 0)));
        assertTrue(e.getMessage().contains("LOCAL_WRITE"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> c2s.post(WorkRequest.read(sink, 0, 8, null, 0)));
        assertThrows(IllegalArgumentException.class,
            () -> c2s.post(WorkRequest.read(sink, 0, 8, atClient("readable"), -1)));
        assertTrue(c2s.isOpen());
        assertStillUsable();
    }

    // ---------------------------------------------------------------- refused reads

    @Test
    void aReadPastTheEndIsRefused() throws Exception {
        assertRefused(read(c2s, client, sink, 0, 4096, atClient("readable"), LENGTH - 100, 3),
            "offset=" + (LENGTH - 100), "length=4096");
    }

    @Test
    void aReadLongerThanTheRegionIsRefused() throws Exception {
        Region small = s2c.register(100, Access.LOCAL_WRITE | Access.REMOTE_READ);
        assertRefused(read(c2s, client, sink, 0, 101, small.descriptor(), 0, 4), "length=101");
    }

    @Test
    void aReadAtAnOverflowingOffsetIsRefused() throws Exception {
        // offset + length overflows a long: a bounds check written as "offset + length > length" lets it through
        long offset = Long.MAX_VALUE - 3;
        assertRefused(read(c2s, client, sink, 0, 8, atClient("readable"), offset, 5), "offset=" + offset);
    }

    @Test
    void aReadWithAnUnknownKeyIsRefused() throws Exception {
        RemoteRegion forged = new RemoteRegion(0, LENGTH, readable.remoteKey() ^ 0x1234);
        assertRefused(read(c2s, client, sink, 0, 64, forged, 0, 6),
            "rkey=0x" + Integer.toHexString(forged.remoteKey()));
    }

    @Test
    void aRegionWithoutRemoteReadIsNotReadableButWritable() throws Exception {
        RemoteRegion w = atClient("writable");
        assertRefused(read(c2s, client, sink, 0, 64, w, 0, 7), "rkey=0x" + Integer.toHexString(w.remoteKey()));
        // and a local-only region is neither
        Region local = server.register(4096, Access.LOCAL_WRITE);
        if (!remoteReadErrorsAreFatal()) {
            assertRefused(read(c2s, client, sink, 0, 64, local.descriptor(), 0, 8),
                "rkey=0x" + Integer.toHexString(local.remoteKey()));
        }
    }

    @Test
    void aRegionGrantedToThisConnectionIsReadableAndNeverListed() throws Exception {
        Region granted = s2c.register(4096, Access.LOCAL_WRITE | Access.REMOTE_READ);
        fill(granted, 11);
        assertTrue(c2s.remoteRegions().stream().noneMatch(r -> r.remoteKey() == granted.remoteKey()),
            "a grant is not in the setup message");
        assertEquals(granted.descriptor(), granted.descriptor(s2c), "a grant has one key: its grantee's");
        assertRead(read(c2s, client, sink, 0, 4096, granted.descriptor(), 0, 9), 4096);
        assertArrayEquals(bytes(granted, 0, 4096), bytes(sink, 0, 4096));
    }

    @Test
    void aRegionGrantedToAnotherConnectionIsNotReadable() throws Exception {
        assumeTrue(fabric().scopesRegions(), fabric().name() + " leaves key checks to the NIC and does not scope keys");
        Node victim = open("victim", b -> b);
        Connection victimToServer = victim.connect(server.address(), WAIT);
        Connection serverToVictim = server.accept(WAIT);
        assertEquals(victim.name(), serverToVictim.peerName());
        Region victims = serverToVictim.register(4096, Access.LOCAL_WRITE | Access.REMOTE_READ);
        fill(victims, 12);
        // the grantee reads it
        Region mine = victim.register(4096, Access.LOCAL_WRITE);
        assertRead(read(victimToServer, victim, mine, 0, 4096, victims.descriptor(), 0, 10), 4096);
        assertArrayEquals(bytes(victims, 0, 4096), bytes(mine, 0, 4096));
        // the client names its key, with the right length and offset: refused as an unknown key, nothing read
        byte[] before = bytes(sink, 0, 4096);
        Completion c = read(c2s, client, sink, 0, 4096, victims.descriptor(), 0, 11);
        assertArrayEquals(before, bytes(sink, 0, 4096), "nothing of the other peer's region was read");
        assertRefused(c, "rkey=0x" + Integer.toHexString(victims.remoteKey()));
        assertTrue(serverToVictim.isOpen() && victimToServer.isOpen(), "the peer whose region was named is unaffected");
        // and a file granted to the victim is not readable by the client either
        Region victimsFile = serverToVictim.registerFile(backing, 0, 4096);
        if (!remoteReadErrorsAreFatal()) {
            assertRefused(read(c2s, client, sink, 0, 4096, victimsFile.descriptor(), 0, 12),
                "rkey=0x" + Integer.toHexString(victimsFile.remoteKey()));
        }
        assertRead(read(victimToServer, victim, mine, 0, 4096, victimsFile.descriptor(), 0, 13), 4096);
        assertArrayEquals(Arrays.copyOf(Files.readAllBytes(backing), 4096), bytes(mine, 0, 4096));
    }

    @Test
    void aReadOfARegionItsOwnerReleasedFailsCleanly() throws Exception {
        Region gone = s2c.register(4096, Access.LOCAL_WRITE | Access.REMOTE_READ);
        fill(gone, 13);
        RemoteRegion d = gone.descriptor();
        // read once while it lives (a provider that maps it keeps no stale mapping alive past the release)
        assertRead(read(c2s, client, sink, 0, 4096, d, 0, 14), 4096);
        assertTrue(gone.release());
        assertRefused(read(c2s, client, sink, 0, 4096, d, 0, 15), "rkey=0x" + Integer.toHexString(d.remoteKey()));
    }

    @Test
    void aReleasedNodeWideRegionIsRefusedToo() throws Exception {
        RemoteRegion d = atClient("readable");
        assertTrue(readable.release());
        assertEquals(Post.OK, c2s.post(WorkRequest.read(sink, 0, 64, d, 0).wrId(16)));
        Completion c = Completions.one(client);
        assertEquals(Status.REMOTE_ACCESS_ERROR, c.status(), String.valueOf(c));
        assertTrue(c.detail().contains("rkey=0x" + Integer.toHexString(d.remoteKey())), c.detail());
        if (!remoteReadErrorsAreFatal()) {
            assertTrue(c2s.isOpen(), String.valueOf(c2s.closeCause()));
        }
    }

    // ---------------------------------------------------------------- file-backed regions

    @Test
    void aFileRegionReadsTheFilesBytesAtItsPosition() throws Exception {
        assertEquals(Access.REMOTE_READ, file.access());
        assertEquals(FILE_REGION_LENGTH, file.length());
        RemoteRegion rr = atClient("file");
        assertEquals(FILE_REGION_LENGTH, rr.length());
        byte[] content = Files.readAllBytes(backing);
        assertRead(read(c2s, client, sink, 8, FILE_REGION_LENGTH, rr, 0, 20), FILE_REGION_LENGTH);
        assertArrayEquals(Arrays.copyOfRange(content, FILE_POSITION, FILE_POSITION + FILE_REGION_LENGTH),
            bytes(sink, 8, FILE_REGION_LENGTH));
        assertRead(read(c2s, client, sink, 0, 10, rr, FILE_REGION_LENGTH - 10, 21), 10);
        assertArrayEquals(Arrays.copyOfRange(content, FILE_POSITION + FILE_REGION_LENGTH - 10,
            FILE_POSITION + FILE_REGION_LENGTH), bytes(sink, 0, 10));
        if (!remoteReadErrorsAreFatal()) {
            assertRefused(read(c2s, client, sink, 0, 11, rr, FILE_REGION_LENGTH - 10, 22), "length=11");
        }
    }

    @Test
    void aFileRegionGrantedToThisConnectionIsReadable() throws Exception {
        Region granted = s2c.registerFile(backing, 0, FILE_LENGTH);
        assertTrue(c2s.remoteRegions().stream().noneMatch(r -> r.remoteKey() == granted.remoteKey()),
            "a grant is not in the setup message");
        assertRead(read(c2s, client, sink, 0, FILE_LENGTH, granted.descriptor(), 0, 23), FILE_LENGTH);
        assertArrayEquals(Files.readAllBytes(backing), bytes(sink, 0, FILE_LENGTH));
    }

    @Test
    void aFileRegionsBufferIsReadOnlyAndItIsNotWritable() throws Exception {
        ByteBuffer b = file.buffer();
        assertTrue(b.isReadOnly());
        assertThrows(ReadOnlyBufferException.class, () -> b.put(0, (byte) 1));
        byte[] content = Files.readAllBytes(backing);
        Region src = client.register(64, Access.ALL);
        fill(src, 24);
        assertEquals(Post.OK, c2s.post(WorkRequest.write(src, 0, 64, atClient("file"), 0).wrId(24)));
        Completion c = Completions.one(client);
        assertEquals(Status.REMOTE_ACCESS_ERROR, c.status(), String.valueOf(c));
        assertTrue(c.detail().contains("rkey=0x" + Integer.toHexString(file.remoteKey())), c.detail());
        assertArrayEquals(content, Files.readAllBytes(backing), "the file is untouched");
        // nor can it be the local target of a READ or a RECV
        assertThrows(IllegalArgumentException.class, () -> s2c.post(WorkRequest.recv(file, 0, 64)));
    }

    @Test
    void releasingAFileRegionLeavesTheFile() throws Exception {
        byte[] content = Files.readAllBytes(backing);
        Region again = server.registerFile(backing, 0, 100, "");
        assertTrue(again.release());
        assertTrue(file.release());
        assertTrue(Files.exists(backing));
        assertArrayEquals(content, Files.readAllBytes(backing));
    }

    @Test
    void aFileRangeOutsideTheFileIsRefusedNamingTheValues() throws Exception {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> server.registerFile(backing, FILE_LENGTH - 10, 11, ""));
        for (String s : List.of(backing.toString(), "position=" + (FILE_LENGTH - 10), "length=11",
            "size=" + FILE_LENGTH)) {
            assertTrue(e.getMessage().contains(s), "'" + e.getMessage() + "' should name " + s);
        }
        e = assertThrows(IllegalArgumentException.class, () -> server.registerFile(backing, -1, 10, ""));
        assertTrue(e.getMessage().contains("position=-1"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> s2c.registerFile(backing, 0, 0));
        assertTrue(e.getMessage().contains("length=0"), e.getMessage());
        RdmxException absent = assertThrows(RdmxException.class,
            () -> server.registerFile(tmp.resolve("absent"), 0, 10, ""));
        assertTrue(absent.getMessage().contains(tmp.resolve("absent").toString()), absent.getMessage());
        // a refused registration leaves its name free
        assertEquals(100, server.registerFile(backing, 0, 100, "free").length());
    }
}
