package io.rdmx.verbs;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.testsuite.ReadConformanceSuite;
import io.rdmx.transport.testsuite.TwoLinks;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;

/**
 * The READ conformance suite, unchanged, on real verbs (Soft-RoCE in {@code scripts/softroce-test.sh}; skipped with
 * the reason elsewhere). A refused READ leaves the queue pair in the error state, as the NIC does it: declared fatal.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class VerbsReadConformanceTest extends ReadConformanceSuite {
    @BeforeAll
    static void rdma() {
        RequiresRdma.assume();
    }

    @Override
    protected Fabric fabric() {
        return new VerbsFabric();
    }

    /** With {@link TwoLinks} set, the server-side nodes on one link and every other node on the other. */
    @Override
    protected NodeOptions.Builder options(String name) {
        return TwoLinks.bind(super.options(name), name.startsWith("server-") || name.startsWith("bigserver-"));
    }

    @Override
    protected boolean remoteReadErrorsAreFatal() {
        return true;
    }
}
