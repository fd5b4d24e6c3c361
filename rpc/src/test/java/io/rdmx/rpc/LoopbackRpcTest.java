package io.rdmx.rpc;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.loopback.LoopbackFabric;
import io.rdmx.transport.loopback.LoopbackNode;
import java.nio.file.Path;

/** Generic RPC over the loopback provider. */
class LoopbackRpcTest extends RpcSuite {
    @Override
    protected Fabric fabric() {
        return new LoopbackFabric();
    }

    @Override
    protected void kill(Node node) {
        ((LoopbackNode) node).faults().kill();
    }

    @Override
    protected String reserveAddress(NodeOptions.Builder options, Path scratch) {
        return LoopbackFabric.SCHEME + options.build().name();
    }
}
