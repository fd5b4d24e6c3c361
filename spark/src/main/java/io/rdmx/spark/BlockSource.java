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
     * The length of a range of contiguous blocks of one map output (Spark's {@code ShuffleBlockBatchId}): by
     * default the sum of theirs; a source whose blocks lie in one file in order answers it from its index.
     *
     * @param shuffleId the shuffle
     * @param mapId the map task's id
     * @param reduceId the first partition
     * @param endReduceId the end of the range, exclusive
     * @return the bytes of the blocks, in order of partition
     * @throws IOException if a block is unknown or unreadable (the message names it)
     */
    default long size(int shuffleId, long mapId, int reduceId, int endReduceId) throws IOException {
        long n = 0;
        for (int r = reduceId; r < endReduceId; r++) {
            n += size(shuffleId, mapId, r);
        }
        return n;
    }

    /**
     * Reads part of a range of contiguous blocks of one map output: their bytes in order of partition, as one.
     *
     * @param shuffleId the shuffle
     * @param mapId the map task's id
     * @param reduceId the first partition
     * @param endReduceId the end of the range, exclusive
     * @param offset where in the range's bytes
     * @param dst where the bytes go; filled to its limit
     * @throws IOException if a block is unknown, the range shorter than asked or unreadable
     */
    default void read(int shuffleId, long mapId, int reduceId, int endReduceId, long offset, ByteBuffer dst)
        throws IOException {
        long skip = offset;
        for (int r = reduceId; r < endReduceId && dst.hasRemaining(); r++) {
            long size = size(shuffleId, mapId, r);
            if (skip >= size) {
                skip -= size;
                continue;
            }
            int n = (int) Math.min(dst.remaining(), size - skip);
            ByteBuffer part = dst.duplicate().limit(dst.position() + n);
            read(shuffleId, mapId, r, skip, part);
            dst.position(dst.position() + n);
            skip = 0;
        }
        if (dst.hasRemaining()) {
            throw new IOException("blocks " + FetchProtocol.blockName(shuffleId, mapId, reduceId, endReduceId)
                + " are shorter than offset=" + offset + " + the length asked");
        }
    }

    /**
     * A map task's output as a file: its data file and the offsets of its blocks (Spark's index file), for a READ
     * of the file's bytes by the reader.
     *
     * @param data the data file
     * @param offsets block {@code r} is {@code offsets[r] .. offsets[r + 1] - 1}; {@code offsets[0]} is 0
     */
    record MapOutputFile(java.nio.file.Path data, long[] offsets) {
    }

    /**
     * @param shuffleId the shuffle
     * @param mapId the map task's id
     * @return its output as a file
     * @throws IOException if it is unknown, or this source has no files (the reader then fetches by RPC)
     */
    default MapOutputFile mapOutput(int shuffleId, long mapId) throws IOException {
        throw new IOException("no map output files here");
    }

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
