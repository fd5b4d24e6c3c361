package io.rdmx.shuffle;

import java.util.function.ToLongFunction;

/**
 * Where a shuffle operator sends a row: to the worker its key hashes to, to every worker, or to one master.
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
        return (row, n) -> (int) Long.remainderUnsigned(mix(key.applyAsLong(row)), n);
    }

    /**
     * @param <T> the row type
     * @return routing that sends every row to every worker
     */
    static <T> Routing<T> broadcast() {
        return (row, n) -> ALL;
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
            public int only() {
                return master;
            }
        };
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
