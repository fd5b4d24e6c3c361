package io.rdmx.rpc;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.testsuite.StreamKill;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;

/** Generic RPC over the tcp provider. */
class TcpRpcTest extends RpcSuite {
    @Override
    protected Fabric fabric() {
        return new io.rdmx.transport.tcp.TcpFabric();
    }

    @Override
    protected void kill(Node node) {
        StreamKill.kill(node);
    }

    @Override
    protected String reserveAddress(NodeOptions.Builder options, Path scratch) throws java.io.IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        String address = "127.0.0.1:" + port;
        options.bindAddress(address);
        return address;
    }
}
