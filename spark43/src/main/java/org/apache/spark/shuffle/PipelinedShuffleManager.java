package org.apache.spark.shuffle;

/**
 * For the compiler only, left out of every jar (the jar plugin excludes {@code org/apache/spark/**}): Spark 4.3's
 * {@code PipelinedShuffleManager} trait (spark-core_2.13 4.3.0, {@code ShuffleManager.scala}). Its bytecode there,
 * by {@code javap}: a marker interface extending {@code ShuffleManager}, no methods of its own. Spark 4.3's
 * {@code SparkEnv.initializeShuffleManager} instantiates the class named by {@code spark.shuffle.manager.incremental}
 * and refuses one that is not a {@code PipelinedShuffleManager}; {@code SparkEnv.shuffleManagerFor} hands it every
 * {@code PipelinedShuffleDependency}.
 */
public interface PipelinedShuffleManager extends ShuffleManager {
}
