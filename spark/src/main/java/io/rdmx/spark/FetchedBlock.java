package io.rdmx.spark;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A fetched block: views of the answers' payloads, not copies (each answer read in place, behind its header).
 * The consumer hands it to {@link BlockFetcher#release(FetchedBlock)} once it has read it (its buffers go back to
 * the caller's pool: reading it after that reads someone else's block).
 */
public final class FetchedBlock {
    private final FetchBlock block;
    private final List<ByteBuffer> chunks;
    private final ByteBuffer[] answers;
    /** The file it was written to (a block above {@code toDiskBytes}), or null: in {@link #chunks}. */
    private final Path file;
    private final long fileLength;
    private final AtomicBoolean released = new AtomicBoolean();

    FetchedBlock(FetchBlock block, ByteBuffer[] answers) {
        this.block = block;
        this.answers = answers;
        List<ByteBuffer> c = new ArrayList<>(answers.length);
        for (ByteBuffer a : answers) {
            c.add(a.duplicate().position(a.position() + FetchProtocol.ANSWER_HEADER).slice());
        }
        this.chunks = List.copyOf(c);
        this.file = null;
        this.fileLength = 0;
    }

    FetchedBlock(FetchBlock block, Path file, long length) {
        this.block = block;
        this.answers = new ByteBuffer[0];
        this.chunks = List.of();
        this.file = file;
        this.fileLength = length;
    }

    /** @return the temporary file holding the block, deleted at its release; null when it is in memory */
    public Path file() {
        return file;
    }

    /** @return which block */
    public FetchBlock block() {
        return block;
    }

    /** @return its bytes in memory, in order: each buffer's remaining bytes a chunk's payload (none: a file) */
    public List<ByteBuffer> chunks() {
        return chunks;
    }

    /** @return the block's exact length, bytes */
    public long length() {
        if (file != null) {
            return fileLength;
        }
        long n = 0;
        for (ByteBuffer c : chunks) {
            n += c.remaining();
        }
        return n;
    }

    /**
     * @return the block's bytes as one stream (reads the answers in place, or the file)
     * @throws IOException if its file cannot be opened
     */
    public InputStream stream() throws IOException {
        return file != null ? new java.io.BufferedInputStream(Files.newInputStream(file), 64 << 10)
            : new ChunksInputStream(chunks);
    }

    /**
     * Gives its answers back and deletes its file, once (later calls do nothing).
     *
     * @param giveBack takes each answer buffer back to its pool
     */
    void release(java.util.function.Consumer<ByteBuffer> giveBack) {
        if (released.compareAndSet(false, true)) {
            for (ByteBuffer a : answers) {
                giveBack.accept(a);
            }
            if (file != null) {
                BlockFile.deleteQuietly(file);
            }
        }
    }
}
