package io.rdmx.transport.shm;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;
import io.rdmx.transport.testsuite.StreamKill;
import io.rdmx.transport.testsuite.TransportConformanceSuite;

/** The conformance suite on the shm provider. */
class ShmConformanceTest extends TransportConformanceSuite {
    @Override
    protected Fabric fabric() {
        return new ShmFabric();
    }

    @Override
    protected void kill(Node node) {
        StreamKill.kill(node);
    }
}
