package io.rdmx.transport.tcp;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.util.concurrent.ThreadFactory;
import io.rdmx.transport.Availability;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.FabricTraits;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Node;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.shm.SelectorSockets;
import io.rdmx.transport.wire.Placer;
import io.rdmx.transport.internal.SecretPolicy;
import io.rdmx.transport.stream.StreamNode;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnknownHostException;

/** The {@code tcp} provider. Addresses are {@code host:port}; the default bind address is {@code 127.0.0.1:0}. */
public final class TcpFabric implements Fabric {
    /** Provider name. */
    public static final String NAME = "tcp";
    /** Default bind address. */
    public static final String DEFAULT_BIND = "127.0.0.1:0";
    /**
     * System property: whether posting threads write frames to the socket themselves and completions are
     * handed to the channel layer on the I/O thread (epoll only); {@code false} hands every frame to the event
     * loop and every completion to the node's queue (for comparison). Read when a node opens.
     */
    public static final String DIRECT_IO_PROP = "rdmx.tcp.directIo";
    /** Default of {@link #DIRECT_IO_PROP}. */
    public static final boolean DIRECT_IO_DEFAULT = true;
    /**
     * System property: the socket engine. {@code selector} (the default): one I/O thread per node on a JDK
     * {@link java.nio.channels.Selector}, the machinery of the shm provider ({@link SelectorSockets}), posting
     * threads writing their own frames; {@code netty}: the Netty event loop ({@link StreamNode}, epoll where
     * available; {@link #DIRECT_IO_PROP} applies), kept for comparison. Read when a node opens.
     */
    public static final String IO_PROP = "rdmx.tcp.io";
    /** Default of {@link #IO_PROP}. */
    public static final String IO_DEFAULT = "selector";
    /**
     * System property: with the selector engine, whether a thread that waits for a connection's input (a channel
     * reader about to sleep) reads the socket and handles what came itself while no other thread reads it
     * (leader/follower), instead of sleeping until the I/O thread has read it and woken it. Read when a node
     * opens.
     */
    public static final String FOLLOWER_READS_PROP = "rdmx.tcp.followerReads";
    /** Default of {@link #FOLLOWER_READS_PROP}. */
    public static final boolean FOLLOWER_READS_DEFAULT = true;

    /** Creates the provider (ServiceLoader). */
    public TcpFabric() {
    }

    @Override
    public String name() {
        return NAME;
    }

    /** Any host, through the IP route: {@code auto}'s fallback, the provider that works everywhere. */
    @Override
    public FabricTraits traits() {
        return new FabricTraits(FabricTraits.Reach.NETWORK, FabricTraits.Nic.IP_ROUTE, 10);
    }

    @Override
    public Availability availability() {
        return Availability.usable("TCP sockets (" + (Epoll.isAvailable() ? "epoll" : "nio") + ")");
    }

    @Override
    public Node open(NodeOptions options) throws RdmxException {
        String bind = options.bindAddress() == null ? DEFAULT_BIND : options.bindAddress();
        InetSocketAddress at = parse(bind);
        // before binding: a node that must not listen unprotected never does, even briefly
        SecretPolicy.onListen(options, NAME, bind, SecretPolicy.beyondLoopback(at.getAddress()));
        if (!netty()) {
            return SelectorSockets.openTcp(this, options, at, ADDRESSING, followerReads());
        }
        TcpNode n = new TcpNode(this, options, directIo());
        n.start(at);
        return n;
    }

    /**
     * @return {@link #DIRECT_IO_PROP}, validated
     * @throws IllegalArgumentException naming the property if it is neither true nor false
     */
    static boolean directIo() {
        return io.rdmx.transport.internal.SystemProperties.bool(DIRECT_IO_PROP, DIRECT_IO_DEFAULT);
    }

    /**
     * @return true if {@link #IO_PROP} chooses the Netty engine
     * @throws IllegalArgumentException naming the property if it is neither selector nor netty
     */
    static boolean followerReads() {
        return io.rdmx.transport.internal.SystemProperties.bool(FOLLOWER_READS_PROP, FOLLOWER_READS_DEFAULT);
    }

    static boolean netty() {
        String v = System.getProperty(IO_PROP, IO_DEFAULT).trim();
        if (!v.equalsIgnoreCase("selector") && !v.equalsIgnoreCase("netty")) {
            throw new IllegalArgumentException(IO_PROP + "=" + v + " must be selector or netty");
        }
        return v.equalsIgnoreCase("netty");
    }

    private static final SelectorSockets.Addressing ADDRESSING = new SelectorSockets.Addressing() {
        @Override
        public InetSocketAddress parse(String address) throws RdmxException {
            return TcpFabric.parse(address);
        }

        @Override
        public String format(InetSocketAddress bound) {
            return formatAddress(bound);
        }
    };

    static String formatAddress(SocketAddress bound) {
        InetSocketAddress a = (InetSocketAddress) bound;
        InetAddress ip = a.getAddress();
        String host = ip.isAnyLocalAddress() ? "127.0.0.1" : ip.getHostAddress();
        if (host.indexOf(':') >= 0) {
            host = "[" + host + "]";
        }
        return host + ":" + a.getPort();
    }

    static InetSocketAddress parse(String address) throws RdmxException {
        int i = address.lastIndexOf(':');
        if (i <= 0 || i == address.length() - 1) {
            throw new RdmxException("tcp address=" + address + " is not host:port");
        }
        String host = address.substring(0, i);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(address.substring(i + 1));
        } catch (NumberFormatException e) {
            throw new RdmxException("tcp address=" + address + " has a bad port", e);
        }
        if (port < 0 || port > 65535) {
            throw new RdmxException("tcp address=" + address + " has port=" + port + " out of range");
        }
        try {
            return new InetSocketAddress(InetAddress.getByName(host), port);
        } catch (UnknownHostException e) {
            throw new RdmxException("tcp address=" + address + ": unknown host", e);
        }
    }

    /** A tcp node. */
    static final class TcpNode extends StreamNode {
        private static final boolean EPOLL = Epoll.isAvailable();

        private final boolean directIo;

        TcpNode(TcpFabric fabric, NodeOptions options, boolean directIo) {
            super(fabric, options, group(options.name(), options.bindAddress() == null ? DEFAULT_BIND
                : options.bindAddress()));
            this.directIo = directIo && EPOLL;
        }

        @Override
        protected boolean directIo() {
            return directIo;
        }

        private static EventLoopGroup group(String name, String bind) {
            ThreadFactory tf = new io.rdmx.transport.stream.BindingThreadFactory("rdmx-tcp-" + name, NAME, bind);
            return EPOLL ? new EpollEventLoopGroup(1, tf) : new NioEventLoopGroup(1, tf);
        }

        void start(SocketAddress bind) throws RdmxException {
            bind(bind);
        }

        @Override
        protected Class<? extends Channel> channelClass() {
            return EPOLL ? EpollSocketChannel.class : NioSocketChannel.class;
        }

        @Override
        protected Class<? extends ServerChannel> serverChannelClass() {
            return EPOLL ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
        }

        @Override
        protected void configure(Bootstrap b) {
            b.option(ChannelOption.TCP_NODELAY, true);
        }

        @Override
        protected SocketAddress parseAddress(String address) throws RdmxException {
            return parse(address);
        }

        @Override
        protected String formatAddress(SocketAddress bound) {
            return TcpFabric.formatAddress(bound);
        }

        @Override
        protected Placer placerFor(String peerAddress) {
            return null;
        }

        @Override
        protected boolean acceptsPlacedWrites() {
            return false;
        }

        @Override
        protected Allocation allocate(int length, int access, int remoteKey) {
            return new Allocation(java.nio.ByteBuffer.allocateDirect(length), () -> { });
        }
    }
}
