package io.rdmx.spark;

/**
 * The largest size a server may claim for a block, given the map output tracker's estimate of it: the estimate
 * times {@link #MARGIN}, but at least {@code floor} and at most {@code absolute}. A server that claims more
 * fails that block's fetch, naming itself and the value, before any chunk past the estimate's is asked for:
 * a claimed size sets how many chunk requests follow and how many answers are held.
 *
 * <p>What Spark's tracker says: for a shuffle of up to {@code spark.shuffle.minNumPartitionsToHighlyCompress}
 * (2000) partitions each block's size rounded up to a power of 1.1 (so at least the block's size); for more
 * partitions the average of the blocks under {@code spark.shuffle.accurateBlockThreshold} (100 MiB) for each
 * of them, and larger blocks rounded up as before: there the floor is that threshold.
 *
 * @param floor the least limit, bytes ({@code spark.shuffle.accurateBlockThreshold} for a shuffle whose map
 *              statuses are highly compressed, else 0)
 * @param absolute the limit whatever the estimate ({@code spark.rdmx.maxBlockBytes})
 */
public record BlockSizeLimit(long floor, long absolute) {
    /** How far above the tracker's estimate a block may be. */
    public static final long MARGIN = 2;

    /**
     * @param estimate the tracker's estimate, bytes
     * @return the largest size a server may claim
     */
    public long of(long estimate) {
        long scaled = estimate > Long.MAX_VALUE / MARGIN ? Long.MAX_VALUE : estimate * MARGIN;
        return Math.min(absolute, Math.max(floor, scaled));
    }

    /** No bound from the estimate: {@code spark.rdmx.maxBlockBytes}'s default for every block. */
    static final BlockSizeLimit ABSOLUTE_ONLY = new BlockSizeLimit(RdmxShuffleConf.MAX_BLOCK_BYTES_DEFAULT,
        RdmxShuffleConf.MAX_BLOCK_BYTES_DEFAULT);
}
