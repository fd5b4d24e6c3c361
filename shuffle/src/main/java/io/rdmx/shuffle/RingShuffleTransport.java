package io.rdmx.shuffle;

import io.rdmx.channel.ChannelConfig;
import io.rdmx.channel.ChannelEngine;
import io.rdmx.channel.ChannelWriter;
import io.rdmx.channel.PeerChannel;
import io.rdmx.channel.RecordHandler;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RdmxTimeoutException;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shuffle over ring channels, on any provider, chosen per peer ({@code auto}: shm for peers on this host,
 * verbs where an RDMA device is up, tcp otherwise). One node and channel engine per provider in use. The
 * channel layer reports a lost peer to each reader once; the worker decides whether its query can go on (see
 * {@link Worker}: a rank that ended every stream this worker consumes may leave).
 *
 * <p>A worker with peers on more than one provider reads every engine; it blocks in one of them for at most
 * {@link #MIXED_SLICE_NANOS} at a time (a record arriving on the other engine waits at most that long).
 */
final class RingShuffleTransport implements ShuffleTransport {
    private static final Logger LOG = LoggerFactory.getLogger(RingShuffleTransport.class);
    /** With peers on several providers, the longest a blocked reader sleeps in one engine before polling all. */
    static final long MIXED_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final ShuffleConfig cfg;
    /** The provider of each rank ({@code null} for this rank). */
    private final String[] providerOf;
    private final Map<String, Node> nodes = new LinkedHashMap<>();
    private final Map<String, ChannelEngine> engines = new LinkedHashMap<>();
    private ChannelEngine[] engineList = new ChannelEngine[0];
    private final PeerChannel[] peers;
    private final Adapter[] adapters;
    /** Each rank's node name, for the sending worker of a record. */
    private final Map<String, Integer> rankByName = new HashMap<>();
    /** With no peer (one process): each worker's thread, parked in {@link #read} until {@link #wakeup}. */
    private final java.util.concurrent.atomic.AtomicReferenceArray<Thread> parked;
    /** Set by {@link #close}: a worker of one process parked in {@link #read} (or polling) then fails. */
    private volatile boolean closed;

    /** Adapts the channel's record handler to a dispatch, without allocating per call. */
    private final class Adapter implements RecordHandler {
        Receiver target;
        /** The source of the last record (one ring's records come in a row) and its global worker index. */
        private io.rdmx.channel.RecordSource last;
        private int lastWorker;

        @Override
        public void onRecord(int streamId, ByteBuffer buffer, int offset, int length,
                             io.rdmx.channel.RecordSource source) {
            if (source != last) {
                Integer r = rankByName.get(source.peerName()); // no allocation: names and ranks made once
                int rank = r == null ? -1 : r;
                int w = source.peerWorker();
                if (rank < 0 || w < 0 || w >= cfg.workers()) {
                    throw new IllegalStateException("record from peer '" + source.peerName() + "' worker=" + w
                        + ": not a worker of this shuffle's " + cfg.processes() + " x " + cfg.workers());
                }
                lastWorker = rank * cfg.workers() + w;
                last = source;
            }
            target.onRecord(lastWorker, streamId, buffer, offset, length);
        }
    }

    private RingShuffleTransport(ShuffleConfig cfg, String[] providerOf) {
        this.cfg = cfg;
        this.providerOf = providerOf;
        this.peers = new PeerChannel[cfg.processes()];
        this.adapters = new Adapter[cfg.workers()];
        for (int r = 0; r < cfg.processes(); r++) {
            rankByName.put(cfg.nodeName(r), r);
        }
        this.parked = new java.util.concurrent.atomic.AtomicReferenceArray<>(cfg.workers());
        for (int i = 0; i < adapters.length; i++) {
            adapters[i] = new Adapter();
        }
    }

    /**
     * The provider this rank uses to reach each other rank.
     *
     * @param cfg the configuration
     * @return per rank the provider name, null for this rank
     * @throws RdmxException if a member's host cannot be resolved under {@code auto}
     */
    static String[] choose(ShuffleConfig cfg) throws RdmxException {
        String[] out = new String[cfg.processes()];
        List<Fabric> candidates = null; // what auto may use here: looked up (each provider's availability) once
        for (int r = 0; r < out.length; r++) {
            if (r == cfg.rank()) {
                continue;
            }
            String pinned = cfg.providerOf(r) != null ? cfg.providerOf(r) : cfg.providerOf(cfg.rank());
            if (pinned != null) {
                out[r] = pinned;
                continue;
            }
            if (!cfg.provider().equals(ShuffleConfig.AUTO)) {
                out[r] = cfg.provider();
                continue;
            }
            boolean local = isLocal(cfg.host(r));
            if (candidates == null) {
                candidates = Fabrics.autoCandidates();
            }
            Fabric f = Fabrics.choose(candidates, local, name -> true);
            if (f == null) {
                throw new RdmxException("shuffle provider=auto: no usable provider reaches rank " + r + " ("
                    + cfg.members().get(r) + (local ? ", this host" : ", another host") + "); usable here: "
                    + candidates.stream().map(Fabric::name).toList());
            }
            out[r] = f.name();
        }
        return out;
    }

    static boolean isLocal(String host) throws RdmxException {
        try {
            for (InetAddress a : InetAddress.getAllByName(host)) {
                if (a.isLoopbackAddress() || a.isAnyLocalAddress() || NetworkInterface.getByInetAddress(a) != null) {
                    return true;
                }
            }
            return false;
        } catch (UnknownHostException e) {
            throw new RdmxException("shuffle member host=" + host + " cannot be resolved", e);
        } catch (SocketException e) {
            throw new RdmxException("shuffle member host=" + host + ": cannot list local interfaces", e);
        }
    }

    private String address(String provider, int rank) {
        return nodes.get(provider).fabric().addressOf(cfg.nodeName(rank), cfg.address(rank));
    }

    static RingShuffleTransport open(ShuffleConfig cfg) throws RdmxException {
        RingShuffleTransport t = new RingShuffleTransport(cfg, choose(cfg));
        try {
            t.openEngines();
            t.join();
        } catch (RdmxException | RuntimeException e) {
            t.close();
            throw e;
        }
        return t;
    }

    private void openEngines() throws RdmxException {
        List<ChannelEngine> list = new ArrayList<>();
        for (int r = 0; r < providerOf.length; r++) {
            String p = providerOf[r];
            if (p == null || engines.containsKey(p)) {
                continue;
            }
            NodeOptions.Builder nb = NodeOptions.builder().name(cfg.nodeName(cfg.rank()));
            Fabric f;
            try {
                f = Fabrics.get(p);
            } catch (IllegalArgumentException e) {
                throw new RdmxException("shuffle provider=" + p + " (for rank " + r + "): " + e.getMessage(), e);
            }
            if (f.traits().bindsToHost()) {
                nb.bindAddress(cfg.address(cfg.rank()));
            }
            Node node = f.open(nb.build());
            nodes.put(p, node);
            ChannelEngine engine = ChannelEngine.open(node, channelConfig(cfg, f));
            engines.put(p, engine);
            list.add(engine);
        }
        engineList = list.toArray(new ChannelEngine[0]);
    }

    /**
     * The channel configuration of one provider's engine. The channel's timed flush is off unless
     * {@value ChannelConfig#FLUSH_INTERVAL_PROP} is set: a worker sends what it offered itself (every
     * {@link Worker#poll} that finds nothing, every {@link Worker#await} and {@link Worker#flush}, and at most
     * {@link Worker#RUN_FLUSH_NANOS} apart in {@link Worker#run}; packs of fixed-width rows were never covered by
     * the channel's timer anyway). With the timer on, each engine's network thread woke every half interval
     * (1 ms) while any worker wrote, to scan rings the workers flush themselves: at P=8 W=4, 5M ints per process,
     * that was 3,100-4,000 of a pass's context switches on shm (600-700 without) and about 9,000 of 9,800 on
     * tcp (3,000-3,900 without).
     *
     * @param cfg the shuffle's configuration
     * @param provider the engine's provider, by name
     * @return its channel configuration
     */
    static ChannelConfig channelConfig(ShuffleConfig cfg, String provider) {
        return channelConfig(cfg, Fabrics.get(provider));
    }

    private static ChannelConfig channelConfig(ShuffleConfig cfg, Fabric provider) {
        ChannelConfig.Builder b = ChannelConfig.builder(cfg.workers()).ringCapacity(cfg.bufferSize())
            .batchThreshold(cfg.batchThreshold()).readNotifyThreshold(creditEvery(provider, cfg.bufferSize()));
        if (System.getProperty(ChannelConfig.FLUSH_INTERVAL_PROP) == null) {
            b.flushInterval(Duration.ZERO);
        }
        return b.build();
    }

    /**
     * How often a reader reports what it consumed: on mapped rings (shm, loopback) the credit is one release
     * store in shared memory, so every eighth of the ring (a writer sees space sooner and is back-pressured less:
     * measured at P=4 W=2 on shm, 64 KiB rings, three paired runs, 0.28/0.92/0.38 s against 0.53/1.23/0.64 s
     * with every half); elsewhere a credit is a message, every quarter ring (the channel's default). Every half
     * ring, as before, left tcp writers waiting for space more: pass medians (s) of alternating runs, 5M ints per
     * process, 64 KiB rings, half vs quarter: P=4 W=2 0.85/0.77 vs 0.69/0.68; P=8 W=4 1.76/1.70/1.79/1.46 vs
     * 1.27/1.50/1.58/1.55.
     */
    static int creditEvery(Fabric provider, int bufferSize) {
        return provider.traits().bindsToHost() ? bufferSize / 4 : bufferSize / 8;
    }

    /** Connects to every lower rank (the engine retries while it starts) and accepts every higher rank. */
    private void join() throws RdmxException {
        long deadline = System.nanoTime() + cfg.connectTimeout().toNanos();
        for (int r = 0; r < cfg.rank(); r++) {
            String p = providerOf[r];
            String addr = address(p, r);
            try {
                peers[r] = engines.get(p).connect(addr, Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
            } catch (RdmxTimeoutException e) {
                RdmxTimeoutException t = new RdmxTimeoutException("rank " + cfg.rank() + " could not reach rank " + r
                    + " at " + addr + " over " + p + " within " + cfg.connectTimeout().toSeconds() + " s");
                t.initCause(e);
                throw t;
            }
            log(r, p);
        }
        Map<String, Integer> expected = new LinkedHashMap<>();
        for (int r = cfg.rank() + 1; r < cfg.processes(); r++) {
            expected.merge(providerOf[r], 1, Integer::sum);
        }
        for (Map.Entry<String, Integer> e : expected.entrySet()) {
            ChannelEngine engine = engines.get(e.getKey());
            for (int i = 0; i < e.getValue(); i++) {
                long left = deadline - System.nanoTime();
                PeerChannel p;
                try {
                    p = engine.accept(Duration.ofNanos(Math.max(1, left)));
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new RdmxException("interrupted while joining the shuffle");
                } catch (RdmxTimeoutException te) {
                    RdmxTimeoutException t = new RdmxTimeoutException("rank " + cfg.rank() + ": " + (e.getValue() - i)
                        + " higher rank(s) did not connect over " + e.getKey() + " within "
                        + cfg.connectTimeout().toSeconds() + " s");
                    t.initCause(te);
                    throw t;
                }
                Integer r = rankByName.get(p.name());
                if (r == null) {
                    throw new RdmxException("peer '" + p.name() + "' is not a member of shuffle job '" + cfg.job()
                        + "' (members: " + cfg.members() + ")");
                }
                if (r <= cfg.rank() || peers[r] != null || !e.getKey().equals(providerOf[r])) {
                    throw new RdmxException("unexpected shuffle peer '" + p.name() + "' (rank " + r + ") over "
                        + e.getKey() + " for rank " + cfg.rank());
                }
                peers[r] = p;
                log(r, e.getKey());
            }
        }
        for (int r = 0; r < peers.length; r++) {
            if (r != cfg.rank() && peers[r].workers() != cfg.workers()) {
                throw new RdmxException("rank " + r + " runs " + peers[r].workers() + " workers, this rank "
                    + cfg.workers() + ": SPMD plans need the same parallelism everywhere");
            }
        }
    }

    private void log(int r, String p) {
        LOG.info("shuffle job '{}' rank {}: rank {} ({}) over {}{}", cfg.job(), cfg.rank(), r, cfg.members().get(r),
            p, cfg.provider().equals(ShuffleConfig.AUTO) ? " (auto)" : "");
    }

    @Override
    public String provider(int rank) {
        return providerOf[rank];
    }

    @Override
    public Outbox outbox(int localWorker, int rank, int remoteWorker) {
        ChannelWriter w = peers[rank].writer(localWorker, remoteWorker);
        ChannelEngine engine = engines.get(providerOf[rank]);
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
            public int maxPayload() {
                return w.maxPayload();
            }

            @Override
            public void commit() {
                w.commit();
            }

            @Override
            public void abort() {
                w.abort();
            }

            @Override
            public void flush() {
                if (w.unsent() > 0) {
                    w.flush();
                }
            }

            @Override
            public void cork() {
                w.cork();
            }

            @Override
            public boolean corks() {
                return w.corks();
            }

            @Override
            public void uncork() {
                w.uncork();
            }

            @Override
            public void wakeOnSpace(int worker) {
                w.wakeOnCredit(worker < 0 ? null : engine.reader(worker));
            }
        };
    }

    @Override
    public int poll(int localWorker, Receiver d, int limit) throws RdmxException {
        if (engineList.length == 0) {
            // known before the worker says it waits, so a wakeup after that always finds the thread to unpark;
            // a volatile store, then the look at closed: close() stores closed, then looks at parked, so either
            // this sees closed or close() sees this thread (and unparks it)
            parked.set(localWorker, Thread.currentThread());
            if (closed) {
                throw closedException();
            }
            return 0;
        }
        Adapter a = adapters[localWorker];
        a.target = d;
        int n = 0;
        for (ChannelEngine e : engineList) {
            // reports a lost peer as read does: a worker that only polls learns of it too
            n += e.reader(localWorker).readNow(a, limit - n);
            if (n >= limit) {
                break;
            }
        }
        return n;
    }

    @Override
    public int read(int localWorker, Receiver d, int limit, long timeoutNanos)
        throws RdmxException, InterruptedException {
        int n = poll(localWorker, d, limit);
        if (engineList.length == 0) {
            parkAlone(localWorker, timeoutNanos);
            return 0;
        }
        if (n > 0) {
            return n;
        }
        Adapter a = adapters[localWorker];
        if (engineList.length == 1) {
            return engineList[0].reader(localWorker).read(a, limit, timeoutNanos, TimeUnit.NANOSECONDS);
        }
        // several providers: the others are checked (records and losses) without waiting, then one slice here
        for (int i = 1; i < engineList.length; i++) {
            n = engineList[i].reader(localWorker).read(a, limit, 0, TimeUnit.NANOSECONDS);
            if (n > 0) {
                return n;
            }
        }
        return engineList[0].reader(localWorker).read(a, limit, Math.min(timeoutNanos, MIXED_SLICE_NANOS),
            TimeUnit.NANOSECONDS);
    }

    @Override
    public void park(int localWorker, long timeoutNanos) throws RdmxException, InterruptedException {
        if (engineList.length == 0) {
            parkAlone(localWorker, timeoutNanos);
            return;
        }
        // wakeup() wakes this worker's reader in every engine: sleeping on one of them is enough
        engineList[0].reader(localWorker).park(timeoutNanos, TimeUnit.NANOSECONDS);
    }

    /**
     * One process: only the in-process rings feed the worker, and their writers (or close) unpark it; a permit given
     * before this park makes it return at once.
     */
    private void parkAlone(int localWorker, long timeoutNanos) throws RdmxException, InterruptedException {
        parked.set(localWorker, Thread.currentThread()); // as in poll: before the look at closed
        if (closed) {
            throw closedException();
        }
        LockSupport.parkNanos(this, timeoutNanos);
        if (Thread.interrupted()) {
            throw new InterruptedException("worker " + localWorker + " interrupted while waiting");
        }
        if (closed) {
            throw closedException();
        }
    }

    @Override
    public void wakeup(int localWorker) {
        Thread t = parked.get(localWorker);
        if (t != null) {
            LockSupport.unpark(t);
        }
        for (ChannelEngine e : engineList) {
            e.reader(localWorker).wakeup();
        }
    }

    @Override
    public long networkRecords() {
        long n = 0;
        for (ChannelEngine e : engineList) {
            n += e.metrics().recordsWritten();
        }
        return n;
    }

    private RdmxException closedException() {
        return new RdmxException("the shuffle service of rank " + cfg.rank() + " is closed");
    }

    @Override
    public void close() {
        close(null);
    }

    @Override
    public void close(String reason) {
        closed = true;
        for (int w = 0; w < parked.length(); w++) {
            Thread t = parked.get(w);
            if (t != null) {
                LockSupport.unpark(t); // one process: nothing else wakes a worker parked in read
            }
        }
        for (ChannelEngine e : engines.values()) {
            e.close(reason); // a BYE with the reason: the peers that stay name the lost peer, not only this rank
        }
        for (Node n : nodes.values()) {
            n.close();
        }
    }
}
