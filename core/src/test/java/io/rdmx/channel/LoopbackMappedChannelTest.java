package io.rdmx.channel;

import io.rdmx.transport.Fabric;

/** The mapped fast path over the loopback provider. */
class LoopbackMappedChannelTest extends MappedChannelSuite {
    @Override
    protected Fabric fabric() {
        return new io.rdmx.transport.loopback.LoopbackFabric();
    }

    @Override
    protected boolean mapsMemory() {
        return true;
    }
}
