package io.rdmx.bench.queries;

import io.rdmx.bench.queries.Tpcc.Tables;
import io.rdmx.bench.queries.TpccQueries.Q1Row;
import io.rdmx.bench.queries.TpccQueries.Q3Row;
import io.rdmx.shuffle.Exchange;
import io.rdmx.shuffle.Handlers;
import io.rdmx.shuffle.Routing;
import io.rdmx.shuffle.RowView;
import io.rdmx.shuffle.ShuffleService;
import io.rdmx.shuffle.Worker;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.collections.LongArrayList;
import org.agrona.collections.LongHashSet;

/**
 * The three queries as SPMD plans: every worker runs the same plan over the rows it owns, with the shuffle's
 * non-blocking API ({@link Worker#offerRow}, {@link Worker#offerLong}, flyweight row handlers, end-of-stream per
 * exchange) under the worker's own loop ({@link Worker#run}); fixed-width rows, primitive hash tables
 * (Agrona's), nothing allocated per row. Worker 0 gathers the answer and renders it like
 * {@link TpccQueries#render}, so the two can be compared as text.
 *
 * <ul>
 *   <li>Q1: customers of state 'A%' (keys) and orders entered after 2013-07-01 are hashed by customer key and
 *       joined (build customers, probe orders; orders that arrive first wait); the joined orders, every
 *       {@code new_order} key and every {@code order_line} (key, amount) are hashed by order key, where the
 *       three-way join and the group-by (its key is the join key) meet; groups over 80,000.00 go to worker 0,
 *       which orders them. Three shuffles, one of them every order line.</li>
 *   <li>Q2: order lines delivered in June or July (item id, amount) and every item (id, first char of
 *       {@code i_data}) are hashed by item id and joined; each worker's two partial sums go to worker 0.</li>
 *   <li>Q3: each worker aggregates its delivered order lines by {@code ol_number}; the partial aggregates are
 *       hashed by {@code ol_number}, merged, and gathered to worker 0, which orders them.</li>
 * </ul>
 *
 * An instance holds one query's exchanges in one process; {@link #run} is called by each of its workers.
 */
public final class QueryPlans {
    private static final int STEP_ROWS = 4096;
    private static final int EXCHANGES_PER_QUERY = 6;

    private final int query;
    private final Exchange<?>[] ex = new Exchange<?>[EXCHANGES_PER_QUERY];

    /**
     * Declares a query's exchanges in this process (every process declares the same ones).
     *
     * @param svc the shuffle service
     * @param query 1, 2 or 3
     * @param run which run of the query this is (exchange ids differ between runs)
     */
    public QueryPlans(ShuffleService svc, int query, int run) {
        this.query = query;
        int base = 100 + (run * 3 + query - 1) * EXCHANGES_PER_QUERY;
        if (base + EXCHANGES_PER_QUERY > Exchange.MAX_ID) {
            throw new IllegalArgumentException("run=" + run + " needs exchange ids past " + Exchange.MAX_ID);
        }
        Routing<RowView> byKey = Routing.byKey();
        switch (query) {
            case 1:
                ex[0] = svc.longExchange(base, byKey);                  // customer key
                ex[1] = svc.fixedExchange(base + 1, 24, byKey);        // order: customer key, order key, entry
                ex[2] = svc.fixedExchange(base + 2, 16, byKey);        // joined order: order key, entry
                ex[3] = svc.longExchange(base + 3, byKey);              // new_order key
                ex[4] = svc.fixedExchange(base + 4, 16, byKey);        // order line: order key, amount
                ex[5] = svc.fixedExchange(base + 5, 24, Routing.gather(0)); // group: order key, entry, revenue
                break;
            case 2:
                ex[0] = svc.fixedExchange(base, 16, byKey);            // order line: item id, amount
                ex[1] = svc.fixedExchange(base + 1, 16, byKey);        // item: id, first char of i_data
                ex[2] = svc.fixedExchange(base + 2, 16, Routing.gather(0)); // partial sums: promo, total
                break;
            case 3:
                ex[0] = svc.fixedExchange(base, 32, byKey);            // partial group: number, count, qty, amount
                ex[1] = svc.fixedExchange(base + 1, 32, Routing.gather(0));
                break;
            default:
                throw new IllegalArgumentException("query=" + query + " (the paper has queries 1, 2 and 3)");
        }
    }

    /** Releases the exchanges in this process (after every worker returned from {@link #run}). */
    public void release(ShuffleService svc) {
        for (Exchange<?> e : ex) {
            if (e != null) {
                svc.release(e);
            }
        }
    }

    /**
     * Runs this worker's part of the plan.
     *
     * @param w the worker
     * @param t the rows it owns
     * @return the rendered answer on worker 0, else null
     * @throws Exception if a peer is lost or the plan stalls past the idle timeout
     */
    public String run(Worker w, Tables t) throws Exception {
        try {
            switch (query) {
                case 1:
                    return new Q1(w, t).run();
                case 2:
                    return new Q2(w, t).run();
                default:
                    return new Q3(w, t).run();
            }
        } finally {
            for (Exchange<?> e : ex) {
                if (e != null) {
                    w.release(e);
                }
            }
        }
    }

    static long key(int w, int d, int id) {
        return ((long) w << 20) | ((long) d << 14) | id;
    }

    static int keyW(long k) {
        return (int) (k >>> 20);
    }

    static int keyD(long k) {
        return (int) (k >>> 14) & 0x3F;
    }

    static int keyId(long k) {
        return (int) k & 0x3FFF;
    }

    private static int check(Worker w, int rc) throws Exception {
        if (rc == Worker.CLOSED) {
            throw w.failure();
        }
        return rc;
    }

    /** One local table fed into exchanges: rows offered a few per step, a back-pressured row offered again. */
    private abstract static class Feed {
        final Worker w;
        final int rows;
        final Exchange<?>[] ends;
        int next;
        int ended;

        Feed(Worker w, int rows, Exchange<?>... ends) {
            this.w = w;
            this.rows = rows;
            this.ends = ends;
        }

        /** @return {@link Worker#OK} (also for a row filtered out) or {@link Worker#BACK_PRESSURED} */
        abstract int offer(int row) throws Exception;

        boolean done() {
            return ended == ends.length;
        }

        /** @return false while end-of-stream must wait (rows of this stream are still set aside) */
        boolean readyToEnd() {
            return true;
        }

        /** @return true if it made progress */
        boolean step() throws Exception {
            int start = next;
            int stop = Math.min(rows, next + STEP_ROWS);
            while (next < stop) {
                if (check(w, offer(next)) != Worker.OK) {
                    return next > start;
                }
                next++;
            }
            if (next < rows) {
                return true;
            }
            boolean progressed = next > start;
            while (ended < ends.length && readyToEnd()) {
                if (check(w, w.offerFinish(ends[ended])) != Worker.OK) {
                    return progressed;
                }
                ended++;
                progressed = true;
            }
            return progressed;
        }
    }

    /** Runs feeds one after another; the worker loop ends when {@code finished} holds. */
    private static boolean stepAll(List<Feed> feeds) throws Exception {
        for (Feed f : feeds) {
            if (!f.done()) {
                return f.step();
            }
        }
        return false;
    }

    private final class Q1 {
        final Worker w;
        final Tables t;
        final LongHashSet customers = new LongHashSet();
        final LongArrayList waitingOrders = new LongArrayList(); // customer key, order key, entry
        final Long2LongHashMap entry = new Long2LongHashMap(Long.MIN_VALUE);
        final LongHashSet newOrders = new LongHashSet();
        final Long2LongHashMap revenue = new Long2LongHashMap(0);
        final List<Feed> feeds = new ArrayList<>();
        final List<Q1Row> answer = new ArrayList<>();
        final LongArrayList pending = new LongArrayList(); // joined orders set aside: order key, entry
        int pendingAt;
        final long[] fwd = new long[2];
        final Handlers.RowWriter fwdWriter = (b, at) -> put(b, at, fwd);
        long[] groups;
        boolean joinedFeedAdded;
        boolean groupsFeedAdded;

        Q1(Worker w, Tables t) {
            this.w = w;
            this.t = t;
        }

        String run() throws Exception {
            w.consumeLongs(ex[0], k -> customers.add(k) || true);
            w.consumeRows(ex[1], r -> probe(r.getLong(0), r.getLong(8), r.getLong(16)));
            w.consumeRows(ex[2], r -> {
                entry.put(r.getLong(0), r.getLong(8));
                return true;
            });
            w.consumeLongs(ex[3], k -> newOrders.add(k) || true);
            w.consumeRows(ex[4], r -> {
                long k = r.getLong(0);
                revenue.put(k, revenue.get(k) + r.getLong(8));
                return true;
            });
            if (w.globalIndex() == 0) {
                w.consumeRows(ex[5], r -> answer.add(new Q1Row(keyW(r.getLong(0)), keyD(r.getLong(0)),
                    keyId(r.getLong(0)), r.getLong(8), r.getLong(16))));
            }
            feeds.add(new Feed(w, t.cId.size(), ex[0]) {
                @Override
                int offer(int i) {
                    if (!TpccQueries.stateStartsWithA(t.cState.get(i))) {
                        return Worker.OK;
                    }
                    return w.offerLong(ex[0], key(t.cW.get(i), t.cD.get(i), t.cId.get(i)));
                }
            });
            feeds.add(new Feed(w, t.oId.size(), ex[1]) {
                final long[] row = new long[3];
                final Handlers.RowWriter writer = (b, at) -> put(b, at, row);

                @Override
                int offer(int i) {
                    if (t.oEntry.get(i) <= TpccQueries.Q1_ENTRY_AFTER) {
                        return Worker.OK;
                    }
                    row[0] = key(t.oW.get(i), t.oD.get(i), t.oCId.get(i));
                    row[1] = key(t.oW.get(i), t.oD.get(i), t.oId.get(i));
                    row[2] = t.oEntry.get(i);
                    return w.offerRow(ex[1], row[0], writer);
                }
            });
            feeds.add(new Feed(w, t.noO.size(), ex[3]) {
                @Override
                int offer(int i) {
                    return w.offerLong(ex[3], key(t.noW.get(i), t.noD.get(i), t.noO.get(i)));
                }
            });
            feeds.add(new Feed(w, t.olO.size(), ex[4]) {
                final long[] row = new long[2];
                final Handlers.RowWriter writer = (b, at) -> put(b, at, row);

                @Override
                int offer(int i) {
                    row[0] = key(t.olW.get(i), t.olD.get(i), t.olO.get(i));
                    row[1] = t.olAmount.get(i);
                    return w.offerRow(ex[4], row[0], writer);
                }
            });
            w.run(this::step, this::finished);
            if (w.globalIndex() != 0) {
                return null;
            }
            answer.sort(TpccQueries.Q1_ORDER);
            return TpccQueries.renderQ1(answer);
        }

        /** Joins an order with the customers; false (offered again later) when the next shuffle pushes back. */
        private boolean probe(long customer, long order, long entered) {
            if (!w.done(ex[0])) {
                if (!customers.contains(customer)) {
                    waitingOrders.addLong(customer);
                    waitingOrders.addLong(order);
                    waitingOrders.addLong(entered);
                    return true;
                }
            } else if (!customers.contains(customer)) {
                return true;
            }
            if (!pending.isEmpty() || forward(order, entered) != Worker.OK) {
                // never refuse a row here: a handler that refuses stops its worker reading, and workers waiting
                // for each other's space would wait forever; set it aside, step() offers it again
                pending.addLong(order);
                pending.addLong(entered);
            }
            return true;
        }

        private int forward(long order, long entered) {
            fwd[0] = order;
            fwd[1] = entered;
            return w.offerRow(ex[2], order, fwdWriter);
        }

        /** @return true if it offered a set-aside row */
        private boolean drainPending() throws Exception {
            int sent = 0;
            while (pendingAt < pending.size()) {
                if (check(w, forward(pending.getLong(pendingAt), pending.getLong(pendingAt + 1))) != Worker.OK) {
                    break;
                }
                pendingAt += 2;
                sent++;
            }
            if (pendingAt == pending.size()) {
                pending.clear();
                pendingAt = 0;
            }
            return sent > 0;
        }

        private boolean step() throws Exception {
            if (drainPending() || stepAll(feeds)) {
                return true;
            }
            if (!joinedFeedAdded && w.done(ex[0]) && w.done(ex[1]) && feeds.get(1).done()) {
                joinedFeedAdded = true;
                feeds.add(new Feed(w, waitingOrders.size() / 3, ex[2]) {
                    @Override
                    boolean readyToEnd() {
                        return pending.isEmpty();
                    }

                    @Override
                    int offer(int i) {
                        if (!customers.contains(waitingOrders.getLong(3 * i))) {
                            return Worker.OK;
                        }
                        return forward(waitingOrders.getLong(3 * i + 1), waitingOrders.getLong(3 * i + 2));
                    }
                });
                return true;
            }
            if (!groupsFeedAdded && joinedFeedAdded && w.done(ex[2]) && w.done(ex[3]) && w.done(ex[4])) {
                groupsFeedAdded = true;
                LongArrayList out = new LongArrayList();
                Long2LongHashMap.KeyIterator it = entry.keySet().iterator();
                while (it.hasNext()) {
                    long k = it.nextValue();
                    long sum = revenue.get(k);
                    if (newOrders.contains(k) && sum > TpccQueries.Q1_MIN_REVENUE) {
                        out.addLong(k);
                        out.addLong(entry.get(k));
                        out.addLong(sum);
                    }
                }
                groups = out.toLongArray();
                feeds.add(new Feed(w, groups.length / 3, ex[5]) {
                    @Override
                    int offer(int i) {
                        return w.offerRow(ex[5], groups[3 * i], (b, at) -> {
                            b.putLong(at, groups[3 * i]);
                            b.putLong(at + 8, groups[3 * i + 1]);
                            b.putLong(at + 16, groups[3 * i + 2]);
                        });
                    }
                });
                return true;
            }
            return false;
        }

        private boolean finished() {
            return groupsFeedAdded && feeds.get(feeds.size() - 1).done() && w.done(ex[5]);
        }
    }

    private final class Q2 {
        final Worker w;
        final Tables t;
        final LongHashSet promoItems = new LongHashSet();
        final LongHashSet items = new LongHashSet();
        final LongArrayList waiting = new LongArrayList(); // item id, amount
        final List<Feed> feeds = new ArrayList<>();
        long promo;
        long total;
        long gatheredPromo;
        long gatheredTotal;
        boolean partialsAdded;

        Q2(Worker w, Tables t) {
            this.w = w;
            this.t = t;
        }

        String run() throws Exception {
            w.consumeRows(ex[1], r -> {
                items.add(r.getLong(0));
                if (r.getLong(8) == 'a') {
                    promoItems.add(r.getLong(0));
                }
                return true;
            });
            w.consumeRows(ex[0], r -> {
                long item = r.getLong(0);
                long amount = r.getLong(8);
                if (!w.done(ex[1])) {
                    waiting.addLong(item);
                    waiting.addLong(amount);
                } else {
                    add(item, amount);
                }
                return true;
            });
            if (w.globalIndex() == 0) {
                w.consumeRows(ex[2], r -> {
                    gatheredPromo += r.getLong(0);
                    gatheredTotal += r.getLong(8);
                    return true;
                });
            }
            feeds.add(new Feed(w, t.iId.size(), ex[1]) {
                final long[] row = new long[2];
                final Handlers.RowWriter writer = (b, at) -> put(b, at, row);

                @Override
                int offer(int i) {
                    row[0] = t.iId.get(i);
                    row[1] = t.iDataFirst.get(i);
                    return w.offerRow(ex[1], row[0], writer);
                }
            });
            feeds.add(new Feed(w, t.olO.size(), ex[0]) {
                final long[] row = new long[2];
                final Handlers.RowWriter writer = (b, at) -> put(b, at, row);

                @Override
                int offer(int i) {
                    long dd = t.olDelivery.get(i);
                    if (dd == Tpcc.NULL_DATE || dd < TpccQueries.Q2_FROM || dd >= TpccQueries.Q2_TO) {
                        return Worker.OK;
                    }
                    row[0] = t.olIId.get(i);
                    row[1] = t.olAmount.get(i);
                    return w.offerRow(ex[0], row[0], writer);
                }
            });
            w.run(this::step, this::finished);
            return w.globalIndex() == 0 ? TpccQueries.renderQ2(new long[] {gatheredPromo, gatheredTotal}) : null;
        }

        private void add(long item, long amount) {
            if (items.contains(item)) {
                total += amount;
                if (promoItems.contains(item)) {
                    promo += amount;
                }
            }
        }

        private boolean step() throws Exception {
            if (stepAll(feeds)) {
                return true;
            }
            if (!partialsAdded && w.done(ex[0]) && w.done(ex[1])) {
                partialsAdded = true;
                for (int i = 0; i < waiting.size(); i += 2) {
                    add(waiting.getLong(i), waiting.getLong(i + 1));
                }
                feeds.add(new Feed(w, 1, ex[2]) {
                    @Override
                    int offer(int i) {
                        return w.offerRow(ex[2], 0, (b, at) -> {
                            b.putLong(at, promo);
                            b.putLong(at + 8, total);
                        });
                    }
                });
                return true;
            }
            return false;
        }

        private boolean finished() {
            return partialsAdded && feeds.get(feeds.size() - 1).done() && w.done(ex[2]);
        }
    }

    private final class Q3 {
        static final int GROUPS = 16;
        final Worker w;
        final Tables t;
        final long[][] partial = new long[GROUPS][3];
        final long[][] merged = new long[GROUPS][3];
        final List<Q3Row> answer = new ArrayList<>();
        final List<Feed> feeds = new ArrayList<>();
        boolean mergedAdded;

        Q3(Worker w, Tables t) {
            this.w = w;
            this.t = t;
        }

        String run() throws Exception {
            w.consumeRows(ex[0], r -> {
                long[] m = merged[(int) r.getLong(0)];
                m[0] += r.getLong(8);
                m[1] += r.getLong(16);
                m[2] += r.getLong(24);
                return true;
            });
            if (w.globalIndex() == 0) {
                w.consumeRows(ex[1], r -> answer.add(new Q3Row((int) r.getLong(0), r.getLong(8), r.getLong(16),
                    r.getLong(24))));
            }
            for (int i = 0; i < t.olO.size(); i++) { // the scan and partial aggregation: no communication
                long dd = t.olDelivery.get(i);
                if (dd != Tpcc.NULL_DATE && dd > TpccQueries.Q3_DELIVERED_AFTER) {
                    long[] p = partial[t.olNumber.get(i)];
                    p[0]++;
                    p[1] += t.olQuantity.get(i);
                    p[2] += t.olAmount.get(i);
                }
            }
            feeds.add(groupFeed(ex[0], partial));
            w.run(this::step, this::finished);
            if (w.globalIndex() != 0) {
                return null;
            }
            answer.sort(TpccQueries.Q3_ORDER);
            return TpccQueries.renderQ3(answer);
        }

        private Feed groupFeed(Exchange<?> to, long[][] groups) {
            return new Feed(w, GROUPS, to) {
                @Override
                int offer(int g) {
                    if (groups[g][0] == 0) {
                        return Worker.OK;
                    }
                    return w.offerRow(to, g, (b, at) -> {
                        b.putLong(at, g);
                        b.putLong(at + 8, groups[g][0]);
                        b.putLong(at + 16, groups[g][1]);
                        b.putLong(at + 24, groups[g][2]);
                    });
                }
            };
        }

        private boolean step() throws Exception {
            if (stepAll(feeds)) {
                return true;
            }
            if (!mergedAdded && w.done(ex[0])) {
                mergedAdded = true;
                feeds.add(groupFeed(ex[1], merged));
                return true;
            }
            return false;
        }

        private boolean finished() {
            return mergedAdded && feeds.get(feeds.size() - 1).done() && w.done(ex[1]);
        }
    }

    private static void put(ByteBuffer b, int at, long[] row) {
        for (int i = 0; i < row.length; i++) {
            b.putLong(at + 8 * i, row[i]);
        }
    }
}
