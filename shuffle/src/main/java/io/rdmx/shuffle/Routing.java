package io.rdmx.shuffle;

import java.util.function.ToLongFunction;

/**
 * Where a shuffle operator sends a row: to the worker its key hashes to, to every worker, or to one master.
 * Rows of object exchanges are routed by {@link #route}; rows of fixed-width exchanges by the key given with them
 * ({@link #routeKey}), so a fixed-width exchange refuses, at declaration, a routing that does not override
 * {@link #routeKey} (a lambda, {@link #hash}): it would never be called. {@link #byKey}, {@link #broadcast} and
 * {@link #gather} serve both kinds.
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
     * Routes by a key (fixed-width rows): by default the worker the mixed key falls on. A routing for fixed-width
     * exchanges overrides it (a routing that does not is refused there at declaration).
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
     * Hash partitioning of object rows by a key the function computes (it must be equal for equal rows in every
     * process: not an identity hash). Object exchanges only: a fixed-width exchange refuses it at declaration
     * (its rows are routed by the key offered with them: {@link #byKey}).
     *
     * @param key the key of a row
     * @param <T> the row type
     * @return the routing
     */
    static <T> Routing<T> hash(ToLongFunction<T> key) {
        return new Routing<>() {
            @Override
            public int route(T row, int workers) {
                return partition(mix(key.applyAsLong(row)), workers);
            }

            @Override
            public String toString() {
                return "Routing.hash(key)";
            }
        };
    }

    /**
     * Hash partitioning by key, the same in every process: on a fixed-width exchange by the key given with each
     * row; on an object exchange by the value of an {@code Integer}, {@code Long}, {@code Short} or {@code Byte}
     * row (so an int or long row goes where the same key offered to a fixed-width exchange goes), by the contents
     * of a primitive array ({@link RowSerializer#BYTES}, {@link RowSerializer#LONGS}: equal arrays go to the same
     * worker), by an enum's ordinal, and otherwise by the row's {@code hashCode()}. An object row whose class does
     * not override {@code hashCode()} (its identity hash differs in every process), or an array of objects, is
     * refused by the offer, naming its class.
     *
     * @param <T> the row type
     * @return the routing
     */
    static <T> Routing<T> byKey() {
        return new Routing<>() {
            @Override
            public int route(T row, int workers) {
                return partition(mix(RowKeys.keyOf(row)), workers);
            }

            @Override
            public int routeKey(long key, int workers) {
                return partition(mix(key), workers);
            }

            @Override
            public String toString() {
                return "Routing.byKey()";
            }
        };
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

            @Override
            public String toString() {
                return "Routing.broadcast()";
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

            @Override
            public String toString() {
                return "Routing.gather(" + master + ")";
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
