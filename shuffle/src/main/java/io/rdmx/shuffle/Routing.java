package io.rdmx.shuffle;

import java.util.function.ToLongFunction;

/**
 * Where a shuffle operator sends a row: to the worker its key hashes to, to every worker, or to one master.
 * Rows of fixed-width exchanges are routed by the key given with them ({@link #routeKey}).
 *
 * @param <T> the row type
 */
public interface Routing<T> {
    /** {@link #route} result meaning "every worker". */
    int ALL = -1;

    /**
     * @param row the row
     * @param workers the total number of workers (all processes)
     * @return a global worker index, or {@link #ALL}
     */
    int route(T row, int workers);

    /**
     * Routes by a key (fixed-width rows): by default the worker the mixed key falls on.
     *
     * @param key the row's key
     * @param workers the total number of workers
     * @return a global worker index, or {@link #ALL}
     */
    default int routeKey(long key, int workers) {
        return partition(mix(key), workers);
    }

    /**
     * @return the only worker that receives rows, or {@link #ALL} if any may
     */
    default int only() {
        return ALL;
    }

    /**
     * Hash partitioning.
     *
     * @param key the key of a row
     * @param <T> the row type
     * @return the routing
     */
    static <T> Routing<T> hash(ToLongFunction<T> key) {
        return (row, n) -> partition(mix(key.applyAsLong(row)), n);
    }

    /**
     * Hash partitioning by the key given with each row (fixed-width exchanges; for an object exchange the row's
     * hash code).
     *
     * @param <T> the row type
     * @return the routing
     */
    static <T> Routing<T> byKey() {
        return (row, n) -> partition(mix(row.hashCode()), n);
    }

    /**
     * @param <T> the row type
     * @return routing that sends every row to every worker
     */
    static <T> Routing<T> broadcast() {
        return new Routing<>() {
            @Override
            public int route(T row, int workers) {
                return ALL;
            }

            @Override
            public int routeKey(long key, int workers) {
                return ALL;
            }
        };
    }

    /**
     * Gathering to one worker.
     *
     * @param master the global worker index that receives everything
     * @param <T> the row type
     * @return the routing
     */
    static <T> Routing<T> gather(int master) {
        return new Routing<>() {
            @Override
            public int route(T row, int workers) {
                return master;
            }

            @Override
            public int routeKey(long key, int workers) {
                return master;
            }

            @Override
            public int only() {
                return master;
            }
        };
    }

    /**
     * Maps a well-mixed 64-bit hash to {@code [0, n)} with a multiply and a shift (no division): the high 32 bits
     * of the hash scaled by {@code n}.
     *
     * @param hash a mixed hash
     * @param n the range
     * @return the partition
     */
    static int partition(long hash, int n) {
        return (int) (((hash >>> 32) * n) >>> 32);
    }

    /**
     * A 64-bit mixer (the finalizer of splitmix64), so keys with structure spread evenly.
     *
     * @param x a key
     * @return the mixed key
     */
    static long mix(long x) {
        x = (x ^ (x >>> 30)) * 0xbf58476d1ce4e5b9L;
        x = (x ^ (x >>> 27)) * 0x94d049bb133111ebL;
        return x ^ (x >>> 31);
    }
}
