package io.rdmx.transport.shm;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.testsuite.ReadConformanceSuite;

/** The READ conformance suite on the shm provider. */
class ShmReadTest extends ReadConformanceSuite {
    @Override
    protected Fabric fabric() {
        return new ShmFabric();
    }
}
