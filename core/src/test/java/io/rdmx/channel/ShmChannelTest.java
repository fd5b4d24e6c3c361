package io.rdmx.channel;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;

/** Ring channels over the shm provider. */
class ShmChannelTest extends ChannelSuite {
    @Override
    protected Fabric fabric() {
        return new io.rdmx.transport.shm.ShmFabric();
    }

    @Override
    protected String reserveAddress(io.rdmx.transport.NodeOptions.Builder options, java.nio.file.Path scratch) {
        String address = scratch.resolve("later-node").toAbsolutePath().toString();
        options.bindAddress(address);
        return address;
    }

    @Override
    protected void kill(Node node) {
        io.rdmx.transport.testsuite.StreamKill.kill(node);
    }
}
