package io.rdmx.spark;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Where a block server reads the bytes of map output blocks (Spark's shuffle block resolver, or a test's).
 * Called by the server's handler threads, concurrently.
 */
public interface BlockSource {
    /**
     * @param shuffleId the shuffle
     * @param mapId the map task's id
     * @param reduceId the partition
     * @return the block's exact length, bytes
     * @throws IOException if the block is unknown or unreadable (the message names it)
     */
    long size(int shuffleId, long mapId, int reduceId) throws IOException;

    /**
     * Reads part of a block: {@code dst.remaining()} bytes at {@code offset}, which the block holds.
     *
     * @param shuffleId the shuffle
     * @param mapId the map task's id
     * @param reduceId the partition
     * @param offset where in the block
     * @param dst where the bytes go; filled to its limit
     * @throws IOException if the block is unknown, shorter than asked or unreadable (the message names it)
     */
    void read(int shuffleId, long mapId, int reduceId, long offset, ByteBuffer dst) throws IOException;
}
