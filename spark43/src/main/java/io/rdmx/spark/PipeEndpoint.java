package io.rdmx.spark;

import io.rdmx.channel.ChannelConfig;
import io.rdmx.channel.ChannelEngine;
import io.rdmx.channel.PeerChannel;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An executor's side of the pipelined shuffle: two rdmx nodes, each with a ring-channel engine of a worker per
 * slot ({@link PipeSlots}): the inbound node, whose rings reduce tasks read (each its slot's), and the outbound
 * node, from which map tasks connect to the reducers' inbound nodes (one channel per peer, kept) and write from
 * their slot to the reducer's. Two nodes, because a node does not connect to itself and a map task's reducer is
 * often on its own executor.
 */
final class PipeEndpoint implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PipeEndpoint.class);

    private final Node node;
    private final ChannelEngine engine;
    private final Node outNode;
    private final ChannelEngine outEngine;
    private final PipeSlots slots;
    private final Duration connectTimeout;
    private final Map<String, PeerChannel> peers = new ConcurrentHashMap<>();

    private PipeEndpoint(Node node, ChannelEngine engine, Node outNode, ChannelEngine outEngine, PipeSlots slots,
                         Duration connectTimeout) {
        this.node = node;
        this.engine = engine;
        this.outNode = outNode;
        this.outEngine = outEngine;
        this.slots = slots;
        this.connectTimeout = connectTimeout;
    }

    /**
     * @param conf the pipelined settings
     * @param peerTimeout rdmx's peer timeout (also the connect bound)
     * @param host the host to bind to
     * @param secret the cluster secret (Spark's application secret with spark.authenticate), or null
     * @return the endpoint
     * @throws RdmxException if the node cannot open
     */
    static PipeEndpoint open(PipeConf conf, Duration peerTimeout, String host, String secret) throws RdmxException {
        NodeOptions.Builder o = NodeOptions.builder().peerTimeout(peerTimeout);
        if (secret != null) {
            o.secret(secret);
        }
        Fabric f = Fabrics.get(conf.provider());
        if (f.traits().bindsToHost()) {
            o.bindAddress((host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":0");
        }
        ChannelConfig cc = ChannelConfig.builder(conf.slots()).ringCapacity(conf.ringBytes())
            .flushInterval(conf.flushInterval()).build();
        String name = "pipe-" + java.util.UUID.randomUUID().toString().substring(0, 8);
        Node node = f.open(o.name(name + "-in").build());
        ChannelEngine engine = null;
        Node outNode = null;
        try {
            engine = ChannelEngine.open(node, cc);
            outNode = f.open(o.name(name + "-out").build());
            ChannelEngine outEngine = ChannelEngine.open(outNode, cc);
            LOG.info("rdmx pipelined shuffle: inbound node {}, outbound node {} ({})", node.address(),
                outNode.address(), conf);
            return new PipeEndpoint(node, engine, outNode, outEngine, new PipeSlots(conf.slots()), peerTimeout);
        } catch (RdmxException | RuntimeException e) {
            if (engine != null) {
                engine.close();
            }
            if (outNode != null) {
                outNode.close();
            }
            node.close();
            throw e;
        }
    }

    String address() {
        return node.address();
    }

    ChannelEngine engine() {
        return engine;
    }

    PipeSlots slots() {
        return slots;
    }

    /**
     * @param address a reducer's node
     * @return the open channel to it (connecting on first use, or again after a loss)
     * @throws RdmxException if it cannot connect within the peer timeout
     */
    PeerChannel peer(String address) throws RdmxException {
        PeerChannel p = peers.get(address);
        if (p != null && p.isOpen()) {
            return p;
        }
        synchronized (peers) {
            p = peers.get(address);
            if (p == null || !p.isOpen()) {
                p = outEngine.connect(address, connectTimeout);
                peers.put(address, p);
            }
            return p;
        }
    }

    @Override
    public void close() {
        outEngine.close("rdmx pipelined shuffle manager stopped");
        engine.close("rdmx pipelined shuffle manager stopped");
        for (Node n : new Node[] {outNode, node}) {
            try {
                n.close();
            } catch (RuntimeException e) {
                LOG.warn("rdmx pipelined shuffle: closing node {} failed", n.address(), e);
            }
        }
    }
}
