package io.rdmx.spark;

import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Objects;

/** Reads a list of buffers in order, from their own views (the buffers' positions are left alone). */
final class ChunksInputStream extends InputStream {
    private final ByteBuffer[] chunks;
    private int at;

    ChunksInputStream(List<ByteBuffer> chunks) {
        this.chunks = new ByteBuffer[chunks.size()];
        for (int i = 0; i < this.chunks.length; i++) {
            this.chunks[i] = chunks.get(i).duplicate();
        }
    }

    private ByteBuffer current() {
        while (at < chunks.length && !chunks[at].hasRemaining()) {
            at++;
        }
        return at < chunks.length ? chunks[at] : null;
    }

    @Override
    public int read() {
        ByteBuffer c = current();
        return c == null ? -1 : c.get() & 0xFF;
    }

    @Override
    public int read(byte[] b, int off, int len) {
        Objects.checkFromIndexSize(off, len, b.length);
        if (len == 0) {
            return 0;
        }
        int n = 0;
        ByteBuffer c;
        while (n < len && (c = current()) != null) {
            int k = Math.min(len - n, c.remaining());
            c.get(b, off + n, k);
            n += k;
        }
        return n == 0 ? -1 : n;
    }

    @Override
    public long skip(long n) {
        long done = 0;
        ByteBuffer c;
        while (done < n && (c = current()) != null) {
            int k = (int) Math.min(n - done, c.remaining());
            c.position(c.position() + k);
            done += k;
        }
        return done;
    }

    @Override
    public int available() {
        long n = 0;
        for (int i = at; i < chunks.length; i++) {
            n += chunks[i].remaining();
        }
        return (int) Math.min(Integer.MAX_VALUE, n);
    }
}
