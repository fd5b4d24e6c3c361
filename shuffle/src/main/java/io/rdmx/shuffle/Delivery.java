package io.rdmx.shuffle;

import io.rdmx.channel.RingBuffer;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.RdmxException;
import java.nio.ByteBuffer;
import java.util.function.IntConsumer;
import java.util.function.UnaryOperator;

/**
 * The receiving side of one worker: reads the in-process rings and the transport (as many records as the
 * {@link Inbox} can surely take), and dispatches and decodes each record: a credit goes to the
 * {@link ExchangeWindow}, an end-of-stream and rows to the exchange's consumer ({@link Consumers}), decoded for its
 * handler's kind; what a handler refuses, and what arrives while records of its exchange wait, is set aside in the
 * inbox. A lost rank is a failure only while a consumer waits on it. One thread (the worker's).
 */
final class Delivery {
    private final ShuffleConfig cfg;
    private final ShuffleTransport transport;
    private final int local;
    private final int global;
    private final int total;
    /** Per local worker, the ring from it to this worker. */
    private final RingBuffer[] localIn;
    /** Told the local index of a worker of this process whose ring to this worker was read (space freed). */
    private final IntConsumer spaceFreed;
    /** Records a loss as the worker's failure (and returns it). */
    private final UnaryOperator<ConnectionClosedException> fail;
    private final Consumers consumers;
    private final ExchangeWindow window;
    private final Inbox inbox;
    private final RowView view = new RowView();
    private final Inbox.Decoder decoder = this::deliver;
    private final ShuffleTransport.Receiver dispatch = this::dispatch;
    /** The in-process ring being read: {@link #localDispatch} passes its writer on. */
    private int localSource;
    private final RingBuffer.Handler localDispatch = (stream, buf, off, len) ->
        dispatch(localSource, stream, buf, off, len);
    /** Per rank: its loss, once a read reported it (a rank may leave once it sent every end-of-stream). */
    private final ConnectionClosedException[] gone;
    private boolean anyGone;
    /** Inside a handler call (or a blocking wait of the worker): delivery is not re-entered, records set aside. */
    private int depth;

    /**
     * @param cfg the service's configuration
     * @param transport the transport
     * @param local the worker's local index
     * @param localIn per local worker, the ring from it to this worker
     * @param consumers the worker's consumers
     * @param window the worker's windows
     * @param inbox the worker's inbox
     * @param spaceFreed told the local index of a worker whose ring to this worker was read (it may wait for space)
     * @param fail records a loss as the worker's failure, returns it
     */
    Delivery(ShuffleConfig cfg, ShuffleTransport transport, int local, RingBuffer[] localIn, Consumers consumers,
             ExchangeWindow window, Inbox inbox, IntConsumer spaceFreed,
             UnaryOperator<ConnectionClosedException> fail) {
        this.cfg = cfg;
        this.spaceFreed = spaceFreed;
        this.transport = transport;
        this.local = local;
        this.global = cfg.rank() * cfg.workers() + local;
        this.total = cfg.processes() * cfg.workers();
        this.localIn = localIn;
        this.fail = fail;
        this.gone = new ConnectionClosedException[cfg.processes()];
        this.consumers = consumers;
        this.window = window;
        this.inbox = inbox;
    }

    /** @return true inside a handler call or a blocking wait: records read now are set aside */
    boolean paused() {
        return depth > 0;
    }

    /** Pauses delivery (a blocking wait reads into the inbox); {@link #resume} ends it. */
    void pause() {
        depth++;
    }

    /** Ends a {@link #pause}. */
    void resume() {
        depth--;
    }

    /**
     * Blocks in the transport's read. A lost rank is a failure only if a consumer of this worker still waits for
     * an end-of-stream from one of its workers (a rank whose workers all ended what this one consumes may leave).
     */
    int readTransport(int room, long nanos) throws RdmxException, InterruptedException {
        try {
            return transport.read(local, dispatch, room, nanos);
        } catch (ConnectionClosedException e) {
            return lost(e);
        }
    }

    /** {@link #readTransport} without blocking. */
    private int pollTransport(int room) throws RdmxException {
        try {
            return transport.poll(local, dispatch, room);
        } catch (ConnectionClosedException e) {
            return lost(e);
        }
    }

    /** A rank was lost: a failure now if some consumer still waits on it, else later if one does. */
    private int lost(ConnectionClosedException e) throws ConnectionClosedException {
        int rank = cfg.rankOf(e.peer());
        if (rank < 0) {
            throw fail.apply(e);
        }
        gone[rank] = e;
        anyGone = true;
        checkGone();
        return 0;
    }

    /** Throws the loss of a rank some active consumer still waits on. */
    void checkGone() throws ConnectionClosedException {
        if (!anyGone) {
            return;
        }
        int workers = cfg.workers();
        for (int r = 0; r < gone.length; r++) {
            if (gone[r] != null && consumers.waitsOn(r * workers, workers)) {
                throw fail.apply(gone[r]);
            }
        }
    }

    int readAll() throws RdmxException {
        int n = 0;
        int base = global - local;
        for (int s = 0; s < localIn.length; s++) {
            int room = inbox.room();
            if (room == 0) {
                return n;
            }
            localSource = base + s;
            int k = localIn[s].read(localDispatch, room);
            if (k > 0 && s != local) {
                spaceFreed.accept(s);
            }
            n += k;
        }
        int room = inbox.room();
        if (room > 0) {
            n += pollTransport(room);
        }
        return n;
    }

    /** @return ranks seen leaving after they had ended every stream this worker consumes (not failures) */
    int ranksGone() {
        int n = 0;
        for (ConnectionClosedException e : gone) {
            if (e != null) {
                n++;
            }
        }
        return n;
    }

    /**
     * A record read from a ring: a credit is counted at once; a record is delivered unless records of its exchange
     * wait in the inbox (or nobody consumes it yet, or a handler runs), and what is not delivered is set aside.
     *
     * @param source the sending worker
     * @param stream its stream id
     * @param buf the ring's buffer
     * @param off the payload's index
     * @param len the payload's length
     */
    void dispatch(int source, int stream, ByteBuffer buf, int off, int len) {
        int id = ShuffleFrameDescriptor.exchange(stream);
        if (ShuffleFrameDescriptor.isCredit(stream, len)) {
            window.credited(source, id, ShuffleFrameDescriptor.creditBytes(buf, off),
                ShuffleFrameDescriptor.creditMark(buf, off));
            return;
        }
        Consumers.Consumed c = consumers.get(id);
        if (depth == 0 && (c != null ? c.staged == 0 : consumers.released(id))) {
            int done = deliver(stream, buf, off, len);
            if (done == len) {
                window.took(source, id, Inbox.charge(len));
                return;
            }
            inbox.stage(source, stream, buf, off + done, len - done, Inbox.charge(len));
        } else {
            inbox.stage(source, stream, buf, off, len, Inbox.charge(len));
        }
    }

    /**
     * Delivers the inbox ({@link Inbox#deliver}), unless delivery is paused.
     *
     * @return records delivered from
     */
    int deliverInbox() {
        return depth == 0 && inbox.records() > 0 ? inbox.deliver(decoder) : 0;
    }

    /**
     * Delivers a record (or what is left of it) to its consumer.
     *
     * @return bytes taken: all of them, or fewer if the handler was back-pressured or nobody consumes it yet
     */
    int deliver(int stream, ByteBuffer buf, int off, int len) {
        int id = ShuffleFrameDescriptor.exchange(stream);
        Consumers.Consumed c = consumers.get(id);
        if (c == null) {
            return consumers.released(id) ? len : 0; // released: dropped; not consumed yet: set aside
        }
        if (ShuffleFrameDescriptor.isControl(stream)) {
            int from = ShuffleFrameDescriptor.endOfStreamWorker(buf, off, len);
            if (from < 0 || from >= total || c.eosFrom[from]) {
                throw new IllegalStateException("worker " + global + ": end-of-stream of exchange " + c.exchange.id()
                    + " from worker=" + from + " (length=" + len + "): not a worker of [0, " + total + ") that had not"
                    + " ended it yet");
            }
            c.eosFrom[from] = true;
            if (++c.eos == total) {
                window.oweAll(c.exchange.id()); // nothing more of it comes
            }
            return len;
        }
        depth++;
        try {
            switch (c.kind) {
                case Consumers.KIND_INT: {
                    int n = rowsOf(c, len);
                    for (int i = 0; i < n; i++) {
                        if (!c.ints.onInt(buf.getInt(off + 4 * i))) {
                            c.received += i;
                            return 4 * i;
                        }
                    }
                    c.received += n;
                    return len;
                }
                case Consumers.KIND_LONG: {
                    int n = rowsOf(c, len);
                    for (int i = 0; i < n; i++) {
                        if (!c.longs.onLong(buf.getLong(off + 8 * i))) {
                            c.received += i;
                            return 8 * i;
                        }
                    }
                    c.received += n;
                    return len;
                }
                case Consumers.KIND_ROW: {
                    int w = c.width == 0 ? len : c.width;
                    int n = c.width == 0 ? 1 : rowsOf(c, len);
                    for (int i = 0; i < n; i++) {
                        if (!c.rows.onRow(view.set(buf, off + w * i, w, 1))) {
                            c.received += i;
                            return w * i;
                        }
                    }
                    c.received += n;
                    return len;
                }
                case Consumers.KIND_BATCH: {
                    int n = rowsOf(c, len);
                    int k = c.batches.onBatch(view.set(buf, off, c.width, n));
                    if (k < 0 || k > n) {
                        throw new IllegalStateException("worker " + global + ": batch handler of exchange "
                            + c.exchange.id() + " took rows=" + k + " of " + n);
                    }
                    c.received += k;
                    return k * c.width;
                }
                default: {
                    Object row = c.exchange.serializer().read(buf, off, len);
                    c.objects.accept(row);
                    c.received++;
                    return len;
                }
            }
        } finally {
            depth--;
        }
    }

    private int rowsOf(Consumers.Consumed c, int len) {
        return rowsIn(global, c.exchange.id(), len, c.width);
    }

    /**
     * Checks a received record of a fixed-width exchange (its length is what the peer announced).
     *
     * @param worker the receiving worker, for the message
     * @param exchange the exchange id, for the message
     * @param length the record's length
     * @param width the exchange's row width (at least 1)
     * @return the rows in it
     * @throws IllegalStateException naming the length and width if the length is not a whole number of rows
     */
    static int rowsIn(int worker, int exchange, int length, int width) {
        if (length < 0 || length % width != 0) {
            throw new IllegalStateException("worker " + worker + ": record of exchange " + exchange
                + " with length=" + length + ", not a multiple of its width=" + width);
        }
        return length / width;
    }
}
