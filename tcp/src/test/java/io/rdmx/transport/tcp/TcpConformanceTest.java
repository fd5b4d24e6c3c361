package io.rdmx.transport.tcp;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;
import io.rdmx.transport.capability.Capability;
import io.rdmx.transport.capability.Corking;
import io.rdmx.transport.capability.InlineCompletions;
import io.rdmx.transport.capability.InputFollowing;
import io.rdmx.transport.testsuite.StreamKill;
import io.rdmx.transport.testsuite.TransportConformanceSuite;
import java.util.Set;

/** The conformance suite on the tcp provider. */
class TcpConformanceTest extends TransportConformanceSuite {
    @Override
    protected Set<Class<? extends Capability>> capabilities() {
        return Set.of(InlineCompletions.class, InputFollowing.class, Corking.class);
    }

    @Override
    protected Fabric fabric() {
        return new TcpFabric();
    }

    @Override
    protected void kill(Node node) {
        StreamKill.kill(node);
    }
}
