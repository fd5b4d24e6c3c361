package io.rdmx.transport.tcp;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;
import io.rdmx.transport.testsuite.StreamKill;
import io.rdmx.transport.testsuite.TransportConformanceSuite;

/** The conformance suite on the tcp provider. */
class TcpConformanceTest extends TransportConformanceSuite {
    @Override
    protected Fabric fabric() {
        return new TcpFabric();
    }

    @Override
    protected void kill(Node node) {
        StreamKill.kill(node);
    }
}
