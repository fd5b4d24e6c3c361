package io.rdmx.spark;

import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.TaskContext;
import org.apache.spark.shuffle.ShuffleBlockResolver;
import org.apache.spark.shuffle.ShuffleHandle;
import org.apache.spark.shuffle.ShuffleManager;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.shuffle.ShuffleWriteMetricsReporter;
import org.apache.spark.shuffle.ShuffleWriter;

/**
 * A Spark 4.2 shuffle manager that carries shuffle blocks over rdmx. Enable it with
 * {@code --jars rdmx-spark-<version>-all.jar --conf spark.shuffle.manager=io.rdmx.spark.RdmxShuffleManager}
 * (Spark 4.3: the same class name from {@code rdmx-spark-4.3-<version>-all.jar}).
 *
 * <p>Map outputs are Spark's sort shuffle files; executors serve and fetch blocks over rdmx, and a lost or
 * unreachable executor raises {@code FetchFailedException} within {@code spark.rdmx.peerTimeoutMs}: see
 * {@link RdmxShuffleCore}, which does the work for every Spark version's manager contract.
 *
 * <p>Spark creates one instance per JVM (driver and each executor), by reflection, with
 * {@code (SparkConf, boolean isDriver)}. The rdmx side of an executor starts on its first map or reduce task.
 */
public final class RdmxShuffleManager implements ShuffleManager {
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
