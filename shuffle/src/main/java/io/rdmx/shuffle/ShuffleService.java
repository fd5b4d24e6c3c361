package io.rdmx.shuffle;

import io.rdmx.channel.RingBuffer;
import io.rdmx.transport.RdmxException;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The shuffle service of one process: opened once for a parallelism (processes, workers per process) and
 * reused by every query. Workers on all processes run the same plan (SPMD); exchanges route rows between them.
 *
 * <pre>{@code
 * try (ShuffleService svc = ShuffleService.open(ShuffleConfig.builder(rank, 4, 2).build())) {
 *     Exchange<Integer> byKey = svc.exchange(1, Routing.hash(x -> x), RowSerializer.INT);
 *     // in each of the 2 worker threads:
 *     Worker w = svc.worker(i);
 *     w.consume(byKey, row -> ...);
 *     w.run(() -> sendSomeRowsOrFinish(w), () -> w.done(byKey));
 * }
 * }</pre>
 */
public final class ShuffleService implements AutoCloseable {
    private final ShuffleConfig cfg;
    private final ShuffleTransport transport;
    private final Worker[] workers;
    private final Map<Integer, Exchange<?>> exchanges = new ConcurrentHashMap<>();
    private final LongAdder blocked = new LongAdder();
    private final LongAdder stashed = new LongAdder();

    private ShuffleService(ShuffleConfig cfg, ShuffleTransport transport) {
        this.cfg = cfg;
        this.transport = transport;
        int w = cfg.workers();
        RingBuffer[][] local = new RingBuffer[w][w];
        int maxPayload = cfg.bufferSize() / 4 - 8;
        for (int s = 0; s < w; s++) {
            for (int d = 0; d < w; d++) {
                local[s][d] = new RingBuffer(ByteBuffer.allocateDirect(cfg.bufferSize()), maxPayload);
            }
        }
        this.workers = new Worker[w];
        for (int i = 0; i < w; i++) {
            workers[i] = new Worker(this, transport, i, local);
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
        ShuffleTransport t = cfg.transport() == ShuffleConfig.Transport.SOCKETS ? NioShuffleTransport.open(cfg)
            : RingShuffleTransport.open(cfg);
        return new ShuffleService(cfg, t);
    }

    /** @return the configuration */
    public ShuffleConfig config() {
        return cfg;
    }

    /**
     * Declares an exchange; every process declares the same ones with the same ids.
     *
     * @param id the id (0..32767), unique in the service
     * @param routing where rows go
     * @param serializer how rows are written
     * @param <T> row type
     * @return the exchange
     */
    public <T> Exchange<T> exchange(int id, Routing<T> routing, RowSerializer<T> serializer) {
        Exchange<T> ex = new Exchange<>(id, routing, serializer);
        if (exchanges.putIfAbsent(id, ex) != null) {
            throw new IllegalArgumentException("exchange id=" + id + " is already declared");
        }
        return ex;
    }

    Exchange<?> declared(int id) {
        return exchanges.get(id);
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

    /** @return times a sender found its buffer full */
    public long blockedSends() {
        return blocked.sum();
    }

    /** @return bytes set aside by workers while blocked or before their consumer registered */
    public long stashedBytes() {
        return stashed.sum();
    }

    void metricBlocked() {
        blocked.increment();
    }

    void metricStashed(int n) {
        stashed.add(n);
    }

    @Override
    public void close() {
        transport.close();
    }
}
