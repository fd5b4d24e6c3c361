package io.rdmx.channel;

import io.rdmx.transport.Fabric;

/** The mapped fast path over the tcp provider. */
class TcpMappedChannelTest extends MappedChannelSuite {
    @Override
    protected Fabric fabric() {
        return new io.rdmx.transport.tcp.TcpFabric();
    }

    @Override
    protected boolean mapsMemory() {
        return false;
    }
}
