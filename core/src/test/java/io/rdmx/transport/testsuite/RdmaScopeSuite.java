package io.rdmx.transport.testsuite;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Access;
import io.rdmx.transport.Completion;
import io.rdmx.transport.Connection;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Post;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Region;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.Status;
import io.rdmx.transport.WorkRequest;
import io.rdmx.transport.Fabric;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Keys confined in hardware by an RDMA provider (verbs, disni; on Soft-RoCE): every queue pair has a protection domain
 * of its own, so the NIC honours a key only on the connection it was told to. Before, every connection shared the
 * node's domain and any peer could WRITE with a key told to another (the conformance suite's cross-peer case covers
 * granted regions; this covers node-wide regions, whose key differs per connection, and the registrations' life).
 * A provider's test names its fabric, what it needs to run, and how many protection domains a region is in.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
public abstract class RdmaScopeSuite {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private final List<Node> nodes = new ArrayList<>();

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

    private Node open(String name) throws RdmxException {
        Node n = fabric().open(NodeOptions.builder().name(name + "-" + ProcessHandle.current().pid())
            .build());
        nodes.add(n);
        return n;
    }

    @AfterEach
    void close() {
        nodes.forEach(Node::close);
    }

    private static Region filled(Node n, int length, int seed) throws RdmxException {
        Region r = n.register(length, Access.LOCAL_WRITE);
        for (int i = 0; i < length; i++) {
            r.buffer().put(i, (byte) (seed + i));
        }
        return r;
    }

    private static byte[] bytes(Region r, int length) {
        byte[] b = new byte[length];
        r.buffer().get(0, b);
        return b;
    }

    @Test
    void aNodeWideRegionsKeyToldToOnePeerIsRefusedOnAnotherPeersConnection() throws Exception {
        Node server = open("scope-server");
        Node a = open("scope-a");
        Node b = open("scope-b");
        Region inbox = server.register(4096, Access.ALL, "inbox");
        Connection ca = a.connect(server.address(), WAIT);
        Connection sa = server.accept(WAIT);
        Connection cb = b.connect(server.address(), WAIT);
        server.accept(WAIT);
        RemoteRegion forA = ca.remoteRegion("inbox");
        RemoteRegion forB = cb.remoteRegion("inbox");
        assertNotEquals(forA.remoteKey(), forB.remoteKey(), "a key per connection");
        assertEquals(forA, inbox.descriptor(sa), "what a peer is told is what descriptor(connection) says");

        Region fromB = filled(b, 64, 7);
        assertEquals(Post.OK, cb.post(WorkRequest.write(fromB, 0, 64, forA, 0).wrId(1)));
        Completion refused = Completions.one(b);
        assertEquals(Status.REMOTE_ACCESS_ERROR, refused.status(), refused.toString());
        assertArrayEquals(new byte[64], bytes(inbox, 64), "the NIC wrote nothing");

        Region fromA = filled(a, 64, 9);
        assertEquals(Post.OK, ca.post(WorkRequest.write(fromA, 0, 64, forA, 0).wrId(2)));
        assertTrue(Completions.one(a).ok());
        assertArrayEquals(bytes(fromA, 64), bytes(inbox, 64), "the peer it was told to reaches it");
        assertTrue(sa.isOpen(), "the other peer's failure stayed with that peer");
    }

    @Test
    void aRegionsRegistrationsInConnectionsDomainsGoWithTheConnectionAndWithTheRegion() throws Exception {
        Node server = open("life-server");
        Node a = open("life-a");
        Node b = open("life-b");
        Region target = server.register(4096, Access.ALL);
        a.connect(server.address(), WAIT);
        Connection sa = server.accept(WAIT);
        b.connect(server.address(), WAIT);
        Connection sb = server.accept(WAIT);
        target.descriptor(sa);
        target.descriptor(sb);
        assertEquals(2, domains(target), "one registration in each connection's domain (setup made them)");

        Region granted = sa.register(4096, Access.ALL);
        assertEquals(1, domains(granted), "a grant is registered in its grantee's domain only");
        assertThrows(IllegalArgumentException.class, () -> granted.descriptor(sb));

        sa.close();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (domains(target) > 1 && System.nanoTime() < deadline) {
            Thread.onSpinWait(); // the provider's thread destroys the queue pair, its registrations, then its domain
        }
        assertEquals(1, domains(target), "the closed connection's registration went with its domain");
        assertEquals(0, domains(granted), "and so did the grant's");
        assertTrue(granted.release());

        assertTrue(target.release());
        assertEquals(0, domains(target), "a released region is registered nowhere");
        assertTrue(sb.isOpen());
    }
}
