package io.rdmx.spark;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.BlockingShuffleManager;

/**
 * The Spark 4.3 build of rdmx's shuffle manager: the same class name as the Spark 4.2 build, and the same behaviour
 * ({@link RdmxShuffleManagerBase} does the work), implementing Spark 4.3's {@code BlockingShuffleManager} (4.3
 * accepts in {@code spark.shuffle.manager} only a blocking or a pipelined manager; a blocking one owns the block
 * resolver). Enable it with {@code --jars rdmx-spark-4.3-<version>-all.jar
 * --conf spark.shuffle.manager=io.rdmx.spark.RdmxShuffleManager}. This build does not load on Spark 4.2 (there is
 * no {@code BlockingShuffleManager}), and 4.3 refuses the 4.2 build: use the jar of your Spark's version.
 */
public final class RdmxShuffleManager extends RdmxShuffleManagerBase implements BlockingShuffleManager {
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
