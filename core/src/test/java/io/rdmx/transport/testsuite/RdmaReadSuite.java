package io.rdmx.transport.testsuite;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Access;
import io.rdmx.transport.Completion;
import io.rdmx.transport.Connection;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.Post;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Region;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.Status;
import io.rdmx.transport.WorkRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * One-sided READ on an RDMA provider (verbs: {@code IBV_WR_RDMA_READ} through FFM; disni: through DiSNI), on
 * Soft-RoCE in {@code scripts/softroce-test.sh}; a provider's test names its fabric, what it needs to run (skipped
 * with the reason elsewhere), and how many protection domains a region is in. The provider-neutral cases are the
 * READ conformance suite's; these add what the hardware does.
 *
 * <p>What a refused READ does, as the hardware does it: the requester's NIC completes it with
 * {@code IBV_WC_REM_ACCESS_ERR} (REMOTE_ACCESS_ERROR here), the responder NAKs it and, as RC requires, both queue
 * pairs go to the error state (rxe does the same). So the failed READ's connection is closed afterwards, with a
 * cause that names the peer, at both ends; the serving node and its other connections carry on. That is what these
 * tests assert, as the conformance suite does for a refused WRITE.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class RdmaReadSuite {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private final List<Node> nodes = new ArrayList<>();
    private int seq;

    @TempDir
    Path dir;

    /** @return the provider under test */
    protected abstract Fabric fabric();

    /** Skips the test, saying why, where the provider cannot run (no device, no native library). */
    protected abstract void assumeUsable();

    /**
     * @param r a region of a node of {@link #fabric()}
     * @return how many protection domains its memory is registered in
     */
    protected abstract int domains(Region r);

    @BeforeEach
    void usable() {
        assumeUsable();
    }

    @AfterEach
    void close() {
        nodes.forEach(Node::close);
    }

    private Node open(String role) throws RdmxException {
        Node n = fabric().open(NodeOptions.builder().name(role + "-" + ProcessHandle.current().pid() + "-"
            + seq++).build());
        nodes.add(n);
        return n;
    }

    private static byte[] pattern(int length, long seed) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static Region filled(Node n, int length, int access, long seed) throws RdmxException {
        Region r = n.register(length, access);
        r.buffer().put(0, pattern(length, seed));
        return r;
    }

    private static byte[] bytes(Region r, int offset, int length) {
        byte[] b = new byte[length];
        r.buffer().get(offset, b);
        return b;
    }

    /** Reads into {@code into} and returns the completion. */
    private static Completion read(Node n, Connection c, Region into, int intoOffset, int length, RemoteRegion src,
                                   long srcOffset, long wrId) throws Exception {
        assertEquals(Post.OK, c.post(WorkRequest.read(into, intoOffset, length, src, srcOffset).wrId(wrId)));
        Completion k = Completions.take(n, 1, WAIT).get(0);
        assertEquals(wrId, k.wrId(), k.toString());
        assertEquals(Opcode.READ, k.opcode(), k.toString());
        return k;
    }

    /**
     * The refused READ completed with REMOTE_ACCESS_ERROR naming the key and the peer; its connection then reads
     * closed at the reader, with a cause naming the peer (the queue pair is in the error state), and a post on it
     * throws naming the peer.
     */
    private static void assertRefused(Completion k, Connection c, RemoteRegion src, String peer) throws Exception {
        assertEquals(Status.REMOTE_ACCESS_ERROR, k.status(), k.toString());
        assertTrue(k.detail().contains("rkey=0x" + Integer.toHexString(src.remoteKey())), k.detail());
        assertTrue(k.detail().contains("readable"), k.detail());
        assertTrue(k.error().getMessage().contains(peer), k.error().getMessage());
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (c.isOpen() && System.nanoTime() < deadline) {
            Thread.onSpinWait(); // the completion's handling fails the connection right after emitting it
        }
        assertFalse(c.isOpen(), "a refused READ leaves its queue pair in the error state: the connection is closed");
        assertTrue(String.valueOf(c.closeCause().getMessage()).contains(peer), String.valueOf(c.closeCause()));
        Region mine = c.node().register(8, Access.ALL);
        ConnectionClosedException e = assertThrows(ConnectionClosedException.class,
            () -> c.post(WorkRequest.read(mine, 0, 8, src, 0)));
        assertTrue(e.getMessage().contains(peer), e.getMessage());
    }

    /** A third node connects to {@code server} and READs {@code r} (granted or node-wide) through its own key. */
    private void assertAnotherPeerStillReads(Node server, Region r, String name) throws Exception {
        Node other = open("other");
        Connection c = other.connect(server.address(), WAIT);
        Connection s = server.accept(WAIT);
        RemoteRegion src = name != null ? c.remoteRegion(name) : r.descriptor(s);
        Region into = other.register(64, Access.LOCAL_WRITE);
        assertTrue(read(other, c, into, 0, 64, src, 0, 77).ok());
        assertArrayEquals(bytes(r, 0, 64), bytes(into, 0, 64));
    }

    @Test
    void aReadCopiesTheBytesOfANodeWideAndOfAGrantedRegion() throws Exception {
        Node server = open("server");
        Node client = open("client");
        Region exported = filled(server, 1 << 20, Access.REMOTE_READ, 1);
        Region named = server.register(4096, Access.LOCAL_WRITE | Access.REMOTE_READ, "named");
        named.buffer().put(0, pattern(4096, 2));
        Connection c2s = client.connect(server.address(), WAIT);
        Connection s2c = server.accept(WAIT);
        assertEquals(named.descriptor(s2c), c2s.remoteRegion("named"), "a readable region is exported at setup");
        RemoteRegion whole = exported.descriptor(s2c);
        assertTrue(c2s.remoteRegions().contains(whole), c2s.remoteRegions().toString());

        Region into = client.register(1 << 20, Access.LOCAL_WRITE);
        Completion k = read(client, c2s, into, 0, 1 << 20, whole, 0, 1);
        assertTrue(k.ok(), k.toString());
        assertEquals(1 << 20, k.byteLength());
        assertArrayEquals(bytes(exported, 0, 1 << 20), bytes(into, 0, 1 << 20), "1 MiB read intact");

        // a small READ (no inline: its local buffer is the target), at offsets, into an offset
        assertTrue(read(client, c2s, into, 100, 40, c2s.remoteRegion("named"), 333, 2).ok());
        assertArrayEquals(bytes(named, 333, 40), bytes(into, 100, 40));

        Region granted = s2c.register(8192, Access.LOCAL_WRITE | Access.REMOTE_READ);
        granted.buffer().put(0, pattern(8192, 3));
        assertFalse(c2s.remoteRegions().contains(granted.descriptor(s2c)), "a grant is never listed");
        assertTrue(read(client, c2s, into, 0, 8192, granted.descriptor(s2c), 0, 3).ok());
        assertArrayEquals(bytes(granted, 0, 8192), bytes(into, 0, 8192));

        // many READs in flight at once (the queue pair's READ depth is above 1), each checked
        int n = 32;
        int len = 1 << 15;
        for (int i = 0; i < n; i++) {
            assertEquals(Post.OK, c2s.post(WorkRequest.read(into, i * len, len, whole, (long) (n - 1 - i) * len)
                .wrId(100 + i)));
        }
        for (Completion d : Completions.take(client, n, WAIT)) {
            assertTrue(d.ok(), d.toString());
            assertEquals(Opcode.READ, d.opcode());
        }
        for (int i = 0; i < n; i++) {
            assertArrayEquals(bytes(exported, (n - 1 - i) * len, len), bytes(into, i * len, len), "READ " + i);
        }
        assertTrue(c2s.isOpen() && s2c.isOpen());
    }

    @Test
    void aReadPastTheRegionsEndIsRefusedAndTheServerServesOthers() throws Exception {
        Node server = open("server");
        Node client = open("client");
        Region src = filled(server, 4096, Access.REMOTE_READ, 4);
        Connection c2s = client.connect(server.address(), WAIT);
        Connection s2c = server.accept(WAIT);
        Region into = client.register(8192, Access.LOCAL_WRITE);
        RemoteRegion d = src.descriptor(s2c);
        assertRefused(read(client, c2s, into, 0, 64, d, 4096 - 32, 1), c2s, d, server.name());
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (s2c.isOpen() && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertFalse(s2c.isOpen(), "the responder's queue pair went to the error state too");
        assertTrue(String.valueOf(s2c.closeCause().getMessage()).contains(client.name()),
            String.valueOf(s2c.closeCause()));
        assertAnotherPeerStillReads(server, src, null);
    }

    @Test
    void aReadWithAWrongKeyIsRefused() throws Exception {
        Node server = open("server");
        Node client = open("client");
        Region src = filled(server, 4096, Access.REMOTE_READ, 5);
        Connection c2s = client.connect(server.address(), WAIT);
        Connection s2c = server.accept(WAIT);
        RemoteRegion good = src.descriptor(s2c);
        RemoteRegion forged = new RemoteRegion(good.address(), good.length(), good.remoteKey() ^ 0x1234);
        Region into = client.register(64, Access.LOCAL_WRITE);
        assertRefused(read(client, c2s, into, 0, 64, forged, 0, 1), c2s, forged, server.name());
        assertAnotherPeerStillReads(server, src, null);
    }

    @Test
    void aRegionThatIsOnlyRemotelyWritableIsNotReadable() throws Exception {
        Node server = open("server");
        Node client = open("client");
        Region target = filled(server, 4096, Access.ALL, 6);
        Connection c2s = client.connect(server.address(), WAIT);
        Connection s2c = server.accept(WAIT);
        RemoteRegion d = target.descriptor(s2c);
        Region from = filled(client, 64, Access.LOCAL_WRITE, 7);
        assertEquals(Post.OK, c2s.post(WorkRequest.write(from, 0, 64, d, 0).wrId(1)));
        assertTrue(Completions.one(client).ok(), "WRITE is granted");
        Region into = client.register(64, Access.LOCAL_WRITE);
        assertRefused(read(client, c2s, into, 0, 64, d, 0, 2), c2s, d, server.name());
    }

    @Test
    void aRegionGrantedToOnePeerIsNotReadableThroughAnother() throws Exception {
        Node server = open("server");
        Node a = open("a");
        Node b = open("b");
        Region exported = filled(server, 4096, Access.REMOTE_READ, 8);
        Connection ca = a.connect(server.address(), WAIT);
        Connection sa = server.accept(WAIT);
        Connection cb = b.connect(server.address(), WAIT);
        server.accept(WAIT);
        Region granted = sa.register(4096, Access.REMOTE_READ);
        granted.buffer().put(0, pattern(4096, 9));
        RemoteRegion forA = granted.descriptor(sa);

        Region intoB = b.register(64, Access.LOCAL_WRITE);
        assertRefused(read(b, cb, intoB, 0, 64, forA, 0, 1), cb, forA, server.name());

        Region intoA = a.register(64, Access.LOCAL_WRITE);
        assertTrue(read(a, ca, intoA, 0, 64, forA, 0, 2).ok(), "the grantee reads it");
        assertArrayEquals(bytes(granted, 0, 64), bytes(intoA, 0, 64));

        // a node-wide region's key told to A is refused on a new connection of B's node too (a domain per QP)
        Node b2 = open("b2");
        Connection cb2 = b2.connect(server.address(), WAIT);
        server.accept(WAIT);
        RemoteRegion exportedForA = exported.descriptor(sa);
        assertNotEquals(exportedForA.remoteKey(), cb2.remoteRegions().get(0).remoteKey(), "a key per connection");
        Region intoB2 = b2.register(64, Access.LOCAL_WRITE);
        assertRefused(read(b2, cb2, intoB2, 0, 64, exportedForA, 0, 3), cb2, exportedForA, server.name());
        assertTrue(sa.isOpen() && ca.isOpen(), "other peers' failures stayed with them");
    }

    /**
     * A READ posted right after WRITEs on the same connection, without waiting for their completions, returns what
     * they wrote: RC executes a queue pair's requests in order at the responder (the verbs provider's Endpoint says
     * why no fence is needed). Rounds of unsignaled WRITEs of fresh patterns, each followed by READs of the same bytes.
     */
    @Test
    void aReadAfterAWriteOnTheSameConnectionSeesTheWrite() throws Exception {
        Node server = open("server");
        Node client = open("client");
        int len = 1 << 14;
        Region target = server.register(len, Access.ALL | Access.REMOTE_READ, "rw");
        Connection c2s = client.connect(server.address(), WAIT);
        server.accept(WAIT);
        RemoteRegion d = c2s.remoteRegion("rw");
        Region src = client.register(len, Access.LOCAL_WRITE);
        Region into = client.register(len, Access.LOCAL_WRITE);
        for (int round = 0; round < 8; round++) {
            byte[] p = pattern(len, 100 + round);
            src.buffer().put(0, p);
            for (int part = 0; part < 4; part++) { // four WRITEs, unsignaled, then the READ of all of them
                assertEquals(Post.OK, c2s.post(WorkRequest.write(src, part * (len / 4), len / 4, d,
                    part * (len / 4)).signaled(false)));
            }
            Completion k = read(client, c2s, into, 0, len, d, 0, round);
            assertTrue(k.ok(), k.toString());
            assertArrayEquals(p, bytes(into, 0, len), "round " + round + ": the READ saw the WRITEs before it");
            assertArrayEquals(p, bytes(target, 0, len));
        }
    }

    @Test
    void aReadOfAReleasedRegionIsRefused() throws Exception {
        Node server = open("server");
        Node client = open("client");
        Region gone = filled(server, 4096, Access.REMOTE_READ, 10);
        Region stays = filled(server, 4096, Access.REMOTE_READ, 11);
        Connection c2s = client.connect(server.address(), WAIT);
        Connection s2c = server.accept(WAIT);
        RemoteRegion d = gone.descriptor(s2c);
        Region into = client.register(64, Access.LOCAL_WRITE);
        assertTrue(read(client, c2s, into, 0, 64, d, 0, 1).ok(), "readable while registered");
        assertTrue(gone.release());
        assertRefused(read(client, c2s, into, 0, 64, d, 0, 2), c2s, d, server.name());
        assertAnotherPeerStillReads(server, stays, null);
    }

    /**
     * A range of a file, mapped read-only and registered with REMOTE_READ alone: read by a peer (exported at setup
     * under its name, and granted to one connection), at an offset in the file that is not page-aligned; its buffer
     * is read-only; it may be a WRITE's source on its node (local read access); its release leaves the file and
     * its key dies.
     */
    @Test
    void aFileBackedRegionIsReadFromTheMappedFile() throws Exception {
        Path file = dir.resolve("map-output.data");
        byte[] content = pattern(3 * 4096 + 777, 12);
        Files.write(file, content);
        Node server = open("server");
        Node client = open("client");
        int pos = 4096 + 100;
        int len = 2 * 4096;
        Region fr = server.registerFile(file, pos, len, "file");
        assertTrue(fr.buffer().isReadOnly());
        assertEquals(Access.REMOTE_READ, fr.access());
        assertEquals(len, fr.length());
        IllegalArgumentException outside = assertThrows(IllegalArgumentException.class,
            () -> server.registerFile(file, content.length - 10, 11, ""));
        assertTrue(outside.getMessage().contains(file.toString()), outside.getMessage());

        Connection c2s = client.connect(server.address(), WAIT);
        Connection s2c = server.accept(WAIT);
        RemoteRegion d = c2s.remoteRegion("file");
        Region into = client.register(len, Access.LOCAL_WRITE);
        assertTrue(read(client, c2s, into, 0, len, d, 0, 1).ok());
        byte[] want = new byte[len];
        System.arraycopy(content, pos, want, 0, len);
        assertArrayEquals(want, bytes(into, 0, len), "the file's bytes at position " + pos);

        Region grantedFile = s2c.registerFile(file, 0, 4096);
        assertEquals(1, domains(grantedFile), "registered in the grantee's domain alone");
        assertTrue(read(client, c2s, into, 0, 4096, grantedFile.descriptor(s2c), 0, 2).ok());
        byte[] head = new byte[4096];
        System.arraycopy(content, 0, head, 0, 4096);
        assertArrayEquals(head, bytes(into, 0, 4096));

        // the server WRITEs from the file region into the client's (the region's local read access)
        Region inbox = client.register(4096, Access.ALL);
        RemoteRegion inboxD = inbox.descriptor(c2s);
        assertEquals(Post.OK, s2c.post(WorkRequest.write(fr, 0, 4096, inboxD, 0).wrId(3)));
        assertTrue(Completions.one(server).ok());
        assertArrayEquals(bytes(fr, 0, 4096), bytes(inbox, 0, 4096));

        assertTrue(grantedFile.release());
        assertTrue(fr.release());
        assertArrayEquals(content, Files.readAllBytes(file), "the file is left alone");
        assertRefused(read(client, c2s, into, 0, 64, d, 0, 4), c2s, d, server.name());
    }
}
