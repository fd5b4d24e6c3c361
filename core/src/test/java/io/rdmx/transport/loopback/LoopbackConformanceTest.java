package io.rdmx.transport.loopback;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;
import io.rdmx.transport.capability.Capability;
import io.rdmx.transport.capability.InlineCompletions;
import io.rdmx.transport.capability.RemoteMapping;
import io.rdmx.transport.testsuite.TransportConformanceSuite;
import java.util.Set;

/** The conformance suite on the loopback provider. */
class LoopbackConformanceTest extends TransportConformanceSuite {
    @Override
    protected Set<Class<? extends Capability>> capabilities() {
        return Set.of(RemoteMapping.class, InlineCompletions.class);
    }

    @Override
    protected Fabric fabric() {
        return new LoopbackFabric();
    }

    @Override
    protected void kill(Node node) {
        ((LoopbackNode) node).faults().kill();
    }
}
