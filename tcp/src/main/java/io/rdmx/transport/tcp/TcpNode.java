package io.rdmx.transport.tcp;

import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.selector.SelectorNode;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;

/**
 * A tcp node on core's selector engine ({@link SelectorNode}): one I/O thread {@code rdmx-tcp-<node>}, TCP sockets
 * with TCP_NODELAY, posting threads writing their own frames, WRITE data carried in frames (nothing is mapped),
 * no peer credentials (authentication is the handshake's), no bells. Its address is {@code host:port}.
 */
final class TcpNode extends SelectorNode {
    private volatile String address;

    /**
     * @param fabric the provider
     * @param options validated options
     * @param followerReads {@link TcpFabric#FOLLOWER_READS_PROP}
     * @param queueFollowerReads {@code rdmx.cq.followerReads}
     */
    TcpNode(TcpFabric fabric, NodeOptions options, boolean followerReads, boolean queueFollowerReads) {
        super(fabric, options, followerReads, queueFollowerReads);
    }

    /**
     * Listens on a TCP socket and starts the I/O thread. Called once, right after construction.
     *
     * @param bind where to listen
     * @throws RdmxException naming the node and the address if the socket cannot be bound
     */
    void start(InetSocketAddress bind) throws RdmxException {
        try {
            ServerSocketChannel server = ServerSocketChannel.open();
            listen(server, null);
            server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            server.bind(bind, Math.max(64, options().maxPendingHandshakes()));
            address = TcpFabric.formatAddress(server.getLocalAddress());
        } catch (IOException e) {
            closeQuietly();
            throw new RdmxException(fabric().name() + " node '" + name() + "' cannot listen on " + bind + ": "
                + e.getMessage(), e);
        }
        startIo();
    }

    @Override
    public String address() {
        return address;
    }

    @Override
    public AbstractConnection connect(String peerAddress, Duration timeout) throws RdmxException {
        return dial(peerAddress, timeout, TcpFabric.parse(peerAddress));
    }

    @Override
    protected SocketChannel openSocket() throws IOException {
        return SocketChannel.open();
    }

    @Override
    protected void configure(SocketChannel ch) throws IOException {
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
    }

    @Override
    protected String describeAccepted(SocketChannel ch) {
        try {
            return String.valueOf(ch.getRemoteAddress());
        } catch (IOException e) {
            return "a peer of " + address;
        }
    }

    @Override
    protected String sourceAddressOf(SocketChannel ch) {
        try {
            SocketAddress a = ch.getRemoteAddress();
            return a instanceof InetSocketAddress i ? i.getAddress().getHostAddress() : String.valueOf(a);
        } catch (IOException e) {
            return "unknown";
        }
    }
}
