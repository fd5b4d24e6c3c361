package io.rdmx.shuffle;

import io.rdmx.channel.RingBuffer;
import io.rdmx.transport.ConnectionClosedException;
import java.nio.ByteBuffer;

/**
 * An outbox over an in-memory ring (the same-process fast path; the benchmarks' sockets baseline uses it too):
 * claims and commits go to the ring; subclasses say who is told about committed data. Space freed by the
 * reader wakes the writer through the reader's side, so {@link #wakeOnSpace} does nothing here.
 */
public abstract class RingOutbox implements ShuffleTransport.Outbox {
    /** The ring. */
    protected final RingBuffer ring;

    /**
     * @param ring the ring
     */
    protected RingOutbox(RingBuffer ring) {
        this.ring = ring;
    }

    @Override
    public int tryClaim(int stream, int len) throws ConnectionClosedException {
        return ring.tryClaim(stream, len);
    }

    @Override
    public ByteBuffer buffer() {
        return ring.buffer();
    }

    @Override
    public int maxPayload() {
        return ring.maxPayload();
    }

    @Override
    public void commit() {
        ring.commit();
    }

    @Override
    public void abort() {
        ring.abort();
    }

    @Override
    public void wakeOnSpace(int worker) {
        // the reading side wakes a blocked writer after each read
    }
}
