package io.rdmx.transport.testsuite;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Access;
import io.rdmx.transport.Completion;
import io.rdmx.transport.Connection;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Post;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Region;
import io.rdmx.transport.WorkRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The cluster secret on an RDMA provider (verbs, disni; on Soft-RoCE): the setup messages' challenge-response over
 * rdma_cm. An rdma_cm peer without the secret (or with another) is refused and is never told a remote key: before,
 * any rdma_cm peer got ACCEPT with every exported region's key and the keep-alive target's. A provider's test names
 * its fabric and what it needs to run.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
public abstract class RdmaAuthSuite {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private final List<Node> nodes = new ArrayList<>();

    /** @return the provider under test */
    protected abstract Fabric fabric();

    /** Skips the test, saying why, where the provider cannot run (no device, no native library). */
    protected abstract void assumeUsable();

    @BeforeEach
    void usable() {
        assumeUsable();
    }

    private Node open(String name, UnaryOperator<NodeOptions.Builder> tweak) throws RdmxException {
        Node n = fabric().open(tweak.apply(NodeOptions.builder().name(name + "-"
            + ProcessHandle.current().pid())).build());
        nodes.add(n);
        return n;
    }

    @AfterEach
    void close() {
        nodes.forEach(Node::close);
    }

    @Test
    void peersWithTheSecretConnectAndTheirAddressesAreProven() throws Exception {
        Node a = open("auth-a", b -> b.secret("s3cret"));
        Node b = open("auth-b", x -> x.secret("s3cret"));
        Region target = b.register(4096, Access.ALL, "inbox");
        Connection ab = a.connect(b.address(), WAIT);
        Connection ba = b.accept(WAIT);
        assertEquals(b.name(), ab.peerName());
        assertEquals(target.descriptor(ba), ab.remoteRegion("inbox"), "regions come after the proofs");
        Region src = a.register(4096, Access.LOCAL_WRITE);
        for (int i = 0; i < 64; i++) {
            src.buffer().put(i, (byte) (i + 1));
        }
        Region rbuf = b.register(64, Access.LOCAL_WRITE);
        assertEquals(Post.OK, ba.post(WorkRequest.recv(rbuf, 0, 64).wrId(7)));
        assertEquals(Post.OK, ab.post(WorkRequest.write(src, 0, 64, ab.remoteRegion("inbox"), 0).wrId(1)
            .signaled(false)));
        assertEquals(Post.OK, ab.post(WorkRequest.send(src, 0, 8).wrId(2)));
        List<Completion> got = new ArrayList<>();
        assertEquals(1, b.completionQueue().await(got::add, 1, 30, TimeUnit.SECONDS));
        assertEquals(7, got.get(0).wrId());
        byte[] want = new byte[64];
        byte[] have = new byte[64];
        src.buffer().get(0, want);
        target.buffer().get(0, have);
        assertArrayEquals(want, have);
        assertSame(ba, b.connect(a.address(), WAIT), "the accepted peer proved its address: one connection");
    }

    @Test
    void aPeerWithoutTheSecretIsRefusedAndNoConnectionIsMade() throws Exception {
        Node server = open("auth-srv", b -> b.secret("s3cret"));
        server.register(4096, Access.ALL, "inbox");
        Node stranger = open("auth-none", b -> b.secret(null));
        RdmxException e = assertThrows(RdmxException.class, () -> stranger.connect(server.address(), WAIT));
        assertTrue(e.getMessage().contains("cluster secret mismatch"), e.getMessage());
        assertEquals(0, server.connections().size(), "no connection for a peer without the secret");
        Node liar = open("auth-liar", b -> b.secret("guess"));
        e = assertThrows(RdmxException.class, () -> liar.connect(server.address(), WAIT));
        assertTrue(e.getMessage().contains("failed authentication"), e.getMessage());
        assertEquals(0, server.connections().size());
        // a server without a secret refuses a peer that has one: the mismatch is named, not a hang
        Node open = open("auth-open", b -> b.secret(null));
        Node friend = open("auth-friend", b -> b.secret("s3cret"));
        e = assertThrows(RdmxException.class, () -> friend.connect(open.address(), WAIT));
        assertTrue(e.getMessage().contains("cluster secret mismatch"), e.getMessage());
        Connection ok = open("auth-friend2", b -> b.secret("s3cret")).connect(server.address(), WAIT);
        assertEquals(server.name(), ok.peerName(), "the server serves peers with the secret meanwhile");
    }
}
