package io.rdmx.bench.queries;

import io.rdmx.bench.queries.Tpcc.Tables;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The DAIS 2016 paper's three analytical queries over TPC-C (its Listing 1.1), their answers, and a
 * single-process evaluation of each written the plain way (hash maps of boxed keys, one pass per table) to check
 * the SPMD plans of {@link QueryPlans} against:
 *
 * <pre>
 * -- Q1: a four-way join with group-by, having and order-by
 * select ol_o_id, ol_w_id, ol_d_id, sum(ol_amount) as revenue, o_entry_d
 * from order_line, orders, new_order, customer
 * where c_id = o_c_id and c_w_id = o_w_id and c_d_id = o_d_id
 *   and no_w_id = o_w_id and no_d_id = o_d_id and no_o_id = o_id
 *   and ol_w_id = o_w_id and ol_d_id = o_d_id and ol_o_id = o_id
 *   and c_state like 'A%' and o_entry_d &gt; timestamp('2013-07-01 00:00:00')
 * group by ol_o_id, ol_w_id, ol_d_id, o_entry_d
 * having sum(ol_amount) &gt; 80000.00
 * order by revenue desc, o_entry_d;
 *
 * -- Q2: a join with a conditional aggregate
 * select 100.00 * sum(case when i_data like 'a%' then ol_amount else 0 end) / (1 + sum(ol_amount))
 * from order_line, item
 * where ol_i_id = i_id
 *   and ol_delivery_d &gt;= timestamp('2013-06-01 00:00:00') and ol_delivery_d &lt; timestamp('2013-08-01 00:00:00');
 *
 * -- Q3: a group-by with order-by
 * select ol_number, sum(ol_quantity), sum(ol_amount), sum(ol_quantity) / count(*), sum(ol_amount) / count(*),
 *        count(*)
 * from order_line where ol_delivery_d &gt; timestamp('2013-07-01 00:00:00')
 * group by ol_number order by sum(ol_quantity) desc;
 * </pre>
 *
 * Amounts are exact (cents in a {@code long}); an answer is rendered canonically ({@link #render}) and compared as
 * text, so the distributed plans must agree to the last cent. Ties of the order-by are broken by the group key
 * (SQL leaves them open), so the rendering is deterministic.
 */
public final class TpccQueries {
    /** Q1's {@code o_entry_d} bound (exclusive). */
    public static final long Q1_ENTRY_AFTER = Tpcc.date(2013, 7, 1);
    /** Q1's having bound in cents (exclusive): 80,000.00. */
    public static final long Q1_MIN_REVENUE = 8_000_000L;
    /** Q2's delivery window [from, to). */
    public static final long Q2_FROM = Tpcc.date(2013, 6, 1);
    /** Q2's delivery window end (exclusive). */
    public static final long Q2_TO = Tpcc.date(2013, 8, 1);
    /** Q3's delivery bound (exclusive). */
    public static final long Q3_DELIVERED_AFTER = Tpcc.date(2013, 7, 1);

    private TpccQueries() {
    }

    /** Q1's answer row. */
    public record Q1Row(int w, int d, int o, long entry, long revenue) {
    }

    /** Q3's answer row (one per {@code ol_number}). */
    public record Q3Row(int number, long count, long quantity, long amount) {
    }

    /** @return whether a two-letter state (packed as two chars) starts with 'A' */
    static boolean stateStartsWithA(int packedState) {
        return (packedState >>> 8) == 'A';
    }

    /** Q1's order: revenue desc, o_entry_d, then the group key. */
    static final Comparator<Q1Row> Q1_ORDER = Comparator.comparingLong(Q1Row::revenue).reversed()
        .thenComparingLong(Q1Row::entry).thenComparingInt(Q1Row::w).thenComparingInt(Q1Row::d)
        .thenComparingInt(Q1Row::o);
    /** Q3's order: sum(ol_quantity) desc, then ol_number. */
    static final Comparator<Q3Row> Q3_ORDER = Comparator.comparingLong(Q3Row::quantity).reversed()
        .thenComparingInt(Q3Row::number);

    /**
     * Q1, evaluated in one process over the whole database.
     *
     * @param t every row
     * @return the answer, ordered
     */
    public static List<Q1Row> q1Reference(Tables t) {
        Set<List<Integer>> customersA = new HashSet<>();
        for (int i = 0; i < t.cId.size(); i++) {
            if (stateStartsWithA(t.cState.get(i))) {
                customersA.add(List.of(t.cW.get(i), t.cD.get(i), t.cId.get(i)));
            }
        }
        Set<List<Integer>> newOrders = new HashSet<>();
        for (int i = 0; i < t.noO.size(); i++) {
            newOrders.add(List.of(t.noW.get(i), t.noD.get(i), t.noO.get(i)));
        }
        Map<List<Integer>, Long> entry = new HashMap<>();
        for (int i = 0; i < t.oId.size(); i++) {
            List<Integer> key = List.of(t.oW.get(i), t.oD.get(i), t.oId.get(i));
            if (t.oEntry.get(i) > Q1_ENTRY_AFTER && customersA.contains(List.of(t.oW.get(i), t.oD.get(i),
                t.oCId.get(i))) && newOrders.contains(key)) {
                entry.put(key, t.oEntry.get(i));
            }
        }
        Map<List<Integer>, Long> revenue = new HashMap<>();
        for (int i = 0; i < t.olO.size(); i++) {
            List<Integer> key = List.of(t.olW.get(i), t.olD.get(i), t.olO.get(i));
            if (entry.containsKey(key)) {
                revenue.merge(key, t.olAmount.get(i), Long::sum);
            }
        }
        List<Q1Row> out = new ArrayList<>();
        for (Map.Entry<List<Integer>, Long> e : revenue.entrySet()) {
            if (e.getValue() > Q1_MIN_REVENUE) {
                List<Integer> k = e.getKey();
                out.add(new Q1Row(k.get(0), k.get(1), k.get(2), entry.get(k), e.getValue()));
            }
        }
        out.sort(Q1_ORDER);
        return out;
    }

    /**
     * Q2, evaluated in one process.
     *
     * @param t every row
     * @return {promo amount, total amount} in cents
     */
    public static long[] q2Reference(Tables t) {
        Map<Integer, Integer> first = new HashMap<>();
        for (int i = 0; i < t.iId.size(); i++) {
            first.put(t.iId.get(i), t.iDataFirst.get(i));
        }
        long promo = 0;
        long total = 0;
        for (int i = 0; i < t.olO.size(); i++) {
            long dd = t.olDelivery.get(i);
            Integer f = first.get(t.olIId.get(i));
            if (dd != Tpcc.NULL_DATE && dd >= Q2_FROM && dd < Q2_TO && f != null) {
                total += t.olAmount.get(i);
                if (f == 'a') {
                    promo += t.olAmount.get(i);
                }
            }
        }
        return new long[] {promo, total};
    }

    /**
     * Q3, evaluated in one process.
     *
     * @param t every row
     * @return the answer, ordered
     */
    public static List<Q3Row> q3Reference(Tables t) {
        Map<Integer, long[]> g = new HashMap<>();
        for (int i = 0; i < t.olO.size(); i++) {
            long dd = t.olDelivery.get(i);
            if (dd != Tpcc.NULL_DATE && dd > Q3_DELIVERED_AFTER) {
                long[] a = g.computeIfAbsent(t.olNumber.get(i), k -> new long[3]);
                a[0]++;
                a[1] += t.olQuantity.get(i);
                a[2] += t.olAmount.get(i);
            }
        }
        List<Q3Row> out = new ArrayList<>();
        g.forEach((k, a) -> out.add(new Q3Row(k, a[0], a[1], a[2])));
        out.sort(Q3_ORDER);
        return out;
    }

    /**
     * @param rows Q1's answer
     * @return its canonical text
     */
    public static String renderQ1(List<Q1Row> rows) {
        StringBuilder s = new StringBuilder("ol_o_id|ol_w_id|ol_d_id|revenue|o_entry_d\n");
        for (Q1Row r : rows) {
            s.append(r.o()).append('|').append(r.w()).append('|').append(r.d()).append('|').append(cents(r.revenue()))
                .append('|').append(java.time.Instant.ofEpochSecond(r.entry())).append('\n');
        }
        return s.toString();
    }

    /**
     * @param promoTotal {promo, total} in cents
     * @return Q2's canonical text
     */
    public static String renderQ2(long[] promoTotal) {
        BigDecimal promo = BigDecimal.valueOf(promoTotal[0], 2);
        BigDecimal total = BigDecimal.valueOf(promoTotal[1], 2);
        BigDecimal v = BigDecimal.valueOf(10000, 2).multiply(promo).divide(BigDecimal.ONE.add(total), 6,
            RoundingMode.HALF_EVEN);
        return "promo_revenue\n" + v.toPlainString() + "\n";
    }

    /**
     * @param rows Q3's answer
     * @return its canonical text
     */
    public static String renderQ3(List<Q3Row> rows) {
        StringBuilder s = new StringBuilder("ol_number|sum_qty|sum_amount|avg_qty|avg_amount|count_order\n");
        for (Q3Row r : rows) {
            s.append(r.number()).append('|').append(r.quantity()).append('|').append(cents(r.amount())).append('|')
                .append(r.quantity() / r.count()).append('|')
                .append(BigDecimal.valueOf(r.amount(), 2).divide(BigDecimal.valueOf(r.count()), 2,
                    RoundingMode.HALF_EVEN).toPlainString())
                .append('|').append(r.count()).append('\n');
        }
        return s.toString();
    }

    /**
     * @param query 1, 2 or 3
     * @param t every row
     * @return the canonical answer of that query, evaluated in one process
     */
    public static String render(int query, Tables t) {
        switch (query) {
            case 1:
                return renderQ1(q1Reference(t));
            case 2:
                return renderQ2(q2Reference(t));
            case 3:
                return renderQ3(q3Reference(t));
            default:
                throw new IllegalArgumentException("query=" + query + " (the paper has queries 1, 2 and 3)");
        }
    }

    /**
     * @param text an answer's text
     * @return rows (lines after the header) and the SHA-256 of the text, for comparing answers across processes
     */
    public static String digest(String text) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            long lines = text.chars().filter(c -> c == '\n').count() - 1;
            return lines + ":" + HexFormat.of().formatHex(h, 0, 12);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String cents(long c) {
        return BigDecimal.valueOf(c, 2).toPlainString();
    }
}
