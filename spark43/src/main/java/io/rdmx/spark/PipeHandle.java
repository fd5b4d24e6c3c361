package io.rdmx.spark;

import org.apache.spark.ShuffleDependency;
import org.apache.spark.shuffle.BaseShuffleHandle;

/**
 * A pipelined shuffle's handle: Spark's, plus the number of map tasks, taken on the driver (the dependency's RDD
 * is not shipped to executors), which a reader needs to know when every map has ended.
 */
final class PipeHandle<K, V, C> extends BaseShuffleHandle<K, V, C> {
    private static final long serialVersionUID = 1L;
    private final int maps;

    PipeHandle(int shuffleId, ShuffleDependency<K, V, C> dependency, int maps) {
        super(shuffleId, dependency);
        this.maps = maps;
    }

    /** @return the map tasks of the shuffle */
    int maps() {
        return maps;
    }
}
