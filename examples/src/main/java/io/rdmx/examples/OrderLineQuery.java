package io.rdmx.examples;

import io.rdmx.shuffle.Exchange;
import io.rdmx.shuffle.Handlers;
import io.rdmx.shuffle.Routing;
import io.rdmx.shuffle.RowView;
import io.rdmx.shuffle.ShuffleService;
import io.rdmx.shuffle.Worker;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * An SPMD query over generated TPC-C-like {@code orders} and {@code order_line} rows, the shape of the DAIS 2016
 * paper's Query 1, on the shuffle's non-blocking API (fixed-width rows, offers with return codes, the
 * engine's own scheduling loop):
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
    /** An order row on the wire: its key (8 bytes). */
    static final int ORDER_WIDTH = 8;
    /** An order line on the wire: key, ol_number, quantity, amount (8 bytes each). */
    static final int LINE_WIDTH = 32;
    /** A group on the wire: ol_number, count, quantity, amount. */
    static final int GROUP_WIDTH = 32;

    /** The data set: warehouses, orders per district, and the filter's cutoff day. */
    public record Scale(int warehouses, int ordersPerDistrict, int cutoffDay) {
    }

    /** One result group: {@code ol_number -> count, sum quantity, sum amount}. */
    public record Group(long count, long quantity, long amount) {
        Group plus(Group o) {
            return new Group(count + o.count, quantity + o.quantity, amount + o.amount);
        }
    }

    /** Receives generated rows. */
    interface Rows {
        void order(long key, int entryDay);

        void line(long key, int number, int quantity, int amount);
    }

    private OrderLineQuery() {
    }

    static long key(long w, long d, long o) {
        return (w << 40) | (d << 32) | o;
    }

    /** Generates the orders of one district, each order before its lines. */
    static void district(int w, int d, Scale s, Rows out) {
        for (int o = 1; o <= s.ordersPerDistrict(); o++) {
            SplittableRandom r = new SplittableRandom(key(w, d, o));
            int olCnt = 5 + r.nextInt(11);
            r.nextInt(3000); // o_c_id
            r.nextInt(10); // o_carrier_id
            int entry = r.nextInt(100);
            long k = key(w, d, o);
            out.order(k, entry);
            for (int n = 1; n <= olCnt; n++) {
                r.nextInt(100_000); // ol_i_id
                int qty = 1 + r.nextInt(10);
                int amount = r.nextInt(10_000);
                r.nextInt(100); // ol_delivery_d
                out.line(k, n, qty, amount);
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
                boolean[] current = {false};
                district(w, d, s, new Rows() {
                    @Override
                    public void order(long key, int entryDay) {
                        current[0] = entryDay >= s.cutoffDay();
                    }

                    @Override
                    public void line(long key, int number, int quantity, int amount) {
                        if (current[0]) {
                            out.merge((long) number, new Group(1, quantity, amount), Group::plus);
                        }
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
        Exchange<RowView> orders = svc.fixedExchange(firstExchange, ORDER_WIDTH, Routing.byKey());
        Exchange<RowView> lines = svc.fixedExchange(firstExchange + 1, LINE_WIDTH, Routing.byKey());
        Exchange<RowView> partials = svc.fixedExchange(firstExchange + 2, GROUP_WIDTH, Routing.byKey());
        Exchange<RowView> gather = svc.fixedExchange(firstExchange + 3, GROUP_WIDTH, Routing.gather(0));
        int workers = svc.config().workers();
        ExecutorService ex = Executors.newFixedThreadPool(workers);
        try {
            List<Future<Map<Long, Group>>> fs = new ArrayList<>();
            for (int i = 0; i < workers; i++) {
                Part p = new Part(svc, svc.worker(i), s, orders, lines, partials, gather);
                fs.add(ex.submit(p::run));
            }
            Map<Long, Group> result = new TreeMap<>();
            for (Future<Map<Long, Group>> f : fs) {
                try {
                    result.putAll(f.get(300, TimeUnit.SECONDS));
                } catch (ExecutionException e) {
                    throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
                }
            }
            return result;
        } finally {
            ex.shutdownNow();
            for (Exchange<?> e : List.of(orders, lines, partials, gather)) {
                svc.release(e);
            }
        }
    }

    /** The operators of one worker: an explicit state per pipeline phase, driven by the engine's own loop. */
    private static final class Part implements Rows {
        private enum Phase { SCAN, END_SCAN, JOIN, SEND_PARTIALS, END_PARTIALS, MERGE, SEND_GROUPS, END_GROUPS, DONE }

        private final Worker w;
        private final Scale s;
        private final Exchange<RowView> orders;
        private final Exchange<RowView> lines;
        private final Exchange<RowView> partials;
        private final Exchange<RowView> gather;
        private final List<int[]> districts = new ArrayList<>();
        private int nextDistrict;
        /** Rows of the current district not offered yet (generation runs ahead of back-pressure). */
        private final List<long[]> outgoing = new ArrayList<>();
        private int outgoingAt;
        private Phase phase = Phase.SCAN;

        /** Symmetric hash join state. */
        private final Set<Long> joinedOrders = new HashSet<>();
        private final Map<Long, List<long[]>> waitingLines = new HashMap<>();
        private final Map<Long, Group> partial = new HashMap<>();
        private final Map<Long, Group> merged = new HashMap<>();
        private final Map<Long, Group> result = new TreeMap<>();
        private Iterator<Map.Entry<Long, Group>> sending;
        private Map.Entry<Long, Group> current;
        private final long[] row = new long[4];
        private final Handlers.RowWriter writeKey = (buf, at) -> buf.putLong(at, row[0]);
        private final Handlers.RowWriter writeRow = (buf, at) -> {
            for (int i = 0; i < 4; i++) {
                buf.putLong(at + 8 * i, row[i]);
            }
        };

        Part(ShuffleService svc, Worker w, Scale s, Exchange<RowView> orders, Exchange<RowView> lines,
             Exchange<RowView> partials, Exchange<RowView> gather) {
            this.w = w;
            this.s = s;
            this.orders = orders;
            this.lines = lines;
            this.partials = partials;
            this.gather = gather;
            int procs = svc.config().processes();
            int rank = svc.config().rank();
            int workers = svc.config().workers();
            for (int wh = 1; wh <= s.warehouses(); wh++) {
                for (int d = 1; wh % procs == rank && d <= 10; d++) {
                    if (d % workers == w.localIndex()) {
                        districts.add(new int[] {wh, d});
                    }
                }
            }
            w.consumeRows(orders, this::onOrder);
            w.consumeRows(lines, this::onLine);
            w.consumeRows(partials, g -> {
                merged.merge(g.getLong(0), new Group(g.getLong(8), g.getLong(16), g.getLong(24)), Group::plus);
                return true;
            });
            w.consumeRows(gather, g -> {
                result.put(g.getLong(0), new Group(g.getLong(8), g.getLong(16), g.getLong(24)));
                return true;
            });
        }

        @Override
        public void order(long key, int entryDay) {
            if (entryDay >= s.cutoffDay()) {
                outgoing.add(new long[] {-1, key});
            }
        }

        @Override
        public void line(long key, int number, int quantity, int amount) {
            outgoing.add(new long[] {key, number, quantity, amount});
        }

        private boolean onOrder(RowView o) {
            long k = o.getLong(0);
            joinedOrders.add(k);
            List<long[]> pend = waitingLines.remove(k);
            if (pend != null) {
                for (long[] l : pend) {
                    joined(l[1], l[2], l[3]);
                }
            }
            return true;
        }

        private boolean onLine(RowView l) {
            long k = l.getLong(0);
            if (joinedOrders.contains(k)) {
                joined(l.getLong(8), l.getLong(16), l.getLong(24));
            } else {
                waitingLines.computeIfAbsent(k, x -> new ArrayList<>())
                    .add(new long[] {k, l.getLong(8), l.getLong(16), l.getLong(24)});
            }
            return true;
        }

        private void joined(long number, long qty, long amount) {
            partial.merge(number, new Group(1, qty, amount), Group::plus);
        }

        /** Offers the generated rows in order; false when back-pressured (the rest waits for the next step). */
        private boolean offerOutgoing() {
            while (outgoingAt < outgoing.size()) {
                long[] r = outgoing.get(outgoingAt);
                int rc;
                if (r[0] == -1) {
                    row[0] = r[1];
                    rc = w.offerRow(orders, r[1], writeKey);
                } else {
                    System.arraycopy(r, 0, row, 0, 4);
                    rc = w.offerRow(lines, r[0], writeRow);
                }
                if (rc != Worker.OK) {
                    return false;
                }
                outgoingAt++;
            }
            outgoing.clear();
            outgoingAt = 0;
            return true;
        }

        /** Offers the groups of a map; false when back-pressured. */
        private boolean offerGroups(Map<Long, Group> groups, Exchange<RowView> ex) {
            if (sending == null) {
                sending = groups.entrySet().iterator();
            }
            while (current != null || sending.hasNext()) {
                if (current == null) {
                    current = sending.next();
                }
                row[0] = current.getKey();
                row[1] = current.getValue().count();
                row[2] = current.getValue().quantity();
                row[3] = current.getValue().amount();
                if (w.offerRow(ex, row[0], writeRow) != Worker.OK) {
                    return false;
                }
                current = null;
            }
            sending = null;
            return true;
        }

        /** One step of this worker's operators; true if it did something. */
        private boolean step() {
            switch (phase) {
                case SCAN:
                    if (!offerOutgoing()) {
                        return false;
                    }
                    if (nextDistrict < districts.size()) {
                        int[] p = districts.get(nextDistrict++);
                        district(p[0], p[1], s, this);
                    } else {
                        phase = Phase.END_SCAN;
                    }
                    return true;
                case END_SCAN:
                    if (w.offerFinish(orders) != Worker.OK || w.offerFinish(lines) != Worker.OK) {
                        return false;
                    }
                    phase = Phase.JOIN;
                    return true;
                case JOIN:
                    if (!w.done(orders) || !w.done(lines)) {
                        return false;
                    }
                    phase = Phase.SEND_PARTIALS;
                    return true;
                case SEND_PARTIALS:
                    if (!offerGroups(partial, partials)) {
                        return false;
                    }
                    phase = Phase.END_PARTIALS;
                    return true;
                case END_PARTIALS:
                    if (w.offerFinish(partials) != Worker.OK) {
                        return false;
                    }
                    phase = Phase.MERGE;
                    return true;
                case MERGE:
                    if (!w.done(partials)) {
                        return false;
                    }
                    phase = Phase.SEND_GROUPS;
                    return true;
                case SEND_GROUPS:
                    if (!offerGroups(merged, gather)) {
                        return false;
                    }
                    phase = Phase.END_GROUPS;
                    return true;
                case END_GROUPS:
                    if (w.offerFinish(gather) != Worker.OK) {
                        return false;
                    }
                    phase = Phase.DONE;
                    return true;
                default:
                    return false;
            }
        }

        /** The engine's loop: poll, step, and wait when neither did anything. */
        Map<Long, Group> run() throws Exception {
            long idleSince = System.nanoTime();
            while (phase != Phase.DONE || !w.done(gather)) {
                int polled = w.poll();
                boolean stepped = step();
                if (w.failure() != null) {
                    throw w.failure();
                }
                if (polled > 0 || stepped || w.await(100, TimeUnit.MILLISECONDS) > 0) {
                    idleSince = System.nanoTime();
                } else if (System.nanoTime() - idleSince > TimeUnit.SECONDS.toNanos(60)) {
                    throw new IllegalStateException("worker " + w.globalIndex() + " made no progress in phase "
                        + phase + " for 60 s");
                }
            }
            for (Exchange<?> e : List.of(orders, lines, partials, gather)) {
                w.release(e);
            }
            return result;
        }
    }
}
