package io.rdmx.spark;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.ShuffleManager;

/**
 * A Spark 4.2 shuffle manager that carries shuffle blocks over rdmx. Enable it with
 * {@code --jars rdmx-spark-<version>-all.jar --conf spark.shuffle.manager=io.rdmx.spark.RdmxShuffleManager}
 * (Spark 4.3: the same class name from {@code rdmx-spark-4.3-<version>-all.jar}).
 *
 * <p>Map outputs are Spark's sort shuffle files; executors serve and fetch blocks over rdmx, and a lost or
 * unreachable executor raises {@code FetchFailedException} within {@code spark.rdmx.peerTimeoutMs}: see
 * {@link RdmxShuffleManagerBase}, which does the work for every Spark version's manager contract.
 *
 * <p>Spark creates one instance per JVM (driver and each executor), by reflection, with
 * {@code (SparkConf, boolean isDriver)}. The rdmx side of an executor starts on its first map or reduce task.
 */
public final class RdmxShuffleManager extends RdmxShuffleManagerBase implements ShuffleManager {
    /**
     * Spark's constructor.
     *
     * @param conf the application's configuration ({@code spark.rdmx.*} is read and validated here)
     * @param isDriver whether this JVM is the driver
     */
    public RdmxShuffleManager(SparkConf conf, boolean isDriver) {
        super(conf, isDriver);
    }
}
