package io.rdmx.shuffle;

import io.rdmx.channel.ChannelConfig;
import io.rdmx.channel.ChannelEngine;
import io.rdmx.channel.ChannelWriter;
import io.rdmx.channel.PeerChannel;
import io.rdmx.channel.RecordHandler;
import io.rdmx.channel.RingBuffer;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RdmxTimeoutException;
import io.rdmx.transport.shm.ShmFabric;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The shuffle over ring channels (shm or tcp provider). The channel layer reports a lost peer to each reader
 * once and lets it go on with the others; a query needs every rank, so here the first loss aborts: every later
 * blocking read of every worker throws it again (as before the channel layer reported losses per peer).
 */
final class RingShuffleTransport implements ShuffleTransport {
    private final ShuffleConfig cfg;
    private final Node node;
    private final ChannelEngine engine;
    private final PeerChannel[] peers;
    private final Adapter[] adapters;
    private volatile ConnectionClosedException lost;

    /** Adapts the channel's record handler to a dispatch, without allocating per call. */
    private static final class Adapter implements RecordHandler {
        RingBuffer.Handler target;

        @Override
        public void onRecord(int streamId, ByteBuffer buffer, int offset, int length,
                             io.rdmx.channel.RecordSource source) {
            target.onRecord(streamId, buffer, offset, length);
        }
    }

    private RingShuffleTransport(ShuffleConfig cfg, Node node, ChannelEngine engine) {
        this.cfg = cfg;
        this.node = node;
        this.engine = engine;
        this.peers = new PeerChannel[cfg.processes()];
        this.adapters = new Adapter[cfg.workers()];
        for (int i = 0; i < adapters.length; i++) {
            adapters[i] = new Adapter();
        }
    }

    static String address(ShuffleConfig cfg, int rank) {
        if (!cfg.endpoints().isEmpty()) {
            return cfg.endpoints().get(rank);
        }
        return ShmFabric.root().resolve(cfg.nodeName(rank)).toAbsolutePath().toString();
    }

    static RingShuffleTransport open(ShuffleConfig cfg) throws RdmxException {
        String provider = cfg.transport() == ShuffleConfig.Transport.TCP ? "tcp" : "shm";
        NodeOptions.Builder nb = NodeOptions.builder().name(cfg.nodeName(cfg.rank()));
        if (!cfg.endpoints().isEmpty()) {
            nb.bindAddress(cfg.endpoints().get(cfg.rank()));
        }
        Node node = Fabrics.get(provider).open(nb.build());
        ChannelEngine engine = ChannelEngine.open(node, ChannelConfig.builder(cfg.workers())
            .ringCapacity(cfg.bufferSize()).batchThreshold(cfg.batchThreshold())
            .readNotifyThreshold(cfg.bufferSize() / 2).build());
        RingShuffleTransport t = new RingShuffleTransport(cfg, node, engine);
        try {
            t.join();
        } catch (RdmxException | RuntimeException e) {
            t.close();
            throw e;
        }
        return t;
    }

    /** Connects to every lower rank (the engine retries while it starts) and accepts every higher rank. */
    private void join() throws RdmxException {
        long deadline = System.nanoTime() + cfg.connectTimeout().toNanos();
        for (int r = 0; r < cfg.rank(); r++) {
            // the engine tries again while rank r's node is not listening yet
            try {
                peers[r] = engine.connect(address(cfg, r), Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
            } catch (RdmxTimeoutException e) {
                RdmxTimeoutException t = new RdmxTimeoutException("rank " + cfg.rank() + " could not reach rank " + r
                    + " at " + address(cfg, r) + " within " + cfg.connectTimeout().toSeconds() + " s");
                t.initCause(e);
                throw t;
            }
        }
        for (int n = cfg.rank() + 1; n < cfg.processes(); n++) {
            long left = deadline - System.nanoTime();
            PeerChannel p;
            try {
                p = engine.accept(Duration.ofNanos(Math.max(1, left)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new RdmxException("interrupted while joining the shuffle");
            }
            int r = rankOf(p.name());
            if (r <= cfg.rank() || peers[r] != null) {
                throw new RdmxException("unexpected shuffle peer '" + p.name() + "' for rank " + cfg.rank());
            }
            peers[r] = p;
        }
        for (int r = 0; r < peers.length; r++) {
            if (r != cfg.rank() && peers[r].workers() != cfg.workers()) {
                throw new RdmxException("rank " + r + " runs " + peers[r].workers() + " workers, this rank "
                    + cfg.workers() + ": SPMD plans need the same parallelism everywhere");
            }
        }
    }

    private int rankOf(String nodeName) throws RdmxException {
        String prefix = cfg.job() + "-r";
        if (!nodeName.startsWith(prefix)) {
            throw new RdmxException("peer '" + nodeName + "' is not part of shuffle job '" + cfg.job() + "'");
        }
        try {
            return Integer.parseInt(nodeName.substring(prefix.length()));
        } catch (NumberFormatException e) {
            throw new RdmxException("peer '" + nodeName + "' has no rank", e);
        }
    }

    @Override
    public Outbox outbox(int localWorker, int rank, int remoteWorker) {
        ChannelWriter w = peers[rank].writer(localWorker, remoteWorker);
        return new Outbox() {
            @Override
            public int tryClaim(int stream, int len) throws ConnectionClosedException {
                int at = w.tryClaim(stream, len);
                if (at == ChannelWriter.CLOSED) {
                    throw new ConnectionClosedException(w.peerName(), "shuffle rank " + rank + " ('" + w.peerName()
                        + "') is lost: " + (peers[rank].failure() == null ? "closed"
                        : peers[rank].failure().getMessage()), peers[rank].failure());
                }
                return at;
            }

            @Override
            public ByteBuffer buffer() {
                return w.buffer();
            }

            @Override
            public void commit() {
                w.commit();
            }

            @Override
            public void flush() {
                if (w.unsent() > 0) {
                    w.flush();
                }
            }

            @Override
            public void wakeOnSpace(int worker) {
                w.wakeOnCredit(worker < 0 ? null : engine.reader(worker));
            }
        };
    }

    @Override
    public int poll(int localWorker, RingBuffer.Handler d, int limit) {
        Adapter a = adapters[localWorker];
        a.target = d;
        return engine.reader(localWorker).poll(a, limit);
    }

    @Override
    public int read(int localWorker, RingBuffer.Handler d, int limit, long timeoutNanos)
        throws RdmxException, InterruptedException {
        Adapter a = adapters[localWorker];
        a.target = d;
        int n = engine.reader(localWorker).poll(a, limit);
        if (n > 0) {
            return n;
        }
        checkLost();
        try {
            return engine.reader(localWorker).read(a, limit, timeoutNanos, TimeUnit.NANOSECONDS);
        } catch (ConnectionClosedException e) {
            if (lost == null) {
                lost = e;
            }
            throw e;
        }
    }

    /** Throws the first lost rank's failure again, once any rank is lost: the query cannot complete. */
    private void checkLost() throws ConnectionClosedException {
        ConnectionClosedException f = lost;
        if (f == null) {
            for (PeerChannel p : peers) {
                if (p != null && p.failure() != null) {
                    f = p.failure();
                    lost = f;
                    break;
                }
            }
        }
        if (f != null) {
            throw new ConnectionClosedException(f.peer(), f.getMessage(), f.getCause());
        }
    }

    @Override
    public void wakeup(int localWorker) {
        engine.reader(localWorker).wakeup();
    }

    @Override
    public long networkRecords() {
        return engine.metrics().recordsWritten();
    }

    @Override
    public void close() {
        engine.close();
        node.close();
    }
}
