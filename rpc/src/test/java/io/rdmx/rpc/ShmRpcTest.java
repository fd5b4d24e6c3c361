package io.rdmx.rpc;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.testsuite.StreamKill;
import java.nio.file.Path;

/** Generic RPC over the shm provider. */
class ShmRpcTest extends RpcSuite {
    @Override
    protected Fabric fabric() {
        return new io.rdmx.transport.shm.ShmFabric();
    }

    @Override
    protected void kill(Node node) {
        StreamKill.kill(node);
    }

    @Override
    protected String reserveAddress(NodeOptions.Builder options, Path scratch) {
        String address = scratch.resolve("later-node").toAbsolutePath().toString();
        options.bindAddress(address);
        return address;
    }
}
