package io.rdmx.disni;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.testsuite.ReadConformanceSuite;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;

/**
 * The READ conformance suite, unchanged, on disni (Soft-RoCE with libdisni; skipped with the reason elsewhere). A
 * refused READ leaves the queue pair in the error state, as the NIC does it: declared fatal.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DisniReadConformanceTest extends ReadConformanceSuite {
    @BeforeAll
    static void rdma() {
        RequiresDisni.assume();
    }

    @Override
    protected Fabric fabric() {
        return new DisniFabric();
    }

    @Override
    protected boolean remoteReadErrorsAreFatal() {
        return true;
    }
}
