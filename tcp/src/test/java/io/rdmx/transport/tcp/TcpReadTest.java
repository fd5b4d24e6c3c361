package io.rdmx.transport.tcp;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.testsuite.ReadConformanceSuite;

/** The READ conformance suite on the tcp provider. */
class TcpReadTest extends ReadConformanceSuite {
    @Override
    protected Fabric fabric() {
        return new TcpFabric();
    }
}
