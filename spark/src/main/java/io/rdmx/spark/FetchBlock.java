package io.rdmx.spark;

/**
 * A block to fetch.
 *
 * @param executorId the executor holding it
 * @param address its block server's address
 * @param shuffleId the shuffle
 * @param mapId the map task's id
 * @param mapIndex the map task's index
 * @param reduceId the partition (of a range: the first)
 * @param endReduceId the end of the range of partitions, exclusive: {@code reduceId + 1} for one block, more
 *                    for contiguous blocks of one map output fetched as one (Spark's {@code ShuffleBlockBatchId})
 * @param size the block's estimated length (the map output tracker's; of a range, the sum), bytes, at least 1
 */
public record FetchBlock(String executorId, String address, int shuffleId, long mapId, int mapIndex, int reduceId,
                    int endReduceId, long size) {
    /**
     * @throws IllegalArgumentException if the range is empty
     */
    public FetchBlock {
        if (endReduceId <= reduceId) {
            throw new IllegalArgumentException("block shuffle_" + shuffleId + "_" + mapId + "_" + reduceId
                + ": endReduceId=" + endReduceId + " must be above reduceId=" + reduceId);
        }
    }

    /**
     * One block.
     *
     * @param executorId the executor holding it
     * @param address its block server's address
     * @param shuffleId the shuffle
     * @param mapId the map task's id
     * @param mapIndex the map task's index
     * @param reduceId the partition
     * @param size the block's estimated length (the map output tracker's), bytes, at least 1
     */
    public FetchBlock(String executorId, String address, int shuffleId, long mapId, int mapIndex, int reduceId,
                 long size) {
        this(executorId, address, shuffleId, mapId, mapIndex, reduceId, reduceId + 1, size);
    }

    /** @return whether it is a range of several blocks */
    public boolean batch() {
        return endReduceId > reduceId + 1;
    }

    /** @return Spark's name of the block (of a range: {@code ShuffleBlockBatchId}'s) */
    public String name() {
        return FetchProtocol.blockName(shuffleId, mapId, reduceId, endReduceId);
    }
}
