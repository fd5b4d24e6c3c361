package io.rdmx.spark;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.BitSet;

/**
 * The temporary file of one block fetched to disk ({@link BlockFetcher}'s blocks above
 * {@code spark.network.maxRemoteBlockSizeFetchToMem}): which chunks were taken (each once: under the fetcher's
 * block monitor, as answers arrive on transport threads), the file, created at the first chunk, and how many chunks
 * were written (consumer thread). Its file is the {@link FetchedBlock}'s once {@link #finish finished}, else deleted.
 */
final class BlockFile {
    private final BlockSpill spill;
    private final BitSet taken = new BitSet();
    private Path file;
    private FileChannel channel;
    private int written;

    /** @param spill where its file is created */
    BlockFile(BlockSpill spill) {
        this.spill = spill;
    }

    /**
     * Under the block's monitor: takes chunk {@code index} unless it was taken already.
     *
     * @param index the chunk
     * @return true if this call took it (its answer is written once)
     */
    boolean take(int index) {
        if (taken.get(index)) {
            return false;
        }
        taken.set(index);
        return true;
    }

    /**
     * Consumer thread: writes one chunk's payload at its place, creating the file at the first.
     *
     * @param payload the bytes (position to limit)
     * @param pos where they go in the block
     * @throws IOException if the file cannot be created or written
     */
    void write(ByteBuffer payload, long pos) throws IOException {
        if (channel == null) {
            file = spill.create();
            channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        }
        long at = pos;
        while (payload.hasRemaining()) {
            at += channel.write(payload, at);
        }
        written++;
    }

    /** @return chunks written so far */
    int written() {
        return written;
    }

    /**
     * Consumer thread: the last chunk is written; closes the file and hands it over.
     *
     * @return the file (now the caller's)
     * @throws IOException if it cannot be closed
     */
    Path finish() throws IOException {
        channel.close();
        channel = null;
        Path f = file;
        file = null;
        return f;
    }

    /** @return the file, or null before the first chunk (for messages) */
    Path file() {
        return file;
    }

    /** Consumer thread: closes and deletes its file, if any. */
    void delete() {
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException e) {
                // deleted next
            }
            channel = null;
        }
        if (file != null) {
            deleteQuietly(file);
            file = null;
        }
    }

    /** Deletes a file, ignoring a failure (a temporary local block: Spark deletes its directories at exit). */
    static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            // a temporary local block: Spark's disk block manager deletes its directories at exit
        }
    }
}
