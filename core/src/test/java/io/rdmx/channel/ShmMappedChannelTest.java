package io.rdmx.channel;

import io.rdmx.transport.Fabric;

/** The mapped fast path over the shm provider. */
class ShmMappedChannelTest extends MappedChannelSuite {
    @Override
    protected Fabric fabric() {
        return new io.rdmx.transport.shm.ShmFabric();
    }

    @Override
    protected boolean mapsMemory() {
        return true;
    }

    @Override
    protected boolean hasBells() {
        return true;
    }
}
