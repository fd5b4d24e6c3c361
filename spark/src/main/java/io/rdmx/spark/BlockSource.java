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

    /**
     * Diagnoses why a reader found a block corrupt (Spark's {@code ShuffleChecksumHelper.diagnoseCorruption}):
     * compares the checksum the map task wrote for it, one computed again from the block as it is now and the
     * reader's.
     *
     * @param shuffleId the shuffle
     * @param mapId the map task's id
     * @param reduceId the partition
     * @param checksum the checksum the reader computed over the bytes it read
     * @param algorithm the checksum's algorithm
     * @return the name of Spark's {@code Cause}
     * @throws IOException if this source cannot diagnose (the reader then reports the cause as unknown)
     */
    default String diagnose(int shuffleId, long mapId, int reduceId, long checksum, String algorithm)
        throws IOException {
        throw new IOException("no corruption diagnosis here");
    }
}
