package io.rdmx.transport.shm;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;
import io.rdmx.transport.capability.Bells;
import io.rdmx.transport.capability.Capability;
import io.rdmx.transport.capability.Corking;
import io.rdmx.transport.capability.InputFollowing;
import io.rdmx.transport.capability.RemoteMapping;
import io.rdmx.transport.testsuite.StreamKill;
import io.rdmx.transport.testsuite.TransportConformanceSuite;
import java.util.Set;

/** The conformance suite on the shm provider. */
class ShmConformanceTest extends TransportConformanceSuite {
    @Override
    protected Set<Class<? extends Capability>> capabilities() {
        return Set.of(RemoteMapping.class, Bells.class, InputFollowing.class, Corking.class);
    }

    @Override
    protected Fabric fabric() {
        return new ShmFabric();
    }

    @Override
    protected void kill(Node node) {
        StreamKill.kill(node);
    }
}
