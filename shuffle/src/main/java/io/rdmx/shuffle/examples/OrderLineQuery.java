package io.rdmx.shuffle.examples;

import io.rdmx.shuffle.Exchange;
import io.rdmx.shuffle.Routing;
import io.rdmx.shuffle.RowSerializer;
import io.rdmx.shuffle.ShuffleService;
import io.rdmx.shuffle.Worker;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;

/**
 * An SPMD query over generated TPC-C-like {@code orders} and {@code order_line} rows, the shape of the DAIS 2016
 * paper's Query 1:
 *
 * <pre>
 *   SELECT ol_number, COUNT(*), SUM(ol_quantity), SUM(ol_amount)
 *   FROM orders JOIN order_line ON (o_w_id, o_d_id, o_id) = (ol_w_id, ol_d_id, ol_o_id)
 *   WHERE o_entry_d &gt;= cutoff
 *   GROUP BY ol_number
 * </pre>
 *
 * Plan on every worker: scan its part of both tables, hash both to workers by the join key (two exchanges),
 * join them with a symmetric hash join (push-based: neither side waits for the other), aggregate partially,
 * hash the partial aggregates by group (third exchange), merge, and gather the groups to worker 0 (fourth).
 * {@link #reference} computes the same result in one process, without any shuffle.
 */
public final class OrderLineQuery {
    /** orders row: w, d, o, c, carrier, ol_cnt, entry_d. */
    static final int O_W = 0;
    static final int O_D = 1;
    static final int O_ID = 2;
    static final int O_OL_CNT = 5;
    static final int O_ENTRY = 6;
    /** order_line row: w, d, o, number, i_id, quantity, amount (cents), delivery_d. */
    static final int OL_NUMBER = 3;
    static final int OL_QTY = 5;
    static final int OL_AMOUNT = 6;

    /** The data set: warehouses, orders per district, and the filter's cutoff day. */
    public record Scale(int warehouses, int ordersPerDistrict, int cutoffDay) {
    }

    /** One result group: {@code ol_number -> count, sum quantity, sum amount}. */
    public record Group(long count, long quantity, long amount) {
        Group plus(Group o) {
            return new Group(count + o.count, quantity + o.quantity, amount + o.amount);
        }
    }

    private OrderLineQuery() {
    }

    private static long key(long w, long d, long o) {
        return (w << 40) | (d << 32) | o;
    }

    /** Generates the orders of one district and hands each order and its lines to the consumers. */
    static void district(int w, int d, Scale s, Consumer<long[]> orders, Consumer<long[]> lines) {
        for (int o = 1; o <= s.ordersPerDistrict(); o++) {
            SplittableRandom r = new SplittableRandom(key(w, d, o));
            int olCnt = 5 + r.nextInt(11);
            long[] order = {w, d, o, 1 + r.nextInt(3000), 1 + r.nextInt(10), olCnt, r.nextInt(100)};
            orders.accept(order);
            for (int n = 1; n <= olCnt; n++) {
                lines.accept(new long[] {w, d, o, n, 1 + r.nextInt(100_000), 1 + r.nextInt(10), r.nextInt(10_000),
                    r.nextInt(100)});
            }
        }
    }

    /**
     * The query computed in one process, for verification.
     *
     * @param s the data set
     * @return groups by ol_number
     */
    public static Map<Long, Group> reference(Scale s) {
        Map<Long, Group> out = new TreeMap<>();
        for (int w = 1; w <= s.warehouses(); w++) {
            for (int d = 1; d <= 10; d++) {
                long[][] current = new long[1][];
                district(w, d, s, o -> current[0] = o, l -> {
                    if (current[0][O_ENTRY] >= s.cutoffDay()) {
                        out.merge(l[OL_NUMBER], new Group(1, l[OL_QTY], l[OL_AMOUNT]), Group::plus);
                    }
                });
            }
        }
        return out;
    }

    /**
     * Runs this process's part (one thread per worker).
     *
     * @param svc the shuffle service
     * @param s the data set (the same on every process)
     * @param firstExchange id of the first of the four exchanges
     * @return the result on the process holding worker 0, else an empty map
     * @throws Exception if a worker fails
     */
    public static Map<Long, Group> run(ShuffleService svc, Scale s, int firstExchange) throws Exception {
        Routing<long[]> byOrder = Routing.hash(r -> key(r[0], r[1], r[2]));
        Exchange<long[]> ordersEx = svc.exchange(firstExchange, byOrder, RowSerializer.LONGS);
        Exchange<long[]> linesEx = svc.exchange(firstExchange + 1, byOrder, RowSerializer.LONGS);
        Exchange<long[]> partialEx = svc.exchange(firstExchange + 2, Routing.hash(r -> r[0]), RowSerializer.LONGS);
        Exchange<long[]> gatherEx = svc.exchange(firstExchange + 3, Routing.gather(0), RowSerializer.LONGS);
        int workers = svc.config().workers();
        ExecutorService ex = Executors.newFixedThreadPool(workers);
        try {
            List<Future<Map<Long, Group>>> fs = new ArrayList<>();
            for (int i = 0; i < workers; i++) {
                Worker w = svc.worker(i);
                fs.add(ex.submit(() -> worker(svc, w, s, ordersEx, linesEx, partialEx, gatherEx)));
            }
            Map<Long, Group> result = new TreeMap<>();
            for (Future<Map<Long, Group>> f : fs) {
                result.putAll(f.get());
            }
            return result;
        } finally {
            ex.shutdownNow();
            for (Exchange<?> e : List.of(ordersEx, linesEx, partialEx, gatherEx)) {
                svc.release(e);
            }
        }
    }

    private static Map<Long, Group> worker(ShuffleService svc, Worker w, Scale s, Exchange<long[]> ordersEx,
                                           Exchange<long[]> linesEx, Exchange<long[]> partialEx,
                                           Exchange<long[]> gatherEx) throws Exception {
        int procs = svc.config().processes();
        int rank = svc.config().rank();
        int workers = svc.config().workers();
        // symmetric hash join
        Map<Long, long[]> orders = new HashMap<>();
        Map<Long, List<long[]>> waiting = new HashMap<>();
        Map<Long, Group> partial = new HashMap<>();
        Consumer<long[]> joined = l -> partial.merge(l[OL_NUMBER], new Group(1, l[OL_QTY], l[OL_AMOUNT]),
            Group::plus);
        w.consume(ordersEx, o -> {
            long k = key(o[O_W], o[O_D], o[O_ID]);
            orders.put(k, o);
            List<long[]> pend = waiting.remove(k);
            if (pend != null) {
                pend.forEach(joined);
            }
        });
        w.consume(linesEx, l -> {
            long k = key(l[O_W], l[O_D], l[O_ID]);
            if (orders.containsKey(k)) {
                joined.accept(l);
            } else {
                waiting.computeIfAbsent(k, x -> new ArrayList<>()).add(l);
            }
        });
        Map<Long, Group> merged = new HashMap<>();
        w.consume(partialEx, g -> merged.merge(g[0], new Group(g[1], g[2], g[3]), Group::plus));
        Map<Long, Group> result = new TreeMap<>();
        w.consume(gatherEx, g -> result.put(g[0], new Group(g[1], g[2], g[3])));

        // the scan: this process's warehouses, this worker's districts
        List<int[]> parts = new ArrayList<>();
        for (int wh = 1; wh <= s.warehouses(); wh++) {
            if (wh % procs == rank) {
                for (int d = 1; d <= 10; d++) {
                    if (d % workers == w.localIndex()) {
                        parts.add(new int[] {wh, d});
                    }
                }
            }
        }
        int[] next = {0};
        int[] phase = {0};
        w.run(() -> {
            if (next[0] < parts.size()) {
                int[] p = parts.get(next[0]++);
                district(p[0], p[1], s, o -> {
                    if (o[O_ENTRY] >= s.cutoffDay()) {
                        sendUnchecked(w, ordersEx, o);
                    }
                }, l -> sendUnchecked(w, linesEx, l));
                return true;
            }
            switch (phase[0]) {
                case 0:
                    w.finish(ordersEx);
                    w.finish(linesEx);
                    phase[0] = 1;
                    return true;
                case 1:
                    if (!w.done(ordersEx) || !w.done(linesEx)) {
                        return false;
                    }
                    for (Map.Entry<Long, Group> e : partial.entrySet()) {
                        w.send(partialEx, new long[] {e.getKey(), e.getValue().count(), e.getValue().quantity(),
                            e.getValue().amount()});
                    }
                    w.finish(partialEx);
                    phase[0] = 2;
                    return true;
                case 2:
                    if (!w.done(partialEx)) {
                        return false;
                    }
                    for (Map.Entry<Long, Group> e : merged.entrySet()) {
                        w.send(gatherEx, new long[] {e.getKey(), e.getValue().count(), e.getValue().quantity(),
                            e.getValue().amount()});
                    }
                    w.finish(gatherEx);
                    phase[0] = 3;
                    return true;
                default:
                    return false;
            }
        }, () -> phase[0] == 3 && w.done(gatherEx));
        for (Exchange<?> e : List.of(ordersEx, linesEx, partialEx, gatherEx)) {
            w.release(e);
        }
        return result;
    }

    private static void sendUnchecked(Worker w, Exchange<long[]> ex, long[] row) {
        try {
            w.send(ex, row);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
