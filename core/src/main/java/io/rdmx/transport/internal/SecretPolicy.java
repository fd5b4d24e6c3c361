package io.rdmx.transport.internal;

import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import java.net.InetAddress;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a network provider does when a node is about to listen: without a cluster secret, a node reachable beyond
 * loopback lets any host that reaches its port complete the handshake and write into the regions exported or
 * granted to it. Such a node logs one WARN naming the risk and the keys that close it, or, with
 * {@link NodeOptions#REQUIRE_SECRET_PROP}, refuses to open. Called by tcp, verbs and disni before they bind (verbs
 * and disni always count as beyond loopback: an RDMA device is reached over the network).
 */
public final class SecretPolicy {
    private static final Logger LOG = LoggerFactory.getLogger(SecretPolicy.class);

    private SecretPolicy() {
    }

    /**
     * @param bind the address a node will bind, or null for the wildcard address
     * @return true unless it is a loopback address (the wildcard address is not)
     */
    public static boolean beyondLoopback(InetAddress bind) {
        return bind == null || bind.isAnyLocalAddress() || !bind.isLoopbackAddress();
    }

    /**
     * Applies the policy to a node about to listen.
     *
     * @param options the node's options
     * @param provider the provider's name
     * @param listenOn where it will listen, for the message
     * @param beyondLoopback whether hosts other than this one can reach it
     * @return true if a warning was logged
     * @throws RdmxException if {@link NodeOptions#requireSecret()} and the node has no secret but listens beyond
     *     loopback (the message names the node, the address and the keys)
     */
    public static boolean onListen(NodeOptions options, String provider, String listenOn, boolean beyondLoopback)
        throws RdmxException {
        if (options.secret() != null || !beyondLoopback) {
            return false;
        }
        String what = provider + " node '" + options.name() + "' listens on " + listenOn
            + " beyond loopback without a cluster secret: any host that reaches it can connect and write into the"
            + " regions it exports or grants to that connection";
        if (options.requireSecret()) {
            throw new RdmxException(what + "; refused because " + NodeOptions.REQUIRE_SECRET_PROP + "=true (set a"
                + " secret: NodeOptions.secret, " + NodeOptions.SECRET_FILE_PROP + ", " + NodeOptions.SECRET_FILE_ENV
                + " or " + NodeOptions.SECRET_ENV + "; see docs/security.md)");
        }
        LOG.warn("{}. Set a secret (NodeOptions.secret, {}, {} or {}), or {}=true to refuse this; see"
            + " docs/security.md", what, NodeOptions.SECRET_FILE_PROP, NodeOptions.SECRET_FILE_ENV,
            NodeOptions.SECRET_ENV, NodeOptions.REQUIRE_SECRET_PROP);
        return true;
    }
}
