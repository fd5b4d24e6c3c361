package io.rdmx.transport.tcp;

import io.rdmx.transport.Availability;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.FabricTraits;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Node;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.internal.CompletionQueueImpl;
import io.rdmx.transport.internal.SecretPolicy;
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
     * System property: whether a thread that waits for a connection's input (a channel
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
        return Availability.usable("TCP sockets (JDK selector)");
    }

    @Override
    public Node open(NodeOptions options) throws RdmxException {
        String bind = options.bindAddress() == null ? DEFAULT_BIND : options.bindAddress();
        InetSocketAddress at = parse(bind);
        // before binding: a node that must not listen unprotected never does, even briefly
        SecretPolicy.onListen(options, NAME, bind, SecretPolicy.beyondLoopback(at.getAddress()));
        TcpNode n = new TcpNode(this, options, followerReads(), CompletionQueueImpl.followerReads());
        n.start(at);
        return n;
    }

    /**
     * @return {@link #FOLLOWER_READS_PROP}, validated
     * @throws IllegalArgumentException naming the property if it is neither true nor false
     */
    static boolean followerReads() {
        return io.rdmx.transport.internal.SystemProperties.bool(FOLLOWER_READS_PROP, FOLLOWER_READS_DEFAULT);
    }

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
}
