package io.rdmx.transport.tcp;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.testsuite.MapRemoteSuite;

/** tcp cannot map a peer's memory: the channel keeps WRITEs. */
class TcpMapRemoteTest extends MapRemoteSuite {
    @Override
    protected Fabric fabric() {
        return new TcpFabric();
    }

    @Override
    protected boolean mapsMemory() {
        return false;
    }
}
