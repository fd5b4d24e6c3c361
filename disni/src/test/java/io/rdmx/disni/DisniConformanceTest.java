package io.rdmx.disni;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;
import io.rdmx.transport.capability.Capability;
import io.rdmx.transport.capability.InlineCompletions;
import io.rdmx.transport.testsuite.TransportConformanceSuite;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;

/**
 * The conformance suite, unchanged, on DiSNI. Runs where libdisni loads and an RDMA device is usable; skipped
 * elsewhere with the reason printed (DiSNI's native library is not in any package registry: build it from DiSNI's
 * source with {@code disni/scripts/build-libdisni.sh}; {@code scripts/softroce-test.sh} runs this on Soft-RoCE).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DisniConformanceTest extends TransportConformanceSuite {
    @BeforeAll
    static void disni() {
        RequiresDisni.assume();
    }

    @Override
    protected Set<Class<? extends Capability>> capabilities() {
        return Set.of(InlineCompletions.class);
    }

    @Override
    protected Fabric fabric() {
        return new DisniFabric();
    }

    @Override
    protected void kill(Node node) {
        node.close();
    }
}
