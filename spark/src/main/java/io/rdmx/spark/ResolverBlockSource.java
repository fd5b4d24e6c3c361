package io.rdmx.spark;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import org.apache.spark.network.buffer.FileSegmentManagedBuffer;
import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.network.shuffle.checksum.Cause;
import org.apache.spark.network.shuffle.checksum.ShuffleChecksumHelper;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.apache.spark.shuffle.ShuffleBlockResolver;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.ShuffleBlockBatchId;
import org.apache.spark.storage.ShuffleBlockId;
import scala.Option;

/**
 * Reads blocks through Spark's shuffle block resolver (the sort shuffle's data and index files): the segment of
 * the data file the index names, read at the requested offset with a positional read.
 */
final class ResolverBlockSource implements BlockSource {
    private final ShuffleBlockResolver resolver;

    ResolverBlockSource(ShuffleBlockResolver resolver) {
        this.resolver = resolver;
    }

    private ManagedBuffer block(int shuffleId, long mapId, int reduceId) throws IOException {
        return block(shuffleId, mapId, reduceId, reduceId + 1);
    }

    /** The segment of a block, or of a range of contiguous blocks of one map output (one segment of its file). */
    private ManagedBuffer block(int shuffleId, long mapId, int reduceId, int endReduceId) throws IOException {
        try {
            BlockId id = endReduceId == reduceId + 1 ? new ShuffleBlockId(shuffleId, mapId, reduceId)
                : new ShuffleBlockBatchId(shuffleId, mapId, reduceId, endReduceId);
            return resolver.getBlockData(id, Option.empty());
        } catch (RuntimeException e) {
            throw new IOException("no block " + FetchProtocol.blockName(shuffleId, mapId, reduceId, endReduceId)
                + ": " + e, e);
        }
    }

    @Override
    public long size(int shuffleId, long mapId, int reduceId) throws IOException {
        return block(shuffleId, mapId, reduceId).size();
    }

    @Override
    public long size(int shuffleId, long mapId, int reduceId, int endReduceId) throws IOException {
        return block(shuffleId, mapId, reduceId, endReduceId).size();
    }

    @Override
    public void read(int shuffleId, long mapId, int reduceId, long offset, ByteBuffer out) throws IOException {
        read(shuffleId, mapId, reduceId, reduceId + 1, offset, out);
    }

    @Override
    public void read(int shuffleId, long mapId, int reduceId, int endReduceId, long offset, ByteBuffer out)
        throws IOException {
        ManagedBuffer buf = block(shuffleId, mapId, reduceId, endReduceId);
        String name = FetchProtocol.blockName(shuffleId, mapId, reduceId, endReduceId);
        int length = out.remaining();
        long size = buf.size();
        if (offset + length > size) {
            throw new IOException("block " + name + " size=" + size + " is shorter than offset=" + offset
                + " + length=" + length);
        }
        if (buf instanceof FileSegmentManagedBuffer f) {
            try (FileChannel ch = FileChannel.open(f.getFile().toPath(), StandardOpenOption.READ)) {
                long pos = f.getOffset() + offset;
                while (out.hasRemaining()) {
                    int n = ch.read(out, pos);
                    if (n < 0) {
                        throw new IOException("block " + name + ": end of " + f.getFile() + " at position=" + pos);
                    }
                    pos += n;
                }
            }
        } else {
            ByteBuffer all = buf.nioByteBuffer();
            out.put(all.slice(all.position() + (int) offset, length));
        }
    }

    @Override
    public MapOutputFile mapOutput(int shuffleId, long mapId) throws IOException {
        if (!(resolver instanceof IndexShuffleBlockResolver index)) {
            throw new IOException("no map output files with block resolver " + resolver.getClass().getName());
        }
        File data = index.getDataFile(shuffleId, mapId);
        File indexFile = index.getIndexFile(shuffleId, mapId, Option.empty());
        long[] offsets;
        try (java.io.DataInputStream in = new java.io.DataInputStream(new java.io.BufferedInputStream(
            java.nio.file.Files.newInputStream(indexFile.toPath())))) {
            long n = indexFile.length() / 8;
            if (n < 2 || n > Integer.MAX_VALUE) {
                throw new IOException("index file " + indexFile + " length=" + indexFile.length());
            }
            offsets = new long[(int) n];
            for (int i = 0; i < n; i++) {
                offsets[i] = in.readLong();
            }
        }
        if (offsets[0] != 0 || offsets[offsets.length - 1] != data.length()) {
            throw new IOException("index file " + indexFile + " does not cover data file " + data + " (length="
                + data.length() + ", offsets " + offsets[0] + " .. " + offsets[offsets.length - 1] + ")");
        }
        return new MapOutputFile(data.toPath(), offsets);
    }

    @Override
    public String diagnose(int shuffleId, long mapId, int reduceId, long checksum, String algorithm)
        throws IOException {
        return diagnose(resolver, shuffleId, mapId, reduceId, checksum, algorithm).name();
    }

    /**
     * Spark's diagnosis of a corrupt block ({@code ShuffleChecksumHelper.diagnoseCorruption}, as Spark's block
     * manager calls it for its own fetcher): the checksum the map task wrote in its checksum file against one
     * computed again from the data file, then against the reader's.
     *
     * @param resolver the sort shuffle's block resolver
     * @param shuffleId the shuffle
     * @param mapId the map task's id
     * @param reduceId the partition
     * @param checksum the reader's checksum of the block
     * @param algorithm the checksum's algorithm
     * @return the cause
     * @throws IOException if the block is unknown
     */
    static Cause diagnose(ShuffleBlockResolver resolver, int shuffleId, long mapId, int reduceId, long checksum,
                          String algorithm) throws IOException {
        if (!(resolver instanceof IndexShuffleBlockResolver index)) {
            throw new IOException("no checksum files with block resolver " + resolver.getClass().getName());
        }
        File file = index.getChecksumFile(shuffleId, mapId, algorithm, Option.empty());
        return ShuffleChecksumHelper.diagnoseCorruption(algorithm, file, reduceId,
            new ResolverBlockSource(resolver).block(shuffleId, mapId, reduceId), checksum);
    }
}
