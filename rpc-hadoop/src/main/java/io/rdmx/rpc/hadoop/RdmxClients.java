package io.rdmx.rpc.hadoop;

import io.rdmx.channel.ChannelConfig;
import io.rdmx.channel.ChannelEngine;
import io.rdmx.rpc.RpcClient;
import io.rdmx.rpc.RpcConfig;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.ipc.ClientId;

/**
 * The JVM's rdmx clients, one per (provider, ring capacity, message bound), shared by every proxy of every protocol and user
 * (Hadoop's {@code ClientCache} does the same for its TCP {@code Client}s): one node, one channel per server,
 * reference counted by the proxies and closed with the last one. Each has one 16-byte Hadoop client id, sent in
 * every request header, as a stock {@code Client} has.
 */
final class RdmxClients {
    private static final Map<String, Shared> SHARED = new HashMap<>();
    private static final AtomicInteger SEQ = new AtomicInteger();

    private RdmxClients() {
    }

    /** One shared client. */
    static final class Shared {
        final String key;
        final Node node;
        final ChannelEngine engine;
        final RpcClient client;
        final byte[] clientId;
        int refs;

        Shared(String key, Node node, ChannelEngine engine, RpcClient client, byte[] clientId) {
            this.key = key;
            this.node = node;
            this.engine = engine;
            this.client = client;
            this.clientId = clientId;
        }
    }

    /**
     * @param provider tcp or shm
     * @param ringBytes the ring capacity the server advertised, or 0 for the channel default
     * @param maxMessage the client's message bound
     * @param secretId {@link HadoopRdmxConfig#secretId()}
     * @return the key of the shared client for these
     */
    static String key(String provider, int ringBytes, int maxMessage, String secretId) {
        return provider + "/" + ringBytes + "/" + maxMessage + "/" + secretId;
    }

    /**
     * @param provider tcp or shm
     * @param ringBytes the ring capacity of the servers it calls (both ends of a channel must agree), or 0 for
     *                  the channel default ({@code rdmx.channel.ringCapacity}: a server that does not advertise
     *                  its capacity uses that)
     * @param maxMessage the client's message bound
     * @param cfg the proxy's keys: the secret ({@link HadoopRdmxConfig#SECRET_KEY}), if any, authenticates its node
     * @return the shared client, its count raised (give it back with {@link #release})
     * @throws IOException if its node cannot open
     */
    static synchronized Shared acquire(String provider, int ringBytes, int maxMessage, HadoopRdmxConfig cfg)
        throws IOException {
        String key = key(provider, ringBytes, maxMessage, cfg.secretId());
        Shared s = SHARED.get(key);
        if (s == null || !s.engine.isOpen()) {
            byte[] id = ClientId.getClientId();
            Node node = null;
            ChannelEngine engine = null;
            try {
                String name = "hadoop-client-" + ManagementFactory.getRuntimeMXBean().getPid() + "-"
                    + SEQ.incrementAndGet();
                NodeOptions.Builder o = NodeOptions.builder().name(name);
                if (cfg.secret != null) {
                    o.secret(cfg.secret);
                }
                io.rdmx.transport.Fabric fabric = Fabrics.get(provider);
                if (!fabric.traits().bindsToHost()) {
                    o.bindAddress(fabric.addressOf(name, null)); // a same-host node's address is its name's
                }
                node = fabric.open(o.build());
                // every RPC frame is flushed by its sender: no timed flush, so the engine's network thread has
                // no flush scan to run (it slept 1 ms at a time with the default 2 ms interval)
                ChannelConfig.Builder cb = ChannelConfig.builder(1).flushInterval(Duration.ZERO);
                if (ringBytes > 0) {
                    cb.ringCapacity(ringBytes);
                }
                engine = ChannelEngine.open(node, cb.build());
                RpcClient client = RpcClient.open(engine, RpcConfig.builder().maxMessageBytes(maxMessage).build(), id);
                s = new Shared(key, node, engine, client, id);
                SHARED.put(key, s);
            } catch (RdmxException | RuntimeException e) {
                if (engine != null) {
                    engine.close();
                }
                if (node != null) {
                    node.close();
                }
                throw new IOException("rdmx " + provider + " client node could not open: " + e.getMessage(), e);
            }
        }
        s.refs++;
        return s;
    }

    /** @param s a client from {@link #acquire}; closed when its last user gives it back */
    static synchronized void release(Shared s) {
        if (--s.refs == 0) {
            SHARED.remove(s.key, s);
            s.client.close();
            s.engine.close();
            s.node.close();
        }
    }
}
