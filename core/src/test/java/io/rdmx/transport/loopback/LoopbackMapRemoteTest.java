package io.rdmx.transport.loopback;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.testsuite.MapRemoteSuite;

/** Loopback maps the peer region's memory. */
class LoopbackMapRemoteTest extends MapRemoteSuite {
    @Override
    protected Fabric fabric() {
        return new LoopbackFabric();
    }

    @Override
    protected boolean mapsMemory() {
        return true;
    }
}
