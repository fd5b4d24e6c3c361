package io.rdmx.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Access;
import io.rdmx.transport.Completion;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Post;
import io.rdmx.transport.Region;
import io.rdmx.transport.Status;
import io.rdmx.transport.WorkRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A peer that stops answering without a disconnect (its queue pair frozen in the error state, as when its host
 * hangs) is detected by the keep-alive probes: the blocked waiter wakes with the peer's name. Runs on
 * Soft-RoCE in CI; skipped with the reason where no RDMA device is usable.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class PeerHangTest {
    @BeforeAll
    static void rdma() {
        RequiresRdma.assume();
    }

    @Test
    void silentPeerIsDetectedAndTheWaiterWakesNamingIt() throws Exception {
        VerbsFabric f = new VerbsFabric();
        try (VerbsNode server = (VerbsNode) f.open(NodeOptions.builder().name("hang-server").build());
             Node client = f.open(NodeOptions.builder().name("hang-client").peerTimeout(Duration.ofSeconds(2))
                 .build())) {
            var c2s = client.connect(server.address(), Duration.ofSeconds(30));
            server.accept(Duration.ofSeconds(30));
            Region buf = client.register(64, Access.ALL);
            assertEquals(Post.OK, c2s.post(WorkRequest.recv(buf, 0, 64).wrId(9)));
            server.freeze();
            List<Completion> got = new ArrayList<>();
            int n = client.completionQueue().await(got::add, 1, 60, TimeUnit.SECONDS);
            assertEquals(1, n, "the waiter must wake");
            Completion c = got.get(0);
            assertEquals(9, c.wrId());
            assertEquals(Status.FLUSHED, c.status());
            assertTrue(c.detail().contains("hang-server"), c.detail());
            assertTrue(c2s.closeCause() instanceof ConnectionClosedException, String.valueOf(c2s.closeCause()));
            assertTrue(c2s.closeCause().getMessage().contains("hang-server"), c2s.closeCause().getMessage());
        }
    }
}
