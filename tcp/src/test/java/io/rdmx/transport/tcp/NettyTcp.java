package io.rdmx.transport.tcp;

import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;

/** Opens tcp nodes on the Netty engine ({@link TcpFabric#IO_PROP}{@code =netty}), for the tests of that engine. */
public final class NettyTcp {
    private NettyTcp() {
    }

    /**
     * @param options node options
     * @param directIo {@link TcpFabric#DIRECT_IO_PROP}
     * @return the node
     * @throws RdmxException if it cannot open
     */
    public static Node open(NodeOptions options, boolean directIo) throws RdmxException {
        TcpFabric f = new TcpFabric();
        TcpFabric.TcpNode n = new TcpFabric.TcpNode(f, options, directIo);
        n.start(TcpFabric.parse(options.bindAddress() == null ? TcpFabric.DEFAULT_BIND : options.bindAddress()));
        return n;
    }
}
