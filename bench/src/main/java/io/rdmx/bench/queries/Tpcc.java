package io.rdmx.bench.queries;

import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.SplittableRandom;

/**
 * Generated TPC-C tables, the columns the DAIS 2016 paper's three analytical queries read, held column-wise
 * (primitive arrays: scanning allocates nothing).
 *
 * <p>Sizes follow the TPC-C specification (revision 5.11, clause 4.3.3.1): per warehouse 10 districts, per district
 * 3,000 customers and 3,000 orders (the last 900 of them in {@code new_order}), 5 to 15 lines per order, and
 * 100,000 items. The values are those of a database that has run the workload for a year (2013), which is what the
 * paper queried, not those of the initial load (where every delivered line has amount 0 and the queries' date
 * filters would select everything or nothing): {@code o_entry_d} uniform over 2013, a delivered order's lines
 * delivered 0 to 10 days after entry ({@code o_id < 2101}; the others undelivered, null), {@code ol_quantity} 1 to
 * 10, {@code ol_amount} 0.01 to 9,999.99 (held in cents), {@code c_state} two random letters, {@code i_data} a random
 * alphanumeric string of 26 to 50 characters (only its first character is kept: the queries test a prefix).
 *
 * <p>Generation is deterministic per district (a {@link SplittableRandom} seeded by warehouse and district) and
 * per block of 1,000 items, so every worker generates only the rows it owns and a single process can generate the
 * whole database for the reference evaluation. Rows are spread over workers the way a key-value store's regions
 * would spread them: by district block (items by block of ids), each table placed with its own offset, so no join
 * key is co-located and every join needs a shuffle, as in the paper's setup (tables in HBase).
 */
public final class Tpcc {
    /** Districts per warehouse. */
    public static final int DISTRICTS = 10;
    /** Customers per district. */
    public static final int CUSTOMERS = 3000;
    /** Orders per district. */
    public static final int ORDERS = 3000;
    /** The first order id in {@code new_order} (undelivered). */
    public static final int FIRST_NEW_ORDER = 2101;
    /** Items. */
    public static final int ITEMS = 100_000;
    /** Items per generation block. */
    static final int ITEM_BLOCK = 1000;
    /** 2013-01-01T00:00:00Z in epoch seconds. */
    public static final long YEAR_START = LocalDate.of(2013, 1, 1).atStartOfDay().toEpochSecond(ZoneOffset.UTC);
    /** 2014-01-01T00:00:00Z in epoch seconds. */
    public static final long YEAR_END = LocalDate.of(2014, 1, 1).atStartOfDay().toEpochSecond(ZoneOffset.UTC);
    /** An undelivered line's {@code ol_delivery_d}. */
    public static final long NULL_DATE = Long.MIN_VALUE;
    private static final String ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

    /** Table placement offsets: which worker holds a block is {@code (block + offset) % workers}. */
    static final int CUSTOMER_OFFSET = 0;
    static final int ORDERS_OFFSET = 1;
    static final int NEW_ORDER_OFFSET = 2;
    static final int ORDER_LINE_OFFSET = 3;
    static final int ITEM_OFFSET = 0;

    private Tpcc() {
    }

    /** @return the epoch second of a date, at midnight UTC */
    public static long date(int year, int month, int day) {
        return LocalDate.of(year, month, day).atStartOfDay().toEpochSecond(ZoneOffset.UTC);
    }

    /** The rows of one worker (or of the whole database), column-wise. */
    public static final class Tables {
        /** customer: c_w_id, c_d_id, c_id, c_state (two characters packed in a char pair). */
        public final IntColumn cW = new IntColumn();
        public final IntColumn cD = new IntColumn();
        public final IntColumn cId = new IntColumn();
        public final IntColumn cState = new IntColumn();
        /** orders: o_w_id, o_d_id, o_id, o_c_id, o_entry_d. */
        public final IntColumn oW = new IntColumn();
        public final IntColumn oD = new IntColumn();
        public final IntColumn oId = new IntColumn();
        public final IntColumn oCId = new IntColumn();
        public final LongColumn oEntry = new LongColumn();
        /** new_order: no_w_id, no_d_id, no_o_id. */
        public final IntColumn noW = new IntColumn();
        public final IntColumn noD = new IntColumn();
        public final IntColumn noO = new IntColumn();
        /** order_line: ol_w_id, ol_d_id, ol_o_id, ol_number, ol_i_id, ol_quantity, ol_amount (cents), delivery. */
        public final IntColumn olW = new IntColumn();
        public final IntColumn olD = new IntColumn();
        public final IntColumn olO = new IntColumn();
        public final IntColumn olNumber = new IntColumn();
        public final IntColumn olIId = new IntColumn();
        public final IntColumn olQuantity = new IntColumn();
        public final LongColumn olAmount = new LongColumn();
        public final LongColumn olDelivery = new LongColumn();
        /** item: i_id and the first character of i_data. */
        public final IntColumn iId = new IntColumn();
        public final IntColumn iDataFirst = new IntColumn();

        /** @return rows held, over every table */
        public long rows() {
            return (long) cId.size() + oId.size() + noO.size() + olO.size() + iId.size();
        }
    }

    /**
     * Generates the rows one worker owns.
     *
     * @param warehouses the scale factor
     * @param worker this worker's global index
     * @param workers all workers
     * @return its rows
     */
    public static Tables generate(int warehouses, int worker, int workers) {
        if (warehouses < 1) {
            throw new IllegalArgumentException("TPC-C scale factor (warehouses)=" + warehouses + " must be >= 1");
        }
        if (workers < 1 || worker < 0 || worker >= workers) {
            throw new IllegalArgumentException("worker=" + worker + " of workers=" + workers);
        }
        Tables t = new Tables();
        int[] olCnt = new int[ORDERS + 1];
        long[] entry = new long[ORDERS + 1];
        int[] cust = new int[ORDERS + 1];
        for (int w = 1; w <= warehouses; w++) {
            for (int d = 1; d <= DISTRICTS; d++) {
                int block = (w - 1) * DISTRICTS + (d - 1);
                boolean c = owner(block, CUSTOMER_OFFSET, workers) == worker;
                boolean o = owner(block, ORDERS_OFFSET, workers) == worker;
                boolean no = owner(block, NEW_ORDER_OFFSET, workers) == worker;
                boolean ol = owner(block, ORDER_LINE_OFFSET, workers) == worker;
                if (c || o || no || ol) {
                    district(t, w, d, c, o, no, ol, olCnt, entry, cust);
                }
            }
        }
        for (int b = 0; b < ITEMS / ITEM_BLOCK; b++) {
            if (owner(b, ITEM_OFFSET, workers) == worker) {
                items(t, b);
            }
        }
        return t;
    }

    static int owner(int block, int offset, int workers) {
        return (block + offset) % workers;
    }

    private static void district(Tables t, int w, int d, boolean c, boolean o, boolean no, boolean ol,
                                 int[] olCnt, long[] entry, int[] cust) {
        SplittableRandom r = new SplittableRandom(((long) w << 20) ^ (d * 0x9E3779B97F4A7C15L));
        for (int i = 1; i <= CUSTOMERS; i++) {
            int state = (('A' + r.nextInt(26)) << 8) | ('A' + r.nextInt(26));
            if (c) {
                t.cW.add(w);
                t.cD.add(d);
                t.cId.add(i);
                t.cState.add(state);
            }
        }
        for (int i = 1; i <= ORDERS; i++) {
            cust[i] = i;
        }
        for (int i = ORDERS; i > 1; i--) { // o_c_id: a random permutation of the customer ids (clause 4.3.3.1)
            int j = 1 + r.nextInt(i);
            int x = cust[i];
            cust[i] = cust[j];
            cust[j] = x;
        }
        for (int i = 1; i <= ORDERS; i++) {
            entry[i] = YEAR_START + r.nextLong(YEAR_END - YEAR_START);
            olCnt[i] = 5 + r.nextInt(11);
            if (o) {
                t.oW.add(w);
                t.oD.add(d);
                t.oId.add(i);
                t.oCId.add(cust[i]);
                t.oEntry.add(entry[i]);
            }
            if (no && i >= FIRST_NEW_ORDER) {
                t.noW.add(w);
                t.noD.add(d);
                t.noO.add(i);
            }
            long delivery = i < FIRST_NEW_ORDER ? entry[i] + r.nextLong(10L * 86_400 + 1) : NULL_DATE;
            for (int n = 1; n <= olCnt[i]; n++) {
                int item = 1 + r.nextInt(ITEMS);
                int qty = 1 + r.nextInt(10);
                long amount = 1 + r.nextLong(999_999);
                if (ol) {
                    t.olW.add(w);
                    t.olD.add(d);
                    t.olO.add(i);
                    t.olNumber.add(n);
                    t.olIId.add(item);
                    t.olQuantity.add(qty);
                    t.olAmount.add(amount);
                    t.olDelivery.add(delivery);
                }
            }
        }
    }

    private static void items(Tables t, int block) {
        SplittableRandom r = new SplittableRandom(0x17E3L * (block + 1));
        for (int i = block * ITEM_BLOCK + 1; i <= (block + 1) * ITEM_BLOCK; i++) {
            int len = 26 + r.nextInt(25);
            int first = ALNUM.charAt(r.nextInt(ALNUM.length()));
            for (int k = 1; k < len; k++) {
                r.nextInt(ALNUM.length()); // the rest of i_data: drawn, not kept
            }
            t.iId.add(i);
            t.iDataFirst.add(first);
        }
    }

    /** A growable int column. */
    public static final class IntColumn {
        private int[] v = new int[1024];
        private int n;

        void add(int x) {
            if (n == v.length) {
                v = java.util.Arrays.copyOf(v, n * 2);
            }
            v[n++] = x;
        }

        /** @return the value at a row */
        public int get(int row) {
            return v[row];
        }

        /** @return rows */
        public int size() {
            return n;
        }
    }

    /** A growable long column. */
    public static final class LongColumn {
        private long[] v = new long[1024];
        private int n;

        void add(long x) {
            if (n == v.length) {
                v = java.util.Arrays.copyOf(v, n * 2);
            }
            v[n++] = x;
        }

        /** @return the value at a row */
        public long get(int row) {
            return v[row];
        }

        /** @return rows */
        public int size() {
            return n;
        }
    }
}
