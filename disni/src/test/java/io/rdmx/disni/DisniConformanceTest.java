package io.rdmx.disni;

import io.rdmx.transport.Availability;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;
import io.rdmx.transport.testsuite.TransportConformanceSuite;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;

/**
 * The conformance suite, unchanged, on DiSNI. Runs where libdisni loads and an RDMA device is usable; skipped
 * elsewhere with the reason printed (this repository's machines have no libdisni: DiSNI's native library is not
 * in any package registry they reach).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DisniConformanceTest extends TransportConformanceSuite {
    @BeforeAll
    static void disni() {
        Availability a = new DisniFabric().availability();
        if (!a.usable()) {
            System.out.println("disni: skipping the conformance suite: " + a.reason());
        }
        Assumptions.assumeTrue(a.usable(), a.reason());
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
