package io.rdmx.verbs;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.capability.Capability;
import io.rdmx.transport.capability.InlineCompletions;
import io.rdmx.transport.capability.InputFollowing;
import io.rdmx.transport.testsuite.TransportConformanceSuite;
import io.rdmx.transport.testsuite.TwoLinks;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;

/**
 * The conformance suite, unchanged, on real verbs. Runs where an RDMA device is usable (Soft-RoCE in
 * {@code scripts/softroce-test.sh}); skipped with the reason elsewhere.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class VerbsConformanceTest extends TransportConformanceSuite {
    @BeforeAll
    static void rdma() {
        RequiresRdma.assume();
    }

    @Override
    protected Set<Class<? extends Capability>> capabilities() {
        return Set.of(InlineCompletions.class, InputFollowing.class);
    }

    @Override
    protected Fabric fabric() {
        return new VerbsFabric();
    }

    /** With {@link TwoLinks} set, the server on one link and every other node on the other. */
    @Override
    protected NodeOptions.Builder options(String name) {
        return TwoLinks.bind(super.options(name), name.startsWith("server-"));
    }

    /** A crashed process's RDMA ids are destroyed by the kernel, which disconnects its peers: so does kill. */
    @Override
    protected void kill(Node node) {
        ((VerbsNode) node).kill();
    }
}
