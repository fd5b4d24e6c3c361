package org.apache.spark.shuffle.streaming;

import org.apache.spark.shuffle.PipelinedShuffleManager;

/**
 * For the compiler only, left out of every jar (the jar plugin excludes {@code org/apache/spark/**}): Spark 4.3's
 * built-in pipelined manager ({@code spark.shuffle.manager.incremental=streaming}). Its bytecode there, by
 * {@code javap}: a public, non-final class implementing {@code PipelinedShuffleManager}, with a public constructor
 * of no arguments that only logs, and no fields but its logger. Spark 4.3.0's
 * {@code SparkEnv.initializeStreamingShuffleOutputTracker} makes the {@code StreamingShuffleOutputTracker} that
 * every pipelined shuffle needs only when the pipelined manager {@code instanceof} this class (or the blocking
 * manager {@code instanceof MultiShuffleManager}), so rdmx's pipelined manager extends it and overrides every
 * method Spark calls. Declared abstract here: the compiler then checks that the subclass implements them all.
 */
public abstract class StreamingShuffleManager implements PipelinedShuffleManager {
    /** Spark's constructor (it logs "Using StreamingShuffleManager"). */
    public StreamingShuffleManager() {
    }
}
