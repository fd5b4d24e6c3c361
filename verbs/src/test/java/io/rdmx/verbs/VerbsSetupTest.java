package io.rdmx.verbs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Access;
import io.rdmx.transport.Completion;
import io.rdmx.transport.Connection;
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
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Connection setup failures the conformance suite does not reach (an address nobody answers, a malformed
 * address, the node itself) and the busy-polling progress mode. Runs on Soft-RoCE in CI; skipped with the
 * reason where no RDMA device is usable.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class VerbsSetupTest {
    @BeforeAll
    static void rdma() {
        RequiresRdma.assume();
    }

    @Test
    void setupFailuresAreBoundedAndNamed() throws Exception {
        VerbsFabric f = new VerbsFabric();
        try (Node n = f.open(NodeOptions.builder().name("setup-a").build())) {
            // 10.9.9.77 is in the device's subnet but no host answers: address resolution cannot complete
            RdmxException e = assertTimeoutPreemptively(Duration.ofSeconds(30),
                () -> assertThrows(RdmxException.class, () -> n.connect("10.9.9.77:4000", Duration.ofSeconds(3))));
            assertTrue(e.getMessage().contains("10.9.9.77:4000"), e.getMessage());
            e = assertThrows(RdmxException.class, () -> n.connect("not-an-address", Duration.ofSeconds(3)));
            assertTrue(e.getMessage().contains("not-an-address"), e.getMessage());
            e = assertThrows(RdmxException.class, () -> n.connect(n.address(), Duration.ofSeconds(3)));
            assertTrue(e.getMessage().contains("itself"), e.getMessage());
            // the node still works after all that
            try (Node m = f.open(NodeOptions.builder().name("setup-b").build())) {
                Connection c = m.connect(n.address(), Duration.ofSeconds(30));
                assertEquals("setup-a", c.peerName());
            }
        }
    }

    @Test
    void busyPollingProgressDeliversTheSameCompletions() throws Exception {
        String old = System.setProperty(VerbsNode.BUSY_POLL_PROP, "true");
        try (Node a = new VerbsFabric().open(NodeOptions.builder().name("busy-a").build());
             Node b = new VerbsFabric().open(NodeOptions.builder().name("busy-b").build())) {
            Region target = b.register(4096, Access.ALL);
            Region src = a.register(4096, Access.ALL);
            for (int i = 0; i < 4096; i++) {
                src.buffer().put(i, (byte) (i * 7));
            }
            Connection c = a.connect(b.address(), Duration.ofSeconds(30));
            Connection back = b.accept(Duration.ofSeconds(30));
            Region rbuf = b.register(64, Access.ALL);
            assertEquals(Post.OK, back.post(WorkRequest.recv(rbuf, 0, 64).wrId(5)));
            assertEquals(Post.OK, c.post(WorkRequest.write(src, 0, 4096, target.descriptor(back), 0).wrId(1)
                .signaled(false)));
            assertEquals(Post.OK, c.post(WorkRequest.send(src, 0, 16).wrId(2)));
            List<Completion> got = new ArrayList<>();
            assertEquals(1, b.completionQueue().await(got::add, 1, 30, TimeUnit.SECONDS));
            assertEquals(5, got.get(0).wrId());
            got.clear();
            assertEquals(1, a.completionQueue().await(got::add, 1, 30, TimeUnit.SECONDS));
            assertEquals(2, got.get(0).wrId());
            byte[] want = new byte[4096];
            byte[] have = new byte[4096];
            src.buffer().get(0, want);
            target.buffer().get(0, have);
            assertArrayEquals(want, have);
        } finally {
            if (old == null) {
                System.clearProperty(VerbsNode.BUSY_POLL_PROP);
            } else {
                System.setProperty(VerbsNode.BUSY_POLL_PROP, old);
            }
        }
    }
}
