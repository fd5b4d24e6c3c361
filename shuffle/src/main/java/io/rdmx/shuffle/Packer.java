package io.rdmx.shuffle;

import io.rdmx.channel.RingBuffer;
import io.rdmx.transport.ConnectionClosedException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HashMap;
import java.util.Map;

/**
 * One worker's sending side: fixed-width rows packed many to a record per destination, object rows one record
 * each, broadcasts resumed where back-pressure stopped them, ends-of-stream; every record admitted by its
 * exchange's {@link ExchangeWindow} and counted there. The offers return {@link Worker#OK} or
 * {@link Worker#BACK_PRESSURED} and remember what stopped the last one (for the worker's wait and its messages);
 * a lost peer is thrown. One thread (the worker's).
 */
final class Packer {
    private final int global;
    private final int total;
    private final ShuffleTransport.Outbox[] outboxes;
    /** The first outbox of each other process whose connection a cork holds ({@link #flush}); none on shm. */
    private final int[] corked;
    /** The rings to the workers of this process (this worker writes them). */
    private final RingBuffer[] localOut;
    private final ExchangeWindow window;

    /** Packs of fixed-width rows, one per destination worker. */
    private final ByteBuffer[] packs;
    private final int[] packLen;
    private final int[] packStream;
    private final int packCap;
    private int openPacks;

    /** Per exchange: the next worker of an interrupted broadcast or end-of-stream. */
    private final int[] cursor = new int[Exchange.MAX_ID + 1];
    /**
     * Per exchange with a broadcast row interrupted after some destinations took it: the row's bytes, which the
     * next offer (of the same row) sends to the rest without writing the row again.
     */
    private final Map<Integer, ByteBuffer> unsentCopies = new HashMap<>();
    /** A broadcast row is written here once, then copied to each destination (allocated at the first). */
    private ByteBuffer scratch;
    /** The largest object row: {@link ShuffleService#maxRowBytes()}, the same for every destination. */
    private int maxRow;

    /** The destination of the last back-pressured offer, -1 if none since. */
    private int pressuredDst = -1;
    private boolean pressuredByWindow;
    /** The tail of the local ring to {@link #pressuredDst} when the offer found it full. */
    private long spaceTail;
    private long backPressured;
    private long rowsSent;

    /**
     * @param global the worker's global index
     * @param outboxes per global worker, the buffer to it
     * @param localOut per local worker, the ring to it (among the outboxes)
     * @param packBytes the configured pack size (at most the smallest destination's largest record)
     * @param window the worker's windows
     */
    Packer(int global, ShuffleTransport.Outbox[] outboxes, RingBuffer[] localOut, int packBytes,
           ExchangeWindow window) {
        this.global = global;
        this.total = outboxes.length;
        this.outboxes = outboxes;
        this.localOut = localOut;
        this.window = window;
        int workers = localOut.length;
        int maxPayload = Integer.MAX_VALUE;
        for (ShuffleTransport.Outbox ob : outboxes) {
            maxPayload = Math.min(maxPayload, ob.maxPayload());
        }
        this.corked = java.util.stream.IntStream.range(0, total / workers)
            .map(r -> r * workers).filter(g -> outboxes[g].corks()).toArray();
        this.maxRow = maxPayload;
        this.packCap = Math.min(packBytes, maxPayload);
        this.packs = new ByteBuffer[total];
        this.packLen = new int[total];
        this.packStream = new int[total];
        for (int g = 0; g < total; g++) {
            packs[g] = ByteBuffer.allocate(packCap).order(ByteOrder.LITTLE_ENDIAN);
            packStream[g] = -1;
        }
    }

    /** @param bytes the largest object row ({@link ShuffleService#maxRowBytes()}) */
    void limitRows(int bytes) {
        this.maxRow = bytes;
    }

    /** @return the destination of the last back-pressured offer, -1 if none since {@link #clearPressure} */
    int pressuredDst() {
        return pressuredDst;
    }

    /** @return true if a window (not a full buffer) stopped the last back-pressured offer */
    boolean pressuredByWindow() {
        return pressuredByWindow;
    }

    /** @return the tail of the local ring the last back-pressured offer found full */
    long spaceTail() {
        return spaceTail;
    }

    /** Forgets the last back-pressured offer's destination. */
    void clearPressure() {
        pressuredDst = -1;
    }

    /** @return offers (and flushes) that were back-pressured */
    long backPressured() {
        return backPressured;
    }

    /** @return rows offered successfully */
    long rowsSent() {
        return rowsSent;
    }

    /** @return packs holding rows not emitted yet */
    int openPacks() {
        return openPacks;
    }

    private int target(int dst, Exchange<?> ex) {
        if (dst < 0 || dst >= total) {
            throw new IllegalArgumentException("routing of exchange " + ex.id() + " returned worker=" + dst
                + " outside [0, " + total + ")");
        }
        return dst;
    }

    private int pressured(int dst) {
        pressuredDst = dst;
        pressuredByWindow = window.takeHit();
        backPressured++;
        int w = localWorker(dst);
        if (w >= 0) {
            spaceTail = localOut[w].tailAcquire();
        }
        return Worker.BACK_PRESSURED;
    }

    /**
     * @param g a global worker, or -1
     * @return its local index if it is a worker of this process, else -1
     */
    int localWorker(int g) {
        int workers = localOut.length;
        return g >= 0 && g / workers == global / workers ? g % workers : -1;
    }

    /** Emits the pack for a destination as one record (its window admitted it); false if its buffer is full. */
    private boolean emit(int g) throws ConnectionClosedException {
        int len = packLen[g];
        ShuffleTransport.Outbox ob = outboxes[g];
        int at = ob.tryClaim(packStream[g], len); // its window admitted it when it was started
        if (at < 0) {
            return false;
        }
        ob.buffer().put(at, packs[g], 0, len);
        ob.commit();
        window.sent(g, ShuffleFrameDescriptor.exchange(packStream[g]), len);
        packLen[g] = 0;
        packStream[g] = -1;
        openPacks--;
        return true;
    }

    /** Reserves {@code width} bytes in the pack for {@code g}; returns the offset or -1 (back-pressured). */
    private int reserve(int g, int stream, int width) throws ConnectionClosedException {
        int len = packLen[g];
        if (len > 0 && (packStream[g] != stream || len + width > packCap)) {
            if (!emit(g)) {
                return -1;
            }
            len = 0;
        }
        if (len == 0) {
            // a pack is admitted by its exchange's window when it starts (as if full): emitting it never waits on
            // a window, so another exchange's offers to g never wait behind this one's
            if (!window.open(g, ShuffleFrameDescriptor.exchange(stream), packCap)) {
                return -1;
            }
            packStream[g] = stream;
            openPacks++;
        }
        packLen[g] = len + width;
        return len;
    }

    /** Gives back the slot {@link #reserve} returned last for {@code g}. */
    private void unreserve(int g, int width) {
        packLen[g] -= width;
        if (packLen[g] == 0) {
            packStream[g] = -1;
            openPacks--;
        }
    }

    private static void checkFixed(Exchange<?> ex, int width, String what) {
        if (ex.width() != width) {
            throw new IllegalArgumentException(what + " on " + ex + ": width=" + ex.width() + " (needs width "
                + width + ")");
        }
    }

    /** See {@link Worker#offerInt}. */
    int offerInt(Exchange<?> ex, int value) throws ConnectionClosedException {
        checkFixed(ex, 4, "offerInt");
        int dst = ex.routing().routeKey(value, total);
        if (dst == Routing.ALL) {
            return broadcastFixed(ex, value, 4, null);
        }
        int g = target(dst, ex);
        int at = reserve(g, ex.dataStream(), 4);
        if (at < 0) {
            return pressured(g);
        }
        packs[g].putInt(at, value);
        rowsSent++;
        return Worker.OK;
    }

    /** See {@link Worker#offerLong}. */
    int offerLong(Exchange<?> ex, long value) throws ConnectionClosedException {
        checkFixed(ex, 8, "offerLong");
        int dst = ex.routing().routeKey(value, total);
        if (dst == Routing.ALL) {
            return broadcastFixed(ex, value, 8, null);
        }
        int g = target(dst, ex);
        int at = reserve(g, ex.dataStream(), 8);
        if (at < 0) {
            return pressured(g);
        }
        packs[g].putLong(at, value);
        rowsSent++;
        return Worker.OK;
    }

    /** See {@link Worker#offerRow}. */
    int offerRow(Exchange<?> ex, long key, Handlers.RowWriter writer) throws ConnectionClosedException {
        if (ex.width() == 0) {
            throw new IllegalArgumentException("offerRow on " + ex + ": width=0 (needs a fixed-width exchange)");
        }
        int dst = ex.routing().routeKey(key, total);
        if (dst == Routing.ALL) {
            return broadcastFixed(ex, 0, ex.width(), writer);
        }
        int g = target(dst, ex);
        int at = reserve(g, ex.dataStream(), ex.width());
        if (at < 0) {
            return pressured(g);
        }
        try {
            writer.write(packs[g], at);
        } catch (RuntimeException | Error e) {
            unreserve(g, ex.width()); // the row is not offered: its slot would go out with whatever it held
            throw e;
        }
        rowsSent++;
        return Worker.OK;
    }

    /**
     * Offers a fixed-width row to every worker. A row writer is called once, into a scratch buffer, once the first
     * destination has room and before any pack holds the row: if it throws, no worker gets the row.
     * Back-pressured after some workers took it, the row's bytes are kept, and the next offer (of the same row,
     * before any other offer of the exchange) sends them to the rest without calling the writer again.
     */
    private int broadcastFixed(Exchange<?> ex, long value, int width, Handlers.RowWriter writer)
        throws ConnectionClosedException {
        int id = ex.id();
        int from = cursor[id];
        ByteBuffer row = writer != null && from > 0 ? unsentCopies.get(id) : null;
        for (int g = from; g < total; g++) {
            int at = reserve(g, ex.dataStream(), width);
            if (at < 0) {
                interrupted(id, g, row, width);
                return pressured(g);
            }
            if (writer != null && row == null) {
                row = scratch(width);
                try {
                    writer.write(row, 0);
                } catch (RuntimeException | Error e) {
                    unreserve(g, width); // no pack holds the row
                    cursor[id] = 0;
                    throw e;
                }
            }
            if (row != null) {
                packs[g].put(at, row, 0, width);
            } else if (width == 4) {
                packs[g].putInt(at, (int) value);
            } else {
                packs[g].putLong(at, value);
            }
        }
        broadcastDone(id, from);
        rowsSent++;
        return Worker.OK;
    }

    /** @return the scratch buffer, at least {@code len} bytes, little endian, cleared */
    private ByteBuffer scratch(int len) {
        if (scratch == null || scratch.capacity() < len) {
            scratch = ByteBuffer.allocateDirect(Math.max(len, Math.max(maxRow, packCap)))
                .order(ByteOrder.LITTLE_ENDIAN);
        }
        scratch.clear();
        return scratch;
    }

    /**
     * A broadcast is back-pressured at destination {@code g}: the next offer resumes there. If earlier ones took
     * the row, its bytes are kept for the rest (the scratch buffer is another row's by then).
     */
    private void interrupted(int id, int g, ByteBuffer row, int len) {
        cursor[id] = g;
        if (g > 0 && row != null && row == scratch) {
            ByteBuffer copy = ByteBuffer.allocate(len).order(ByteOrder.LITTLE_ENDIAN);
            copy.put(0, row, 0, len);
            unsentCopies.put(id, copy);
        }
    }

    private void broadcastDone(int id, int from) {
        cursor[id] = 0;
        if (from > 0) {
            unsentCopies.remove(id);
        }
    }

    /** See {@link Worker#offer}. */
    <T> int offer(Exchange<T> ex, T row) throws ConnectionClosedException {
        if (row == null) {
            throw new IllegalArgumentException("offer of row=null on " + ex + " (a row must be an object)");
        }
        if (ex.width() != 0) {
            throw new IllegalArgumentException("offer of an object row on " + ex + ": width=" + ex.width()
                + " (use offerInt, offerLong or offerRow)");
        }
        int dst = ex.routing().route(row, total);
        RowSerializer<T> ser = ex.serializer();
        int len = ser.size(row);
        if (len < 0 || len > maxRow) {
            // one limit whatever the destination, checked before any copy is written: a broadcast row that fit some
            // destinations and not others was sent to some, then failed, and the next row went to the rest only
            throw new IllegalArgumentException("worker " + global + ": row of " + len + " bytes on " + ex
                + " exceeds maxRowBytes=" + maxRow + " of exchange " + ex.id() + " (the largest object row to any"
                + " worker: bufferSize / 4 - 8; raise bufferSize)");
        }
        int stream = ex.dataStream();
        if (dst != Routing.ALL) {
            int g = target(dst, ex);
            int at = claim(g, stream, len);
            if (at < 0) {
                return pressured(g);
            }
            ShuffleTransport.Outbox ob = outboxes[g];
            try {
                ser.write(row, ob.buffer(), at);
            } catch (RuntimeException | Error e) {
                ob.abort(); // nothing sent: else every later offer to this destination met the claim left open
                throw e;
            }
            committed(g, stream, len);
            rowsSent++;
            return Worker.OK;
        }
        // a broadcast: the row is written once, when the first destination has room and before any destination
        // holds it (a serializer that throws sends it nowhere), then copied to each; resumed after back-pressure,
        // the kept copy goes to the rest
        int id = ex.id();
        int from = cursor[id];
        ByteBuffer bytes = from > 0 ? unsentCopies.get(id) : null;
        int n = bytes != null ? bytes.capacity() : len;
        for (int g = from; g < total; g++) {
            int at = claim(g, stream, n);
            if (at < 0) {
                interrupted(id, g, bytes, n);
                return pressured(g);
            }
            if (bytes == null) {
                bytes = scratch(len);
                try {
                    ser.write(row, bytes, 0);
                } catch (RuntimeException | Error e) {
                    outboxes[g].abort(); // the claim: nothing sent anywhere
                    cursor[id] = 0;
                    throw e;
                }
            }
            outboxes[g].buffer().put(at, bytes, 0, n);
            committed(g, stream, n);
        }
        broadcastDone(id, from);
        rowsSent++;
        return Worker.OK;
    }

    /**
     * Claims {@code len} bytes of {@code stream} to {@code g} once its pack went out and its window admits them.
     *
     * @return the payload's index in the outbox's buffer, or -1 (back-pressured)
     */
    private int claim(int g, int stream, int len) throws ConnectionClosedException {
        if (packLen[g] > 0 && !emit(g)) {
            return -1;
        }
        if (!window.open(g, ShuffleFrameDescriptor.exchange(stream), len)) {
            return -1;
        }
        return outboxes[g].tryClaim(stream, len);
    }

    /** Publishes the claim {@link #claim} returned and counts it against the window. */
    private void committed(int g, int stream, int len) {
        outboxes[g].commit();
        window.sent(g, ShuffleFrameDescriptor.exchange(stream), len);
    }

    /**
     * Offers end-of-stream of an exchange from this worker to every worker that can receive its rows (after the
     * rows packed for them); the caller flushes once it went to all.
     *
     * @param ex the exchange
     * @return {@link Worker#OK} once written for all, or {@link Worker#BACK_PRESSURED} (offer it again)
     * @throws ConnectionClosedException if a destination is lost
     */
    int offerFinish(Exchange<?> ex) throws ConnectionClosedException {
        int only = ex.routing().only();
        int id = ex.id();
        int stream = ex.eosStream();
        for (int g = cursor[id]; g < total; g++) {
            if (only == Routing.ALL || only == g) {
                int at = claim(g, stream, ShuffleFrameDescriptor.EOS_LENGTH);
                if (at < 0) {
                    cursor[id] = g;
                    return pressured(g);
                }
                ShuffleFrameDescriptor.putEndOfStream(outboxes[g].buffer(), at, global);
                committed(g, stream, ShuffleFrameDescriptor.EOS_LENGTH);
            }
        }
        cursor[id] = 0;
        return Worker.OK;
    }

    /**
     * Writes the credits owed, emits every partly filled pack and sends whatever is committed in every outgoing
     * buffer.
     *
     * @return {@link Worker#OK}, or {@link Worker#BACK_PRESSURED} if a pack could not be emitted yet
     * @throws ConnectionClosedException if a destination is lost
     */
    int flush() throws ConnectionClosedException {
        // the outboxes of one process share its connection: one cork each, so that what this flush sends to a
        // process (its workers' rings) leaves in one system call on a socket, not one per ring
        for (int g : corked) {
            outboxes[g].cork();
        }
        try {
            if (window.owes()) {
                window.sendCredits();
            }
            int rc = Worker.OK;
            if (openPacks > 0) {
                for (int g = 0; g < total; g++) {
                    if (packLen[g] > 0 && !emit(g)) {
                        rc = pressured(g);
                    }
                }
            }
            for (ShuffleTransport.Outbox ob : outboxes) {
                ob.flush();
            }
            return rc;
        } finally {
            for (int g : corked) {
                outboxes[g].uncork();
            }
        }
    }

    /**
     * Forgets what this worker has not sent of an exchange: an interrupted broadcast or end-of-stream, and the
     * rows in its packs.
     *
     * @param id the exchange
     */
    void drop(int id) {
        cursor[id] = 0;
        unsentCopies.remove(id);
        for (int g = 0; g < packLen.length; g++) {
            if (packLen[g] > 0 && packStream[g] == id) {
                packLen[g] = 0;
                packStream[g] = -1;
                openPacks--;
            }
        }
    }
}
