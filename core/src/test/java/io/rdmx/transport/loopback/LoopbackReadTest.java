package io.rdmx.transport.loopback;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.testsuite.ReadConformanceSuite;

/** The READ conformance suite on the loopback provider. */
class LoopbackReadTest extends ReadConformanceSuite {
    @Override
    protected Fabric fabric() {
        return new LoopbackFabric();
    }
}
