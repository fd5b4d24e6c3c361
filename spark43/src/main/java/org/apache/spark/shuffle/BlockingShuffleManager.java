package org.apache.spark.shuffle;

/**
 * For the compiler only, left out of every jar (the jar plugin excludes {@code org/apache/spark/**}): Spark 4.3's
 * {@code BlockingShuffleManager} trait (spark-core_2.13 4.3.0, {@code ShuffleManager.scala}), whose jars are not on
 * Maven Central. Its bytecode there, by {@code javap}: an
 * interface extending {@code ShuffleManager} with one abstract method, {@code shuffleBlockResolver()}. rdmx's
 * Spark 4.3 manager is compiled against Spark 4.2's {@code ShuffleManager} and this declaration, and resolves
 * against Spark 4.3's own trait at run time; the module's integration test runs it on the real Spark 4.3
 * distribution (pyspark 4.3.0 from PyPI).
 */
public interface BlockingShuffleManager extends ShuffleManager {
    @Override
    ShuffleBlockResolver shuffleBlockResolver();
}
