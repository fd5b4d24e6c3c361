package io.rdmx.spark;

import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.TaskContext;
import org.apache.spark.shuffle.BlockingShuffleManager;
import org.apache.spark.shuffle.ShuffleBlockResolver;
import org.apache.spark.shuffle.ShuffleHandle;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.shuffle.ShuffleWriteMetricsReporter;
import org.apache.spark.shuffle.ShuffleWriter;

/**
 * The Spark 4.3 build of rdmx's shuffle manager: the same class name as the Spark 4.2 build, and the same behaviour
 * ({@link RdmxShuffleCore} does the work), implementing Spark 4.3's {@code BlockingShuffleManager} (4.3 accepts in
 * {@code spark.shuffle.manager} only a blocking or a pipelined manager; a blocking one owns the block resolver).
 * Enable it with {@code --jars rdmx-spark-4.3-<version>-all.jar
 * --conf spark.shuffle.manager=io.rdmx.spark.RdmxShuffleManager}. This build does not load on Spark 4.2 (there is
 * no {@code BlockingShuffleManager}), and 4.3 refuses the 4.2 build: use the jar of your Spark's version.
 */
public final class RdmxShuffleManager implements BlockingShuffleManager {
    private final RdmxShuffleCore core;

    /**
     * Spark's constructor.
     *
     * @param conf the application's configuration ({@code spark.rdmx.*} is read and validated here)
     * @param isDriver whether this JVM is the driver
     */
    public RdmxShuffleManager(SparkConf conf, boolean isDriver) {
        this.core = new RdmxShuffleCore(conf, isDriver);
    }

    /** @return the {@code spark.rdmx.*} configuration */
    public RdmxShuffleConf rdmxConf() {
        return core.rdmxConf();
    }

    @Override
    public <K, V, C> ShuffleHandle registerShuffle(int shuffleId, ShuffleDependency<K, V, C> dependency) {
        return core.registerShuffle(shuffleId, dependency);
    }

    @Override
    public <K, V> ShuffleWriter<K, V> getWriter(ShuffleHandle handle, long mapId, TaskContext context,
                                               ShuffleWriteMetricsReporter metrics) {
        return core.getWriter(handle, mapId, context, metrics);
    }

    @Override
    public <K, C> ShuffleReader<K, C> getReader(ShuffleHandle handle, int startMapIndex, int endMapIndex,
                                               int startPartition, int endPartition, TaskContext context,
                                               ShuffleReadMetricsReporter metrics) {
        return core.getReader(handle, startMapIndex, endMapIndex, startPartition, endPartition, context, metrics);
    }

    @Override
    public boolean unregisterShuffle(int shuffleId) {
        return core.unregisterShuffle(shuffleId);
    }

    @Override
    public ShuffleBlockResolver shuffleBlockResolver() {
        return core.shuffleBlockResolver();
    }

    @Override
    public void stop() {
        core.stop();
    }
}
