package io.rdmx.shuffle;

import io.rdmx.channel.RingBuffer;
import io.rdmx.transport.RdmxException;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The shuffle service of one process: opened once for a parallelism (processes, workers per process) and
 * reused by every query. Workers on all processes run the same plan (SPMD); exchanges route rows between them.
 *
 * <pre>{@code
 * try (ShuffleService svc = ShuffleService.open(ShuffleConfig.builder(rank, 4, 2).provider("auto")
 *         .members(List.of("hostA:7000", "hostA:7001", "hostB:7000", "hostB:7001")).build())) {
 *     Exchange<RowView> byKey = svc.intExchange(1, Routing.byKey());
 *     // in each of the 2 worker threads (the engine's own scheduler):
 *     Worker w = svc.worker(i);
 *     w.consumeInts(byKey, v -> { sum += v; return true; });
 *     while (...) {
 *         if (w.offerInt(byKey, next) == Worker.BACK_PRESSURED) { w.poll(); }
 *         ...
 *     }
 *     while (w.offerFinish(byKey) != Worker.OK) { w.poll(); }
 *     while (!w.done(byKey)) { w.poll(); }
 * }
 * }</pre>
 */
public final class ShuffleService implements AutoCloseable {
    private final ShuffleConfig cfg;
    private final ShuffleTransport transport;
    private final Worker[] workers;
    private final Map<Integer, Exchange<?>> exchanges = new ConcurrentHashMap<>();
    /** The first loss a worker failed of (a peer it needed), for the close to tell the other processes. */
    private final java.util.concurrent.atomic.AtomicReference<String> firstLoss =
        new java.util.concurrent.atomic.AtomicReference<>();
    /** The largest object row: the least largest record over every worker's destinations. */
    private final int maxRowBytes;

    private ShuffleService(ShuffleConfig cfg, ShuffleTransport transport) {
        this.cfg = cfg;
        this.transport = transport;
        int w = cfg.workers();
        RingBuffer[][] local = new RingBuffer[w][w];
        int maxPayload = cfg.bufferSize() / 4 - 8; // as a channel's ring of bufferSize would accept, or less
        for (int s = 0; s < w; s++) {
            for (int d = 0; d < w; d++) {
                local[s][d] = new RingBuffer(ByteBuffer.allocateDirect(cfg.bufferSize()), maxPayload);
            }
        }
        this.workers = new Worker[w];
        int most = Integer.MAX_VALUE;
        for (int i = 0; i < w; i++) {
            workers[i] = new Worker(this, transport, i, local);
            most = Math.min(most, workers[i].largestRecord());
        }
        this.maxRowBytes = most;
        for (Worker wk : workers) {
            wk.limitRows(most);
        }
    }

    /**
     * Joins the service: opens this process's node and connects to every other process (retrying while they
     * start, up to {@link ShuffleConfig#connectTimeout()}).
     *
     * @param cfg the configuration
     * @return the service
     * @throws RdmxException if the service cannot be joined
     */
    public static ShuffleService open(ShuffleConfig cfg) throws RdmxException {
        return build(cfg, RingShuffleTransport.open(cfg));
    }

    /** The service over a joined transport; the transport is closed if the service cannot be built. */
    private static ShuffleService build(ShuffleConfig cfg, ShuffleTransport t) {
        try {
            return new ShuffleService(cfg, t);
        } catch (RuntimeException | Error e) {
            try {
                t.close(); // leaves no node, engine, region or port behind (the peers see this rank leave)
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /**
     * Joins the service over another transport (the benchmarks' sockets baseline); {@link ShuffleConfig#provider}
     * is not used.
     *
     * @param cfg the configuration
     * @param factory opens the transport
     * @return the service
     * @throws RdmxException if the service cannot be joined
     */
    public static ShuffleService open(ShuffleConfig cfg, ShuffleTransport.Factory factory) throws RdmxException {
        return build(cfg, factory.open(cfg));
    }

    /** @return the configuration */
    public ShuffleConfig config() {
        return cfg;
    }

    /**
     * The largest serialized object row, one number for every exchange, destination and process of this service:
     * {@code bufferSize / 4 - 8} bytes (16,376 with the default 64 KiB buffers), the largest record of the
     * in-process rings, which every worker has (to itself), and less than what a ring channel to another
     * process carries on any provider ({@code (bufferSize - readNotifyThreshold) / 2 - 8}: 28,664 on shm and
     * loopback, 24,568 elsewhere). A transport given to {@link #open(ShuffleConfig, ShuffleTransport.Factory)}
     * whose outboxes carry less lowers it to theirs: it is the least largest record over every worker's
     * destinations. {@link Worker#offer} refuses a larger row, whatever its destination, before any copy of it is
     * written.
     *
     * @return bytes
     */
    public int maxRowBytes() {
        return maxRowBytes;
    }

    /**
     * Declares an exchange; every process declares the same ones with the same ids.
     *
     * @param id the id (0..32767), unique in the service
     * @param routing where rows go ({@link Routing#route}, with each row)
     * @param serializer how rows are written (each at most {@link #maxRowBytes()} bytes)
     * @param <T> row type
     * @return the exchange
     */
    public <T> Exchange<T> exchange(int id, Routing<T> routing, RowSerializer<T> serializer) {
        return declare(new Exchange<>(id, routing, serializer, 0, maxRowBytes));
    }

    /**
     * Declares an exchange of fixed-width rows, packed many to a record ({@link Worker#offerRow},
     * {@link Worker#consumeRows}, {@link Worker#consumeBatches}).
     *
     * @param id the id (0..32767), unique in the service
     * @param width bytes per row (1 to {@link ShuffleConfig#packBytes()})
     * @param routing where a row goes, by the key offered with it ({@link Routing#routeKey}): {@link Routing#byKey},
     *                {@link Routing#broadcast}, {@link Routing#gather}, or a routing that overrides
     *                {@link Routing#routeKey}
     * @return the exchange
     * @throws IllegalArgumentException if the routing does not override {@link Routing#routeKey} (a lambda, or
     *                                  {@link Routing#hash}): it routes object rows only, and this exchange would
     *                                  route by the offered key instead
     */
    public Exchange<RowView> fixedExchange(int id, int width, Routing<RowView> routing) {
        if (width < 1 || width > cfg.packBytes()) {
            throw new IllegalArgumentException("exchange id=" + id + ": width=" + width + " out of range [1, packBytes="
                + cfg.packBytes() + "]");
        }
        if (routing != null && !RowKeys.routesKeys(routing)) {
            throw new IllegalArgumentException("exchange id=" + id + " (rows of " + width + " bytes): routing "
                + routing + " defines only route(row), which a fixed-width exchange never calls (its rows are routed"
                + " by the key offered with them, routeKey); use Routing.byKey(), broadcast(), gather(master), or a"
                + " Routing that overrides routeKey");
        }
        return declare(new Exchange<>(id, routing, null, width, width));
    }

    /**
     * @param id the id
     * @param routing where a row goes, by its value
     * @return an exchange of int rows ({@link Worker#offerInt}, {@link Worker#consumeInts})
     */
    public Exchange<RowView> intExchange(int id, Routing<RowView> routing) {
        return fixedExchange(id, 4, routing);
    }

    /**
     * @param id the id
     * @param routing where a row goes, by its value
     * @return an exchange of long rows ({@link Worker#offerLong}, {@link Worker#consumeLongs})
     */
    public Exchange<RowView> longExchange(int id, Routing<RowView> routing) {
        return fixedExchange(id, 8, routing);
    }

    private <T> Exchange<T> declare(Exchange<T> ex) {
        if (exchanges.putIfAbsent(ex.id(), ex) != null) {
            throw new IllegalArgumentException("exchange id=" + ex.id() + " is already declared");
        }
        return ex;
    }

    /**
     * Forgets an exchange so its id can be reused by a later query.
     *
     * @param ex the exchange
     */
    public void release(Exchange<?> ex) {
        exchanges.remove(ex.id(), ex);
    }

    /**
     * @param local a worker index in this process
     * @return its worker (use it from one thread)
     */
    public Worker worker(int local) {
        return workers[local];
    }

    /** @return records (rows and end-of-stream marks) this process sent over the network */
    public long networkRecords() {
        return transport.networkRecords();
    }

    /**
     * @param rank another process
     * @return the provider this process reaches it over (chosen per peer under {@code auto})
     */
    public String provider(int rank) {
        if (rank < 0 || rank >= cfg.processes() || rank == cfg.rank()) {
            throw new IllegalArgumentException("rank=" + rank + " is not another process of [0, "
                + cfg.processes() + ")");
        }
        return transport.provider(rank);
    }

    /** @return the counters now, and the provider chosen for each peer */
    public ShuffleMetrics metrics() {
        java.util.List<String> providers = new java.util.ArrayList<>();
        long rows = 0;
        int gone = 0;
        for (int r = 0; r < cfg.processes(); r++) {
            providers.add(r == cfg.rank() ? null : transport.provider(r));
        }
        for (Worker w : workers) {
            rows += w.rowsSent();
            gone = Math.max(gone, w.ranksGone());
        }
        return new ShuffleMetrics(java.util.Collections.unmodifiableList(providers), networkRecords(), rows,
            blockedSends(), stashedBytes(), gone);
    }

    /** @return offers that found an outgoing buffer full (all workers; read after they stopped) */
    public long blockedSends() {
        long n = 0;
        for (Worker w : workers) {
            n += w.backPressured();
        }
        return n;
    }

    /** @return bytes set aside in the workers' inboxes (read after they stopped) */
    public long stashedBytes() {
        long n = 0;
        for (Worker w : workers) {
            n += w.stashedBytes();
        }
        return n;
    }

    /**
     * A worker failed because a peer it needed is lost (the first such loss is kept).
     *
     * @param worker its global index
     * @param e the loss (names the peer)
     */
    void failed(int worker, io.rdmx.transport.ConnectionClosedException e) {
        if (firstLoss.get() == null) {
            firstLoss.compareAndSet(null, "shuffle rank " + cfg.rank() + " ('" + cfg.nodeName(cfg.rank())
                + "') closed after its worker " + worker + " failed: " + e.getMessage());
        }
    }

    /**
     * Leaves the service: closes this process's channel engines and nodes. If a worker of this process failed
     * because a peer was lost, every other process is told so: their workers that still wait on this one fail
     * naming that peer ({@code peer '<job>-r2' closed its channel engine because shuffle rank 2 ('<job>-r2')
     * closed after its worker 2 failed: ... '<job>-r1' ...}), not only this process.
     */
    @Override
    public void close() {
        transport.close(firstLoss.get());
    }
}
