package io.rdmx.channel;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;

/** Ring channels over the tcp provider. */
class TcpChannelTest extends ChannelSuite {
    @Override
    protected Fabric fabric() {
        return new io.rdmx.transport.tcp.TcpFabric();
    }

    @Override
    protected String reserveAddress(io.rdmx.transport.NodeOptions.Builder options, java.nio.file.Path scratch)
        throws java.io.IOException {
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1,
            java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        String address = "127.0.0.1:" + port;
        options.bindAddress(address);
        return address;
    }

    @Override
    protected void kill(Node node) {
        io.rdmx.transport.testsuite.StreamKill.kill(node);
    }
}
