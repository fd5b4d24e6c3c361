package io.rdmx.transport.loopback;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;
import io.rdmx.transport.testsuite.TransportConformanceSuite;

/** The conformance suite on the loopback provider. */
class LoopbackConformanceTest extends TransportConformanceSuite {
    @Override
    protected Fabric fabric() {
        return new LoopbackFabric();
    }

    @Override
    protected void kill(Node node) {
        ((LoopbackNode) node).faults().kill();
    }
}
