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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An executor's side of the pipelined shuffle: an inbound node with a ring-channel engine of a worker per slot
 * ({@link PipeSlots}), whose rings reduce tasks read (each its slot's), and outbound nodes (one per provider,
 * opened on first use), from which map tasks connect to the reducers' inbound nodes (one channel per peer, kept)
 * and write from their slot to the reducer's. Outbound nodes apart from the inbound one, because a node does not
 * connect to itself and a map task's reducer is often on its own executor.
 *
 * <p>The inbound provider: the one {@link PipeConf#PROVIDER_KEY} names, or with {@code auto} the one
 * {@link Fabrics#choose} ranks best among {@link Fabrics#autoCandidates()} for the peers this executor may have
 * (same host only in Spark's local modes, else any host). A reader registers {@code provider=address}
 * ({@link #address()}); a writer connects over the provider the reader named.
 */
final class PipeEndpoint implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PipeEndpoint.class);

    private final Fabric fabric;
    private final Node node;
    private final ChannelEngine engine;
    /** The cluster secret of every node, or null. */
    private final String secret;
    private final ChannelConfig channels;
    private final String name;
    private final String host;
    private final PipeSlots slots;
    private final Duration connectTimeout;
    /** Outbound engines by provider name; guarded by {@link #peers}' lock for opening. */
    private final Map<String, ChannelEngine> outbound = new ConcurrentHashMap<>();
    private final Map<String, PeerChannel> peers = new ConcurrentHashMap<>();
    private volatile boolean closed;

    private PipeEndpoint(Fabric fabric, Node node, ChannelEngine engine, String secret, ChannelConfig channels,
                         String name, String host, PipeSlots slots, Duration connectTimeout) {
        this.fabric = fabric;
        this.node = node;
        this.engine = engine;
        this.secret = secret;
        this.channels = channels;
        this.name = name;
        this.host = host;
        this.slots = slots;
        this.connectTimeout = connectTimeout;
    }

    /**
     * @param conf the pipelined settings
     * @param peerTimeout rdmx's peer timeout (also the connect bound)
     * @param host the host to bind to
     * @param secret the cluster secret (Spark's application secret with spark.authenticate), or null
     * @param oneHost whether every executor of the application is on this host (Spark's local modes)
     * @return the endpoint
     * @throws RdmxException if the node cannot open
     */
    static PipeEndpoint open(PipeConf conf, Duration peerTimeout, String host, String secret, boolean oneHost)
        throws RdmxException {
        Fabric f = inbound(conf.provider(), oneHost);
        ChannelConfig cc = ChannelConfig.builder(conf.slots()).ringCapacity(conf.ringBytes())
            .flushInterval(conf.flushInterval()).build();
        String name = "pipe-" + java.util.UUID.randomUUID().toString().substring(0, 8);
        Node node = f.open(options(f, peerTimeout, secret, host).name(name + "-in").build());
        try {
            ChannelEngine engine = ChannelEngine.open(node, cc);
            LOG.info("rdmx pipelined shuffle: inbound node {}={} ({})", f.name(), node.address(), conf);
            return new PipeEndpoint(f, node, engine, secret, cc, name, host, new PipeSlots(conf.slots()),
                peerTimeout);
        } catch (RuntimeException e) {
            node.close();
            throw e;
        }
    }

    /**
     * @param provider {@code auto} or a provider name
     * @param oneHost whether every peer is on this host
     * @return the provider of the inbound node
     * @throws IllegalArgumentException if {@code auto} finds none (naming what it considered)
     */
    static Fabric inbound(String provider, boolean oneHost) {
        if (!RdmxEndpoints.AUTO.equals(provider)) {
            return Fabrics.get(provider);
        }
        Fabric f = Fabrics.choose(Fabrics.autoCandidates(), oneHost, n -> true);
        if (f == null) {
            throw new IllegalArgumentException(PipeConf.PROVIDER_KEY + "=auto: no usable provider reaches peers "
                + (oneHost ? "on this host" : "on other hosts") + " (candidates "
                + Fabrics.autoCandidates().stream().map(Fabric::name).toList() + ")");
        }
        return f;
    }

    private static NodeOptions.Builder options(Fabric f, Duration peerTimeout, String secret, String host) {
        NodeOptions.Builder o = NodeOptions.builder().peerTimeout(peerTimeout);
        if (secret != null) {
            o.secret(secret);
        }
        if (f.traits().bindsToHost()) {
            o.bindAddress((host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":0");
        }
        return o;
    }

    /** @return {@code provider=address} of the inbound node, what a reader registers */
    String address() {
        return fabric.name() + "=" + node.address();
    }

    ChannelEngine engine() {
        return engine;
    }

    PipeSlots slots() {
        return slots;
    }

    /**
     * @param target a reducer's {@code provider=address}
     * @return the open channel to it (connecting on first use, or again after a loss)
     * @throws RdmxException if it cannot connect within the peer timeout, or the provider cannot open here
     */
    PeerChannel peer(String target) throws RdmxException {
        PeerChannel p = peers.get(target);
        if (p != null && p.isOpen()) {
            return p;
        }
        int eq = target.indexOf('=');
        if (eq <= 0 || eq == target.length() - 1) {
            throw new IllegalArgumentException("rdmx pipelined shuffle: a reader registered " + target
                + ", not provider=address");
        }
        synchronized (peers) {
            if (closed) {
                throw new IllegalStateException("rdmx pipelined shuffle manager stopped");
            }
            p = peers.get(target);
            if (p == null || !p.isOpen()) {
                p = outbound(target.substring(0, eq)).connect(target.substring(eq + 1), connectTimeout);
                peers.put(target, p);
            }
            return p;
        }
    }

    /** Opens the outbound engine of a provider on first use; under {@link #peers}' lock. */
    private ChannelEngine outbound(String provider) throws RdmxException {
        ChannelEngine e = outbound.get(provider);
        if (e != null) {
            return e;
        }
        Fabric f = Fabrics.get(provider);
        Node out = f.open(options(f, connectTimeout, secret, host).name(name + "-out-" + provider).build());
        try {
            e = ChannelEngine.open(out, channels);
        } catch (RuntimeException ex) {
            out.close();
            throw ex;
        }
        LOG.info("rdmx pipelined shuffle: outbound node {}={}", provider, out.address());
        outbound.put(provider, e);
        return e;
    }

    @Override
    public void close() {
        List<ChannelEngine> all;
        synchronized (peers) {
            closed = true;
            all = new ArrayList<>(outbound.values());
        }
        all.add(engine);
        for (ChannelEngine e : all) {
            e.close("rdmx pipelined shuffle manager stopped");
            try {
                e.node().close();
            } catch (RuntimeException ex) {
                LOG.warn("rdmx pipelined shuffle: closing node {} failed", e.node().address(), ex);
            }
        }
    }
}
