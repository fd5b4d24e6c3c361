package io.rdmx.rpc.hadoop;

import io.rdmx.transport.Fabric;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.ConcurrentHashMap;
import javax.net.SocketFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ipc.Client;
import org.apache.hadoop.ipc.ProtobufRpcEngine2;
import org.apache.hadoop.ipc.ProtocolMetaInfoPB;
import org.apache.hadoop.ipc.RPC;
import org.apache.hadoop.ipc.RdmxIpcBridge;
import org.apache.hadoop.ipc.RemoteException;
import org.apache.hadoop.ipc.protobuf.ProtocolInfoProtos.GetProtocolSignatureRequestProto;
import org.apache.hadoop.ipc.protobuf.ProtocolInfoProtos.GetProtocolSignatureResponseProto;
import org.apache.hadoop.ipc.protobuf.ProtocolInfoProtos.ProtocolSignatureProto;
import org.apache.hadoop.net.NetUtils;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.thirdparty.protobuf.ServiceException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where each Hadoop server's rdmx listener is, learnt once per server address (JVM-wide) from the server's TCP
 * port: {@code ProtocolMetaInfoPB.getProtocolSignature("io.rdmx.rpc.hadoop.RdmxEndpoint", RPC_BUILTIN)}, the metadata call every
 * {@code RPC.Server} answers. The rule, deterministic and documented in docs/hadoop.md:
 * <ul>
 *   <li>one signature whose version has provider {@code tcp}: the listener is
 *       {@code <the server's host>:<port>};</li>
 *   <li>provider {@code shm}, and the server's address is local: the node directory
 *       {@code <shm root>/hadoop-ipc-<server TCP port>};</li>
 *   <li>anything else (a stock server answers with a remote error or no version; shm on another host): TCP,
 *       logged, asked again after {@code rdmx.rpc.hadoop.reprobeMs}.</li>
 * </ul>
 * A failure to reach the TCP port at all is not remembered: that call goes over TCP and fails there as it would
 * with the stock engine.
 */
final class Endpoints {
    private static final Logger LOG = LoggerFactory.getLogger(Endpoints.class);
    private static final ConcurrentHashMap<InetSocketAddress, Endpoint> KNOWN = new ConcurrentHashMap<>();

    private Endpoints() {
    }

    /** What is known of one server. */
    static final class Endpoint {
        /** rdmx provider, or null: TCP. */
        final String provider;
        /** rdmx address, or null: TCP. */
        final String address;
        /** When (System.nanoTime) to ask again; meaningful for TCP only. */
        final long until;
        final String reason;
        /** The listener's ring capacity, or 0: not advertised (the channel default). */
        final int ringBytes;
        /** Set once a client of this JVM has dialled the listener: a later dial is to a listener it lost. */
        volatile boolean dialled;

        Endpoint(String provider, String address, long until, String reason) {
            this(provider, address, until, reason, 0);
        }

        Endpoint(String provider, String address, long until, String reason, int ringBytes) {
            this.provider = provider;
            this.address = address;
            this.until = until;
            this.reason = reason;
            this.ringBytes = ringBytes;
        }

        boolean rdmx() {
            return address != null;
        }
    }

    /**
     * @param server the server's TCP address
     * @param protocol the proxy's protocol: under Kerberos the probe rides on a connection of that protocol (SASL
     *     needs its {@code @KerberosInfo}), as Hadoop's {@code RpcClientUtil} does
     * @param ticket the caller's user (the metadata call runs as that user)
     * @param conf configuration
     * @param factory socket factory
     * @param cfg the engine's keys
     * @return the endpoint, or null when the server's TCP port could not be asked (not remembered)
     */
    static Endpoint resolve(InetSocketAddress server, Class<?> protocol, UserGroupInformation ticket,
        Configuration conf, SocketFactory factory, HadoopRdmxConfig cfg) {
        Endpoint e = KNOWN.get(server);
        if (e != null && (e.rdmx() || System.nanoTime() - e.until < 0)) {
            return e;
        }
        Endpoint found = ask(server, protocol, ticket, conf, factory, cfg);
        if (found != null) {
            KNOWN.put(server, found);
            if (found.rdmx()) {
                LOG.info("Hadoop server {}: calls go over rdmx {} {}", server, found.provider, found.address);
            } else {
                LOG.info("Hadoop server {}: calls go over TCP ({})", server, found.reason);
            }
        }
        return found;
    }

    /**
     * Asks a server's TCP port again where its rdmx listener is, replacing what was known: for a listener this JVM
     * was connected to and lost. A server restarted on the same TCP port (a NameNode restart) has a new listener
     * port; dialling the old one would wait the whole connect timeout for nothing listening there, then send the
     * server's calls over TCP for the re-probe period.
     *
     * @param server the server's TCP address
     * @param lost the endpoint whose listener was lost
     * @param protocol the protocol of the caller's proxy (under Kerberos the probe runs on a connection of it)
     * @param ticket the caller's user
     * @param conf configuration
     * @param factory socket factory
     * @param cfg the engine's keys
     * @return the endpoint now, or null when the server's TCP port could not be asked (then nothing is known of it)
     */
    static Endpoint reprobe(InetSocketAddress server, Endpoint lost, Class<?> protocol, UserGroupInformation ticket,
        Configuration conf, SocketFactory factory, HadoopRdmxConfig cfg) {
        Endpoint now = KNOWN.get(server);
        if (now != null && now != lost) {
            return now; // another caller asked already
        }
        KNOWN.remove(server, lost);
        Endpoint found = resolve(server, protocol, ticket, conf, factory, cfg);
        if (found != null && found.rdmx() && !found.address.equals(lost.address)) {
            LOG.info("Hadoop server {}: its rdmx listener moved from {} to {} (the server restarted)", server,
                lost.address, found.address);
        }
        return found;
    }

    /**
     * Calls to a server go over TCP from now until the re-probe time.
     *
     * @param server the server
     * @param reason why, logged
     * @param cfg keys
     */
    static void fallBack(InetSocketAddress server, String reason, HadoopRdmxConfig cfg) {
        KNOWN.put(server, new Endpoint(null, null, System.nanoTime() + cfg.reprobe.toNanos(), reason));
        LOG.warn("Hadoop server {}: calls go over TCP for {} ms ({})", server, cfg.reprobe.toMillis(), reason);
    }

    /** Forgets every server (tests). */
    static void clear() {
        KNOWN.clear();
    }

    private static Endpoint ask(InetSocketAddress server, Class<?> protocol, UserGroupInformation ticket,
        Configuration conf, SocketFactory factory, HadoopRdmxConfig cfg) {
        long until = System.nanoTime() + cfg.reprobe.toNanos();
        GetProtocolSignatureResponseProto r;
        try {
            Client.ConnectionId id = RdmxIpcBridge.connectionId(server, UserGroupInformation.isSecurityEnabled()
                ? protocol : ProtocolMetaInfoPB.class, ticket, 0, null, conf);
            ProtocolMetaInfoPB meta = new ProtobufRpcEngine2().getProtocolMetaInfoProxy(id, conf, factory)
                .getProxy();
            try {
                r = meta.getProtocolSignature(null, GetProtocolSignatureRequestProto.newBuilder()
                    .setProtocol(RdmxEndpoint.NAME).setRpcKind(RPC.RpcKind.RPC_BUILTIN.toString()).build());
            } finally {
                RPC.stopProxy(meta);
            }
        } catch (ServiceException e) {
            Throwable c = e.getCause();
            if (c instanceof RemoteException) {
                return new Endpoint(null, null, until, "it has no rdmx listener: " + ((RemoteException) c)
                    .getClassName());
            }
            LOG.debug("Hadoop server {}: its TCP port did not answer the rdmx probe: {}", server, String.valueOf(c));
            return null;
        } catch (IOException e) {
            LOG.debug("Hadoop server {}: rdmx probe failed: {}", server, e.toString());
            return null;
        }
        for (ProtocolSignatureProto v : r.getProtocolSignatureList()) {
            long adv = v.getVersion();
            int port = RdmxEndpoint.port(adv);
            int kind = RdmxEndpoint.provider(adv);
            Fabric fabric = RdmxEndpoint.fabricOf(kind);
            if (fabric == null) {
                return new Endpoint(null, null, until, "it advertises an rdmx listener of kind " + kind
                    + ", which no usable provider of this JVM serves");
            }
            if (kind == RdmxEndpoint.LOCAL && (server.getAddress() == null
                || !NetUtils.isLocalAddress(server.getAddress()))) {
                return new Endpoint(null, null, until, "its rdmx listener is " + fabric.name()
                    + ", of its own host only, and it is on another host");
            }
            String hostPort = NetUtils.getHostPortString(new InetSocketAddress(server.getAddress() != null
                ? server.getAddress().getHostAddress() : server.getHostString(), port));
            return new Endpoint(fabric.name(), fabric.addressOf(RdmxEndpoint.nodeName(port), hostPort), 0, null,
                RdmxEndpoint.ringCapacity(adv));
        }
        return new Endpoint(null, null, until, "it has no rdmx listener");
    }
}
