package io.rdmx.channel;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;

/** Ring channels over the loopback provider. */
class LoopbackChannelTest extends ChannelSuite {
    @Override
    protected Fabric fabric() {
        return new io.rdmx.transport.loopback.LoopbackFabric();
    }

    @Override
    protected String reserveAddress(io.rdmx.transport.NodeOptions.Builder options, java.nio.file.Path scratch) {
        return io.rdmx.transport.loopback.LoopbackFabric.SCHEME + options.build().name();
    }

    @Override
    protected void kill(Node node) {
        ((io.rdmx.transport.loopback.LoopbackNode) node).faults().kill();
    }
}
