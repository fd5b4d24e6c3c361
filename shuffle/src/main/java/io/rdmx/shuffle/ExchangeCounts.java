package io.rdmx.shuffle;

import java.util.Arrays;

/**
 * Byte counts per (exchange, worker) for one worker's flow control: on the sending side the bytes each receiver
 * has not credited back yet, on the receiving side the bytes taken from each sender and not credited yet. Only
 * exchanges with a count other than zero hold a slot, so ids used once and finished cost nothing. One thread.
 */
final class ExchangeCounts {
    private final int workers;
    /** Per slot: its exchange id, or -1 when free. */
    private int[] ids = new int[4];
    /** Per slot: the workers whose count is not zero. */
    private int[] nonZero = new int[4];
    /** [slot * workers + worker]. */
    private long[] counts;
    private int lastId = -1;
    private int lastSlot;

    ExchangeCounts(int workers) {
        this.workers = workers;
        Arrays.fill(ids, -1);
        this.counts = new long[ids.length * workers];
    }

    /**
     * @param id an exchange id
     * @param worker a worker's global index
     * @return its count (0 if the exchange has no slot)
     */
    long get(int id, int worker) {
        int s = find(id);
        return s < 0 ? 0 : counts[s * workers + worker];
    }

    /**
     * Adds to a count; frees the exchange's slot once all its counts are zero.
     *
     * @param id an exchange id
     * @param worker a worker's global index
     * @param delta the change (the count must not go below zero: the caller checks)
     * @return the new count
     */
    long add(int id, int worker, long delta) {
        int s = find(id);
        if (s < 0) {
            s = allocate(id);
        }
        int i = s * workers + worker;
        long before = counts[i];
        long after = before + delta;
        counts[i] = after;
        if (before == 0 && after != 0) {
            nonZero[s]++;
        } else if (before != 0 && after == 0 && --nonZero[s] == 0) {
            ids[s] = -1;
            if (lastSlot == s) {
                lastId = -1;
            }
        }
        return after;
    }

    /** @return exchanges holding a slot (counts other than zero) */
    int exchanges() {
        int n = 0;
        for (int id : ids) {
            if (id >= 0) {
                n++;
            }
        }
        return n;
    }

    private int find(int id) {
        if (id == lastId) {
            return lastSlot;
        }
        for (int s = 0; s < ids.length; s++) {
            if (ids[s] == id) {
                lastId = id;
                lastSlot = s;
                return s;
            }
        }
        return -1;
    }

    private int allocate(int id) {
        int s = 0;
        while (s < ids.length && ids[s] >= 0) {
            s++;
        }
        if (s == ids.length) {
            int n = ids.length * 2;
            ids = Arrays.copyOf(ids, n);
            Arrays.fill(ids, s, n, -1);
            nonZero = Arrays.copyOf(nonZero, n);
            counts = Arrays.copyOf(counts, n * workers);
        }
        ids[s] = id;
        lastId = id;
        lastSlot = s;
        return s;
    }
}
