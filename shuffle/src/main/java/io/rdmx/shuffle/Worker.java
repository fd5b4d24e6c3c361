package io.rdmx.shuffle;

import io.rdmx.channel.RingBuffer;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RdmxTimeoutException;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * One worker thread's view of the shuffle service: it sends rows of any number of exchanges (stages) and
 * consumes the rows routed to it, all multiplexed over the same buffers. One thread per worker.
 *
 * <h2>The non-blocking API (for query engines with their own scheduler)</h2>
 * {@link #offerInt}, {@link #offerLong}, {@link #offerRow} (fixed-width rows, packed many to a record) and
 * {@link #offer} (object rows) return {@link #OK} or {@link #BACK_PRESSURED}; {@link #offerFinish} sends
 * end-of-stream; {@link #poll} delivers what arrived to the handlers registered with {@link #consumeInts},
 * {@link #consumeLongs}, {@link #consumeRows}, {@link #consumeBatches} or {@link #consume}, and emits partly
 * filled packs when nothing arrived; {@link #flush} emits them on demand. None of them blocks or allocates per
 * row (object rows allocate what their serializer reads).
 *
 * <p>Back-pressure, with bounded memory: a handler that cannot take a row now (its own offer was back-pressured)
 * returns false; the rest of that record, and everything read after it, go to the worker's inbox (at most
 * {@link ShuffleConfig#inboxBytes()} bytes) and are delivered first by later polls. A worker whose inbox cannot
 * take another record stops reading, so its senders' buffers fill and their offers are back-pressured in turn.
 * Rows for a worker of the same process skip the network through in-memory rings.
 *
 * <h2>The convenience loop</h2>
 * {@link #run} polls, runs local work when nothing arrived, and blocks (woken by arriving rows or freed space)
 * when there is no local work left; {@link #send} and {@link #finish} block while an outgoing buffer is full.
 */
public final class Worker {
    /** An offer was taken. */
    public static final int OK = 0;
    /**
     * An outgoing buffer (or the pack for that worker) is full: nothing was taken; poll, flush and offer the
     * same row again (for a broadcast row or an end-of-stream, before any other offer of that exchange).
     */
    public static final int BACK_PRESSURED = -1;
    /**
     * A peer this offer needed is lost: the query cannot complete; {@link #failure()} names it, and the next
     * {@link #poll} (and every blocking call) throws it.
     */
    public static final int CLOSED = -2;

    /** Local work a worker runs when no row is waiting: one step of the child operators. */
    @FunctionalInterface
    public interface LocalWork {
        /**
         * @return true if it did something (more may follow); false when there is no local work left
         * @throws Exception on failure
         */
        boolean step() throws Exception;
    }

    /**
     * In {@link #run}, while local work goes on: the longest rows wait in a partly filled pack or an unpublished
     * buffer before a flush (the channel's own time bound, its flush interval, covers only what was committed).
     */
    static final long RUN_FLUSH_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private static final int KIND_OBJECT = 0;
    private static final int KIND_INT = 1;
    private static final int KIND_LONG = 2;
    private static final int KIND_ROW = 3;
    private static final int KIND_BATCH = 4;
    /**
     * An inbox record's header: stream, length, bytes delivered, sending worker, and the bytes its sender counted
     * against its window (this header and the payload padded to 4, {@link #charge}).
     */
    static final int INBOX_HEADER = 20;
    /**
     * A credit's stream carries the end-of-stream bit with a payload of {@link #CREDIT_LENGTH} bytes (an
     * end-of-stream has 4): the bytes credited back (int), then {@link #CREDIT_MARK}.
     */
    private static final int CONTROL = 0x8000;
    private static final int CREDIT_LENGTH = 8;
    private static final int CREDIT_MARK = 0x43524454; // "CRDT"
    private static final int DELIVERED = -1;

    private static final class Consumed {
        final Exchange<?> exchange;
        final int kind;
        final int width;
        final Consumer<Object> objects;
        final Handlers.IntHandler ints;
        final Handlers.LongHandler longs;
        final Handlers.RowHandler rows;
        final Handlers.BatchHandler batches;
        /** End-of-stream marks received, and from which workers. */
        int eos;
        /** Records of it in the inbox: while there are, what arrives of it goes there too (its order kept). */
        int staged;
        /** The inbox pass in which its handler refused: its later records wait, those of others go on. */
        int refusedPass;
        final boolean[] eosFrom;
        long received;

        @SuppressWarnings("unchecked")
        Consumed(Exchange<?> exchange, int kind, Object handler, int total) {
            this.exchange = exchange;
            this.eosFrom = new boolean[total];
            this.kind = kind;
            this.width = exchange.width();
            this.objects = kind == KIND_OBJECT ? (Consumer<Object>) handler : null;
            this.ints = kind == KIND_INT ? (Handlers.IntHandler) handler : null;
            this.longs = kind == KIND_LONG ? (Handlers.LongHandler) handler : null;
            this.rows = kind == KIND_ROW ? (Handlers.RowHandler) handler : null;
            this.batches = kind == KIND_BATCH ? (Handlers.BatchHandler) handler : null;
        }
    }

    private final ShuffleService svc;
    private final ShuffleTransport transport;
    private final int local;
    private final int global;
    private final int total;
    private final ShuffleTransport.Outbox[] outboxes;
    /** The first outbox of each other process whose connection a cork holds ({@link #flush0}); none on shm. */
    private final int[] corked;
    private final RingBuffer[] localIn;
    private final Consumed[] byId = new Consumed[Exchange.MAX_ID + 1];
    /**
     * Exchanges this worker released before they were done and has not consumed again: their records are
     * dropped, not set aside for a consumer that will not come (they would fill the inbox for good).
     */
    private final boolean[] released = new boolean[Exchange.MAX_ID + 1];
    /** Per exchange: the next worker of an interrupted broadcast or end-of-stream. */
    private final int[] cursor = new int[Exchange.MAX_ID + 1];
    /**
     * Per exchange with a broadcast row interrupted after some destinations took it: the row's bytes, which the
     * next offer (of the same row) sends to the rest without writing the row again.
     */
    private final java.util.Map<Integer, ByteBuffer> unsentCopies = new java.util.HashMap<>();
    /** A broadcast row is written here once, then copied to each destination (allocated at the first). */
    private ByteBuffer scratch;
    /** The largest record of this worker's destinations (the in-process rings, to itself included). */
    private final int largestRecord;
    /** The largest object row: {@link ShuffleService#maxRowBytes()}, the same for every destination. */
    private int maxRow;
    private final long idleNanos;
    private final RowView view = new RowView();

    /** Packs of fixed-width rows, one per destination worker. */
    private final ByteBuffer[] packs;
    private final int[] packLen;
    private final int[] packStream;
    private final int packCap;
    private int openPacks;

    /** Received records set aside: [stream][length][bytes taken][source][charge][payload, padded to 4]. */
    private final ByteBuffer inbox;
    /** The inbox's size in bytes. */
    private final int inboxCap;
    private final int maxRecord;
    private int head;
    private int tail;
    private int inboxRecords;
    /** Inbox bytes of records not delivered yet (the gaps delivered records leave are not counted). */
    private int live;
    /** Counts {@link #deliverInbox} passes ({@link Consumed#refusedPass}). */
    private int inboxPass;

    /** See {@link ShuffleConfig.Builder#windowBytes}. */
    private final int window;
    /**
     * Bytes taken from a sender that make a credit: half a window, or less where the largest record is more than
     * half of it (a sender stopped by its window holds more than window - the largest record).
     */
    private final int creditAt;
    /** Sent: per (exchange, receiving worker) the bytes it has not credited back. */
    private final ExchangeCounts uncredited;
    /** Received: per (exchange, sending worker) the bytes taken and not credited back yet. */
    private final ExchangeCounts taken;
    /** Credits to send: (sending worker &lt;&lt; 16 | exchange id), each once. */
    private int[] owed = new int[8];
    private int owedCount;
    /** Set when an offer's record did not fit its exchange's window (not a full buffer): wait for a credit. */
    private boolean windowHit;
    /**
     * Inbox bytes credited back when they were set aside, not when delivered: at most half the inbox. Records
     * set aside while delivery pauses (a blocking send waits, a handler runs) or behind a refusal go back to
     * their senders at once while this half has room, so two workers blocked sending to each other go on as
     * long as their inboxes have room; past it, the windows bound what each exchange holds in the other half.
     */
    private int eagerBytes;
    private boolean pressuredByWindow;
    private int pressuredExchange = -1;

    private volatile boolean waiting;
    /**
     * While {@link #waiting}: the worker of this process whose full ring (from this worker) it waits on, or -1.
     * That reader wakes it after a read; other readers of its rows do not (a wake-up for space it does not wait
     * for costs both threads a futex call and a context switch).
     */
    private volatile int spaceFrom = -1;
    /** The tail of that ring when the offer found it full: a tail that moved since means space, retry. */
    private long spaceTail;
    /** The rings to the workers of this process (this worker writes them). */
    private final RingBuffer[] localOut;
    /** Inside a handler call: delivery is not re-entered, records are set aside. */
    private int depth;
    /** The destination of the last back-pressured offer, -1 if none since. */
    private int pressuredDst = -1;
    private long backPressured;
    private ConnectionClosedException failure;
    /** Per rank: its loss, once a read reported it (a rank may leave once it sent every end-of-stream). */
    private final ConnectionClosedException[] gone;
    private boolean anyGone;
    private final java.util.ArrayList<Consumed> active = new java.util.ArrayList<>();
    private long rowsSent;

    private final ShuffleTransport.Receiver dispatch = this::dispatch;
    /** The in-process ring being read: {@link #localDispatch} passes its writer on. */
    private int localSource;
    private final RingBuffer.Handler localDispatch = (stream, buf, off, len) ->
        dispatch(localSource, stream, buf, off, len);

    Worker(ShuffleService svc, ShuffleTransport transport, int local, RingBuffer[][] localRings) {
        this.svc = svc;
        this.transport = transport;
        this.local = local;
        ShuffleConfig cfg = svc.config();
        this.global = cfg.rank() * cfg.workers() + local;
        this.total = cfg.processes() * cfg.workers();
        this.idleNanos = cfg.idleTimeout().toNanos();
        this.outboxes = new ShuffleTransport.Outbox[total];
        this.gone = new ConnectionClosedException[cfg.processes()];
        int maxPayload = Integer.MAX_VALUE;
        int largest = 0;
        for (int g = 0; g < total; g++) {
            int rank = g / cfg.workers();
            int w = g % cfg.workers();
            outboxes[g] = rank == cfg.rank() ? localOutbox(localRings[local][w], w)
                : transport.outbox(local, rank, w);
            maxPayload = Math.min(maxPayload, outboxes[g].maxPayload());
            largest = Math.max(largest, outboxes[g].maxPayload());
        }
        this.corked = java.util.stream.IntStream.range(0, cfg.processes())
            .map(r -> r * cfg.workers()).filter(g -> outboxes[g].corks()).toArray();
        this.localIn = new RingBuffer[cfg.workers()];
        this.localOut = new RingBuffer[cfg.workers()];
        for (int s = 0; s < cfg.workers(); s++) {
            localIn[s] = localRings[s][local];
            localOut[s] = localRings[local][s];
        }
        this.largestRecord = maxPayload;
        this.maxRow = maxPayload;
        this.packCap = Math.min(cfg.packBytes(), maxPayload);
        this.packs = new ByteBuffer[total];
        this.packLen = new int[total];
        this.packStream = new int[total];
        for (int g = 0; g < total; g++) {
            packs[g] = ByteBuffer.allocate(packCap).order(ByteOrder.LITTLE_ENDIAN);
            packStream[g] = -1;
        }
        this.inboxCap = cfg.inboxBytes();
        // direct, like the rings (mapped or allocateDirect): deliver() then reads records of one ByteBuffer class
        // whether they come from a ring or the inbox. A heap inbox made its getInt calls bimorphic: the first
        // record delivered from the inbox in a pass hit a class-check trap in the compiled deliver(), and C2
        // recompiled it (~120 ms of compiler time on this 2-core host) in every timed pass of the P=4 W=2 bench
        this.inbox = ByteBuffer.allocateDirect(inboxCap).order(ByteOrder.LITTLE_ENDIAN);
        // the largest record a peer may send (the same configuration everywhere), with its inbox header
        this.maxRecord = INBOX_HEADER + align4(Math.max(largest, cfg.bufferSize() / 4));
        this.window = cfg.windowBytes();
        this.creditAt = Math.max(1, Math.min(window / 2, window - maxRecord));
        this.uncredited = new ExchangeCounts(total);
        this.taken = new ExchangeCounts(total);
    }

    /** @return the largest record this worker may send to every one of its destinations */
    int largestRecord() {
        return largestRecord;
    }

    /**
     * Sets the largest object row (the service's, the least over its workers).
     *
     * @param bytes {@link ShuffleService#maxRowBytes()}
     */
    void limitRows(int bytes) {
        this.maxRow = bytes;
    }

    /**
     * @param len a record's payload length
     * @return what it counts against its exchange's window: the inbox space it takes if set aside
     */
    static int charge(int len) {
        return INBOX_HEADER + align4(len);
    }

    private static int align4(int n) {
        return (n + 3) & ~3;
    }

    private ShuffleTransport.Outbox localOutbox(RingBuffer ring, int dst) {
        return new RingOutbox(ring) {
            @Override
            public void commit() {
                super.commit();
                svc.worker(dst).wakeIfWaiting();
            }

            @Override
            public void flush() {
                // nothing to send: every commit is visible at once and woke the reader if it waited
            }
        };
    }

    void wakeIfWaiting() {
        VarHandle.fullFence();
        if (waiting) {
            transport.wakeup(local);
        }
    }

    /**
     * Another worker of this process read from the ring this worker writes it: wakes this worker if it waits for
     * space in that very ring.
     *
     * @param reader that worker's local index
     */
    void wakeIfWaitingForSpace(int reader) {
        VarHandle.fullFence();
        if (waiting && spaceFrom == reader) {
            transport.wakeup(local);
        }
    }

    /** @return this worker's index in its process */
    public int localIndex() {
        return local;
    }

    /** @return this worker's index among all workers of all processes */
    public int globalIndex() {
        return global;
    }

    /** @return all workers of all processes */
    public int totalWorkers() {
        return total;
    }

    // ---------------------------------------------------------------------------------------------- consumers

    private void register(Exchange<?> ex, int kind, Object handler) {
        if (handler == null) {
            throw new IllegalArgumentException("worker " + global + ": handler=null for " + ex);
        }
        if (byId[ex.id()] != null) {
            throw new IllegalStateException("worker " + global + " already consumes exchange " + ex.id());
        }
        Consumed c = new Consumed(ex, kind, handler, total);
        for (int p = head; p < tail; p = next(p)) {
            int s = inbox.getInt(p);
            if (s != DELIVERED && (s & Exchange.MAX_ID) == ex.id()) {
                c.staged++;
            }
        }
        byId[ex.id()] = c;
        released[ex.id()] = false;
        active.add(c);
    }

    private static void checkWidth(Exchange<?> ex, int want, String what) {
        if (want == 0 ? ex.width() != 0 : ex.width() == 0 || want > 0 && ex.width() != want) {
            throw new IllegalArgumentException(what + " on " + ex + ": width=" + ex.width() + " (needs "
                + (want == 0 ? "an object exchange" : want > 0 ? "width " + want : "a fixed-width exchange") + ")");
        }
    }

    /**
     * Registers this worker as the consumer of an object exchange. Rows that arrived earlier are delivered by the
     * next {@link #poll}.
     *
     * @param ex the exchange
     * @param handler called on this thread for every row routed here (it cannot refuse a row)
     * @param <T> row type
     */
    @SuppressWarnings("unchecked")
    public <T> void consume(Exchange<T> ex, Consumer<T> handler) {
        checkWidth(ex, 0, "consume");
        register(ex, KIND_OBJECT, (Consumer<Object>) (Consumer<?>) handler);
    }

    /**
     * @param ex an exchange of 4-byte rows ({@link ShuffleService#intExchange})
     * @param handler receives every int routed here
     */
    public void consumeInts(Exchange<?> ex, Handlers.IntHandler handler) {
        checkWidth(ex, 4, "consumeInts");
        register(ex, KIND_INT, handler);
    }

    /**
     * @param ex an exchange of 8-byte rows ({@link ShuffleService#longExchange})
     * @param handler receives every long routed here
     */
    public void consumeLongs(Exchange<?> ex, Handlers.LongHandler handler) {
        checkWidth(ex, 8, "consumeLongs");
        register(ex, KIND_LONG, handler);
    }

    /**
     * @param ex any exchange (object rows: a view of the serialized bytes)
     * @param handler receives a flyweight view of each row
     */
    public void consumeRows(Exchange<?> ex, Handlers.RowHandler handler) {
        register(ex, KIND_ROW, handler);
    }

    /**
     * @param ex a fixed-width exchange
     * @param handler receives the rows of each record in one call
     */
    public void consumeBatches(Exchange<?> ex, Handlers.BatchHandler handler) {
        checkWidth(ex, -1, "consumeBatches");
        register(ex, KIND_BATCH, handler);
    }

    /**
     * Forgets this worker's consumer of a finished exchange. An exchange id may be declared again only once
     * every worker of every process has released it (rows of a new incarnation must not meet an old consumer).
     *
     * <p>Released before it was {@link #done} (a query abandoned), the exchange's rows that this worker has set
     * aside, or that reach it until it consumes the id again, are dropped; so are rows it offered to the exchange
     * and has not sent yet (a partly filled pack). Rows of an abandoned exchange may still be in flight when its
     * id is declared again: do not reuse such an id.
     *
     * @param ex the exchange
     */
    public void release(Exchange<?> ex) {
        notInAHandler("release");
        int id = ex.id();
        Consumed c = byId[id];
        boolean abandoned = c != null && !done(ex);
        if (c != null) {
            active.remove(c);
            released[id] = abandoned; // a second release (no consumer left) keeps what the first decided
        }
        byId[id] = null;
        cursor[id] = 0;
        unsentCopies.remove(id);
        for (int p = head; p < tail && abandoned; ) {
            int stream = inbox.getInt(p);
            if (stream != DELIVERED && (stream & Exchange.MAX_ID) == id) {
                inbox.putInt(p, DELIVERED);
                inboxRecords--;
                live -= INBOX_HEADER + align4(inbox.getInt(p + 4));
                untake(p, id); // dropped: its sender gets the space back
            }
            p += INBOX_HEADER + align4(inbox.getInt(p + 4));
        }
        oweAll(id); // the exchange's counts end at zero on both sides
        if (owedCount > 0) {
            try {
                sendCredits();
            } catch (ConnectionClosedException e) {
                fail(e); // the next poll, offer or blocking call reports it
            }
            flush();
        }
        if (inboxRecords == 0) {
            head = 0;
            tail = 0;
        }
        for (int g = 0; g < packLen.length; g++) {
            if (packLen[g] > 0 && packStream[g] == id) {
                packLen[g] = 0;
                packStream[g] = -1;
                openPacks--;
            }
        }
    }

    /**
     * @param ex an exchange
     * @return rows of it delivered to this worker
     */
    public long rowsReceived(Exchange<?> ex) {
        Consumed c = byId[ex.id()];
        return c == null ? 0 : c.received;
    }

    /**
     * @param ex an exchange this worker consumes
     * @return true once every producer sent end-of-stream to this worker and every row was delivered
     */
    public boolean done(Exchange<?> ex) {
        int only = ex.routing().only();
        if (only != Routing.ALL && only != global) {
            return true;
        }
        Consumed c = byId[ex.id()];
        return c != null && c.eos == total && c.staged == 0;
    }

    private int next(int p) {
        return p + INBOX_HEADER + align4(inbox.getInt(p + 4));
    }

    // ------------------------------------------------------------------------------------------------ sending

    private int target(int dst, Exchange<?> ex) {
        if (dst < 0 || dst >= total) {
            throw new IllegalArgumentException("routing of exchange " + ex.id() + " returned worker=" + dst
                + " outside [0, " + total + ")");
        }
        return dst;
    }

    private int pressured(int dst) {
        pressuredDst = dst;
        pressuredByWindow = windowHit;
        windowHit = false;
        backPressured++;
        int w = localWorker(dst);
        if (w >= 0) {
            spaceTail = localOut[w].tailAcquire();
        }
        return BACK_PRESSURED;
    }

    /** @return the local index of a global worker of this process, -1 for another process's (or none) */
    private int localWorker(int g) {
        int workers = localOut.length;
        return g >= 0 && g / workers == global / workers ? g % workers : -1;
    }

    /**
     * Before a wait for space in a local ring: says which ring (a fence follows), then whether its reader moved
     * the tail since the offer found it full (then there is space: do not sleep; else the reader wakes this
     * worker after its next read, having seen {@link #spaceFrom}).
     *
     * @return true if space came already
     */
    private boolean armSpace(int w) {
        spaceFrom = w;
        waiting = true;
        VarHandle.fullFence();
        return localOut[w].tailAcquire() != spaceTail;
    }

    /**
     * Whether a record of {@code stream} may go to {@code g} now: its exchange's bytes that worker has not
     * credited back stay within the window with it (a record larger than the window goes alone; see
     * {@link ShuffleConfig.Builder#windowBytes}). If not, the offer waits for a credit.
     */
    private boolean windowOpen(int g, int stream, int len) {
        int id = stream & Exchange.MAX_ID;
        long held = uncredited.get(id, g);
        // a sender stopped here holds more than window - charge >= window - the largest record >= creditAt, which
        // the receiver credits once it has taken it: it never waits for a credit that does not come
        if (held == 0 || held + charge(len) <= window) {
            return true;
        }
        windowHit = true;
        pressuredExchange = id;
        return false;
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
        uncredited.add(packStream[g] & Exchange.MAX_ID, g, charge(len));
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
            if (!windowOpen(g, stream, packCap)) {
                return -1;
            }
            packStream[g] = stream;
            openPacks++;
        }
        packLen[g] = len + width;
        return len;
    }

    private void checkFixed(Exchange<?> ex, int width, String what) {
        if (ex.width() != width) {
            throw new IllegalArgumentException(what + " on " + ex + ": width=" + ex.width() + " (needs width "
                + width + ")");
        }
    }

    /**
     * Offers an int row of a 4-byte exchange, routed by its value.
     *
     * @param ex the exchange
     * @param value the row
     * @return {@link #OK}, {@link #BACK_PRESSURED} or {@link #CLOSED}
     */
    public int offerInt(Exchange<?> ex, int value) {
        if (failure != null) {
            return CLOSED;
        }
        try {
            return offerInt0(ex, value);
        } catch (ConnectionClosedException e) {
            fail(e);
            return CLOSED;
        }
    }

    private int offerInt0(Exchange<?> ex, int value) throws ConnectionClosedException {
        checkFixed(ex, 4, "offerInt");
        int dst = ex.routing().routeKey(value, total);
        if (dst == Routing.ALL) {
            return broadcastFixed(ex, value, 4, null);
        }
        int g = target(dst, ex);
        int at = reserve(g, ex.id(), 4);
        if (at < 0) {
            return pressured(g);
        }
        packs[g].putInt(at, value);
        rowsSent++;
        return OK;
    }

    /**
     * Offers a long row of an 8-byte exchange, routed by its value.
     *
     * @param ex the exchange
     * @param value the row
     * @return {@link #OK}, {@link #BACK_PRESSURED} or {@link #CLOSED}
     */
    public int offerLong(Exchange<?> ex, long value) {
        if (failure != null) {
            return CLOSED;
        }
        try {
            return offerLong0(ex, value);
        } catch (ConnectionClosedException e) {
            fail(e);
            return CLOSED;
        }
    }

    private int offerLong0(Exchange<?> ex, long value) throws ConnectionClosedException {
        checkFixed(ex, 8, "offerLong");
        int dst = ex.routing().routeKey(value, total);
        if (dst == Routing.ALL) {
            return broadcastFixed(ex, value, 8, null);
        }
        int g = target(dst, ex);
        int at = reserve(g, ex.id(), 8);
        if (at < 0) {
            return pressured(g);
        }
        packs[g].putLong(at, value);
        rowsSent++;
        return OK;
    }

    /**
     * Offers a fixed-width row written in place by {@code writer}, routed by {@code key}.
     *
     * @param ex a fixed-width exchange
     * @param key the routing key
     * @param writer writes the row's {@link Exchange#width()} bytes (a re-used object: no allocation per row)
     * @return {@link #OK}, {@link #BACK_PRESSURED} or {@link #CLOSED}
     */
    public int offerRow(Exchange<?> ex, long key, Handlers.RowWriter writer) {
        if (failure != null) {
            return CLOSED;
        }
        try {
            return offerRow0(ex, key, writer);
        } catch (ConnectionClosedException e) {
            fail(e);
            return CLOSED;
        }
    }

    private int offerRow0(Exchange<?> ex, long key, Handlers.RowWriter writer) throws ConnectionClosedException {
        if (ex.width() == 0) {
            throw new IllegalArgumentException("offerRow on " + ex + ": width=0 (needs a fixed-width exchange)");
        }
        int dst = ex.routing().routeKey(key, total);
        if (dst == Routing.ALL) {
            return broadcastFixed(ex, 0, ex.width(), writer);
        }
        int g = target(dst, ex);
        int at = reserve(g, ex.id(), ex.width());
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
        return OK;
    }

    /** Gives back the slot {@link #reserve} returned last for {@code g}. */
    private void unreserve(int g, int width) {
        packLen[g] -= width;
        if (packLen[g] == 0) {
            packStream[g] = -1;
            openPacks--;
        }
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
            int at = reserve(g, id, width);
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
        return OK;
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

    /**
     * Offers an object row (one record). A row of more than {@link Exchange#maxRowBytes()} bytes is refused
     * whatever its destination, and a broadcast row is serialized once, before any destination holds it: a row
     * that is refused, or whose serializer or routing throws, is sent to no worker, and the exchange's next offer
     * goes to every destination its routing names.
     *
     * @param ex an object exchange
     * @param row the row
     * @param <T> the row type
     * @return {@link #OK}, {@link #BACK_PRESSURED} or {@link #CLOSED}
     * @throws IllegalArgumentException if the row is larger than {@link Exchange#maxRowBytes()} (naming its size,
     *                                  the limit and the exchange), null, or its routing names no worker
     */
    public <T> int offer(Exchange<T> ex, T row) {
        if (failure != null) {
            return CLOSED;
        }
        try {
            return offer0(ex, row);
        } catch (ConnectionClosedException e) {
            fail(e);
            return CLOSED;
        }
    }

    private <T> int offer0(Exchange<T> ex, T row) throws ConnectionClosedException {
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
            return OK;
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
        return OK;
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
        if (!windowOpen(g, stream, len)) {
            return -1;
        }
        return outboxes[g].tryClaim(stream, len);
    }

    /** Publishes the claim {@link #claim} returned and counts it against the window. */
    private void committed(int g, int stream, int len) {
        outboxes[g].commit();
        uncredited.add(stream & Exchange.MAX_ID, g, charge(len));
    }

    /**
     * Offers end-of-stream of an exchange from this worker to every worker that can receive its rows (after the
     * rows packed for them).
     *
     * @param ex the exchange
     * @return {@link #OK} once sent to all, or {@link #BACK_PRESSURED} (offer it again)
     */
    public int offerFinish(Exchange<?> ex) {
        if (failure != null) {
            return CLOSED;
        }
        try {
            return offerFinish0(ex);
        } catch (ConnectionClosedException e) {
            fail(e);
            return CLOSED;
        }
    }

    private int offerFinish0(Exchange<?> ex) throws ConnectionClosedException {
        int only = ex.routing().only();
        int id = ex.id();
        for (int g = cursor[id]; g < total; g++) {
            if (only == Routing.ALL || only == g) {
                int at = claim(g, ex.eosStream(), 4);
                if (at < 0) {
                    cursor[id] = g;
                    return pressured(g);
                }
                outboxes[g].buffer().putInt(at, global); // the end-of-stream's payload: the sending worker
                committed(g, ex.eosStream(), 4);
            }
        }
        cursor[id] = 0;
        flush();
        return OK;
    }

    /**
     * Emits every partly filled pack and sends whatever is committed in every outgoing buffer.
     *
     * @return {@link #OK}, {@link #BACK_PRESSURED} if a pack could not be emitted yet, or {@link #CLOSED}
     */
    public int flush() {
        if (failure != null) {
            return CLOSED;
        }
        try {
            return flush0();
        } catch (ConnectionClosedException e) {
            fail(e);
            return CLOSED;
        }
    }

    private int flush0() throws ConnectionClosedException {
        // the outboxes of one process share its connection: one cork each, so that what this flush sends to a
        // process (its workers' rings) leaves in one system call on a socket, not one per ring
        for (int g : corked) {
            outboxes[g].cork();
        }
        try {
            if (owedCount > 0) {
                sendCredits();
            }
            int rc = OK;
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
     * Sends a row, blocking while an outgoing buffer is full (the convenience form of {@link #offer}; for
     * fixed-width exchanges use the offers). Not from inside a handler: there it cannot read while it waits.
     *
     * @param ex the exchange
     * @param row the row
     * @param <T> row type
     * @throws RdmxException if a peer is lost (names it) or the buffer stays full past the idle timeout
     * @throws InterruptedException if interrupted
     */
    public <T> void send(Exchange<T> ex, T row) throws RdmxException, InterruptedException {
        long deadline = System.nanoTime() + idleNanos;
        while (check(offer(ex, row)) != OK) {
            awaitSpace(deadline);
        }
    }

    /**
     * Sends end-of-stream of an exchange, blocking while an outgoing buffer is full.
     *
     * @param ex the exchange
     * @throws RdmxException if a peer is lost
     * @throws InterruptedException if interrupted
     */
    public void finish(Exchange<?> ex) throws RdmxException, InterruptedException {
        long deadline = System.nanoTime() + idleNanos;
        while (check(offerFinish(ex)) != OK) {
            awaitSpace(deadline);
        }
    }

    /** Sends whatever is committed (blocking while a pack cannot be emitted). */
    public void flushAll() throws RdmxException, InterruptedException {
        long deadline = System.nanoTime() + idleNanos;
        while (check(flush()) != OK) {
            awaitSpace(deadline);
        }
    }

    private int check(int rc) throws ConnectionClosedException {
        if (rc == CLOSED) {
            throw failure;
        }
        return rc;
    }

    /**
     * This worker failed: a peer it needed is lost. The service's close tells the other processes so
     * ({@link ShuffleService#close()}).
     *
     * @param e the loss
     * @return it
     */
    private ConnectionClosedException fail(ConnectionClosedException e) {
        failure = e;
        svc.failed(global, e);
        return e;
    }

    /** @return the lost peer's failure once an offer returned {@link #CLOSED}, else null */
    public ConnectionClosedException failure() {
        return failure;
    }

    /**
     * Waits for space in the back-pressured buffer: reads incoming records into the inbox meanwhile (not
     * delivering them), so two workers sending to each other cannot deadlock while their inboxes have room.
     */
    private void awaitSpace(long deadline) throws RdmxException, InterruptedException {
        // waiting for a credit: any record read may be it (no wake-up on space to arm)
        int dst = pressuredByWindow ? -1 : pressuredDst;
        if (System.nanoTime() > deadline) {
            throw new RdmxTimeoutException("worker " + global + ": " + blockedOn(pressuredDst, pressuredByWindow,
                pressuredExchange) + " for "
                + TimeUnit.NANOSECONDS.toSeconds(idleNanos) + " s (inbox " + live + " of "
                + inboxCap + " bytes, inboxBytes)");
        }
        if (owedCount > 0) {
            sendCredits();
        }
        for (ShuffleTransport.Outbox ob : outboxes) {
            ob.flush();
        }
        if (depth > 0) {
            // inside a handler: a ring is being read, it cannot be read again; wait for the receiver alone (no
            // wake-up is armed for that here: the bound is what ends this wait, unless another wake-up does)
            transport.park(local, 20_000);
            return;
        }
        depth++;
        ShuffleTransport.Outbox ob = dst >= 0 ? outboxes[dst] : null;
        if (ob != null) {
            ob.wakeOnSpace(local);
        }
        int spaceW = localWorker(dst);
        try {
            // waiting from before the read of the local rings: a commit after that read wakes this worker
            if (spaceW >= 0) {
                if (armSpace(spaceW)) {
                    return; // the reader freed space meanwhile
                }
            } else {
                waiting = true;
                VarHandle.fullFence();
            }
            if (readAll() == 0) {
                int room = room();
                if (room > 0) {
                    readTransport(room, TimeUnit.MILLISECONDS.toNanos(1));
                } else {
                    transport.park(local, 50_000); // inbox full: woken for space (armed above), bounded
                }
            }
        } finally {
            waiting = false;
            spaceFrom = -1;
            if (ob != null) {
                ob.wakeOnSpace(-1);
            }
            depth--;
        }
    }

    // ---------------------------------------------------------------------------------------------- receiving

    /**
     * Blocks in the transport's read. A lost rank is a failure only if a consumer of this worker still waits for
     * an end-of-stream from one of its workers (a rank whose workers all ended what this one consumes may leave).
     */
    private int readTransport(int room, long nanos) throws RdmxException, InterruptedException {
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
        int rank = svc.config().rankOf(e.peer());
        if (rank < 0) {
            fail(e);
            throw e;
        }
        gone[rank] = e;
        anyGone = true;
        checkGone();
        return 0;
    }

    /** Throws the loss of a rank some active consumer still waits on. */
    private void checkGone() throws ConnectionClosedException {
        int workers = svc.config().workers();
        for (int r = 0; r < gone.length; r++) {
            if (gone[r] == null) {
                continue;
            }
            for (Consumed c : active) {
                int only = c.exchange.routing().only();
                if (c.eos == total || only != Routing.ALL && only != global) {
                    continue;
                }
                for (int g = r * workers; g < (r + 1) * workers; g++) {
                    if (!c.eosFrom[g]) {
                        throw fail(gone[r]);
                    }
                }
            }
        }
    }

    /** Records the inbox can surely take now (each at most {@link #maxRecord} bytes). */
    private int room() {
        if (inboxRecords == 0) {
            head = 0;
            tail = 0;
        }
        // live bytes, not the span from head to tail: records delivered behind a refused one leave gaps that a
        // compaction (in stage) reclaims; counting them would stop every read, credits included
        int free = inboxCap - live;
        return Math.min(256, free / maxRecord);
    }

    private int readAll() throws RdmxException {
        int n = 0;
        int base = global - local;
        for (int s = 0; s < localIn.length; s++) {
            int room = room();
            if (room == 0) {
                return n;
            }
            localSource = base + s;
            int k = localIn[s].read(localDispatch, room);
            if (k > 0 && s != local) {
                svc.worker(s).wakeIfWaitingForSpace(local);
            }
            n += k;
        }
        int room = room();
        if (room > 0) {
            n += pollTransport(room);
        }
        return n;
    }

    /**
     * A record read from a ring: a credit is counted at once; a record is delivered unless records of its exchange
     * wait in the inbox (or nobody consumes it yet, or a handler runs), and what is not delivered is set aside.
     */
    private void dispatch(int source, int stream, ByteBuffer buf, int off, int len) {
        int id = stream & Exchange.MAX_ID;
        if ((stream & CONTROL) != 0 && len == CREDIT_LENGTH) {
            credited(source, id, buf.getInt(off), buf.getInt(off + 4));
            return;
        }
        Consumed c = byId[id];
        if (depth == 0 && (c != null ? c.staged == 0 : released[id])) {
            int done = deliver(stream, buf, off, len);
            if (done == len) {
                took(source, id, charge(len));
                return;
            }
            stage(source, stream, buf, off + done, len - done, charge(len));
        } else {
            stage(source, stream, buf, off, len, charge(len));
        }
    }

    /** A credit from a worker this one sent rows to: those bytes of that exchange are its to send again. */
    private void credited(int source, int id, int bytes, int mark) {
        long owing = uncredited.get(id, source);
        if (mark != CREDIT_MARK || bytes <= 0 || bytes > owing) {
            throw new IllegalStateException("worker " + global + ": credit from worker " + source + " for exchange "
                + id + " of bytes=" + bytes + " (mark=0x" + Integer.toHexString(mark) + "), but it holds " + owing
                + " uncredited bytes of it");
        }
        uncredited.add(id, source, -bytes);
    }

    /**
     * A record (or what was set aside of it) was delivered or dropped: its bytes go back to its sender, once half
     * a window of them gathered (or at once for an exchange nobody consumes or that has ended: nothing more of it
     * may come to round a credit up).
     */
    private void took(int source, int id, int bytes) {
        long n = taken.add(id, source, bytes);
        Consumed c = byId[id];
        if (n >= creditAt || c == null || c.eos == total) {
            owe(source, id);
        }
    }

    /** What every sender of an exchange is owed below the credit threshold goes back now. */
    private void oweAll(int id) {
        for (int s = 0; s < total; s++) {
            if (taken.get(id, s) > 0) {
                owe(s, id);
            }
        }
    }

    private void owe(int source, int id) {
        int e = source << 16 | id;
        for (int i = 0; i < owedCount; i++) {
            if (owed[i] == e) {
                return;
            }
        }
        if (owedCount == owed.length) {
            owed = java.util.Arrays.copyOf(owed, 2 * owedCount);
        }
        owed[owedCount++] = e;
    }

    /** The inbox record at {@code p}, of exchange {@code id}, is done with: credits it, unless that was done. */
    private void untake(int p, int id) {
        int charge = inbox.getInt(p + 16);
        if (charge < 0) {
            eagerBytes += charge;
        } else {
            took(inbox.getInt(p + 12), id, charge);
        }
    }

    /** Writes the credits owed (a credit whose buffer is full stays owed); the next flush sends them. */
    private void sendCredits() throws ConnectionClosedException {
        int kept = 0;
        for (int i = 0; i < owedCount; i++) {
            int e = owed[i];
            int source = e >>> 16;
            int id = e & 0xFFFF;
            long bytes = taken.get(id, source);
            if (bytes == 0) {
                continue;
            }
            ShuffleTransport.Outbox ob = outboxes[source];
            int at;
            try {
                at = ob.tryClaim(id | CONTROL, CREDIT_LENGTH);
            } catch (ConnectionClosedException gone) {
                taken.add(id, source, -bytes); // a rank that left (or was lost) needs no credit; a loss is seen
                continue;                        // where it matters: the reads and offers of that rank
            }
            if (at < 0) {
                owed[kept++] = e;
                continue;
            }
            ob.buffer().putInt(at, (int) bytes);
            ob.buffer().putInt(at + 4, CREDIT_MARK);
            ob.commit();
            taken.add(id, source, -bytes);
        }
        owedCount = kept;
    }

    private void stage(int source, int stream, ByteBuffer buf, int off, int len, int charge) {
        int need = INBOX_HEADER + align4(len);
        if (tail + need > inboxCap) {
            compact();
            if (tail + need > inboxCap) {
                throw new IllegalStateException("worker " + global + ": inbox overflow (record length=" + len
                    + ", " + live + " of " + inboxCap + " bytes used)");
            }
        }
        inbox.putInt(tail, stream);
        inbox.putInt(tail + 4, len);
        inbox.putInt(tail + 8, 0);
        inbox.putInt(tail + 12, source);
        if (eagerBytes + charge <= inboxCap / 2) {
            eagerBytes += charge;
            took(source, stream & Exchange.MAX_ID, charge);
            inbox.putInt(tail + 16, -charge); // credited already
        } else {
            inbox.putInt(tail + 16, charge);
        }
        inbox.put(tail + INBOX_HEADER, buf, off, len);
        tail += need;
        live += need;
        inboxRecords++;
        Consumed c = byId[stream & Exchange.MAX_ID];
        if (c != null) {
            c.staged++;
        }
    }

    /** Moves the records not yet delivered to the start of the inbox. */
    private void compact() {
        int to = 0;
        for (int p = head; p < tail; ) {
            int size = INBOX_HEADER + align4(inbox.getInt(p + 4));
            if (inbox.getInt(p) != DELIVERED) {
                if (p != to) {
                    inbox.put(to, inbox, p, size); // overlapping ranges copy as if through a temporary
                }
                to += size;
            }
            p += size;
        }
        head = 0;
        tail = to;
    }

    /**
     * Delivers a record (or what is left of it) to its consumer.
     *
     * @return bytes taken: all of them, or fewer if the handler was back-pressured or nobody consumes it yet
     */
    private int deliver(int stream, ByteBuffer buf, int off, int len) {
        Consumed c = byId[stream & Exchange.MAX_ID];
        if (c == null) {
            return released[stream & Exchange.MAX_ID] ? len : 0; // released: dropped; not consumed yet: set aside
        }
        if ((stream & 0x8000) != 0) {
            int from = len == 4 ? buf.getInt(off) : -1;
            if (from < 0 || from >= total || c.eosFrom[from]) {
                throw new IllegalStateException("worker " + global + ": end-of-stream of exchange " + c.exchange.id()
                    + " from worker=" + from + " (length=" + len + "): not a worker of [0, " + total + ") that had not"
                    + " ended it yet");
            }
            c.eosFrom[from] = true;
            if (++c.eos == total) {
                oweAll(c.exchange.id()); // nothing more of it comes
            }
            return len;
        }
        depth++;
        try {
            switch (c.kind) {
                case KIND_INT: {
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
                case KIND_LONG: {
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
                case KIND_ROW: {
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
                case KIND_BATCH: {
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

    private int rowsOf(Consumed c, int len) {
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

    /**
     * Delivers the inbox, each exchange's records in arrival order: records nobody consumes yet are skipped, and
     * once a handler refuses, the later records of its exchange wait while those of the others go on (an exchange
     * whose consumer waits on another one cannot hold that one's rows back).
     */
    private int deliverInbox() {
        int n = 0;
        int pass = ++inboxPass;
        for (int p = head; p < tail && depth == 0; ) {
            int stream = inbox.getInt(p);
            int len = inbox.getInt(p + 4);
            int size = INBOX_HEADER + align4(len);
            if (stream != DELIVERED) {
                int id = stream & Exchange.MAX_ID;
                Consumed c = byId[id];
                if (c == null && !released[id] || c != null && c.refusedPass == pass) {
                    p += size; // nobody consumes it yet, or its handler refused in this pass: later records go first
                    continue;
                }
                int done = inbox.getInt(p + 8);
                int k = deliver(stream, inbox, p + INBOX_HEADER + done, len - done);
                if (k > 0) {
                    n++;
                }
                if (done + k < len) {
                    inbox.putInt(p + 8, done + k);
                    c.refusedPass = pass; // c is there: a released exchange's records are dropped whole
                    p += size;
                    continue;
                }
                inbox.putInt(p, DELIVERED);
                inboxRecords--;
                live -= size;
                if (c != null) {
                    c.staged--;
                }
                untake(p, id);
            }
            if (p == head) {
                head = p + size;
            }
            p += size;
        }
        if (inboxRecords == 0) {
            head = 0;
            tail = 0;
        }
        return n;
    }

    /**
     * Delivers what arrived (the inbox first) to the registered handlers, without blocking; when nothing
     * arrived, emits the partly filled packs.
     *
     * @return records (or parts of records) delivered or set aside; 0 if there was nothing
     * @throws RdmxException if a peer is lost (names it)
     */
    public int poll() throws RdmxException {
        int n = receive();
        if (n == 0) {
            flush();
        }
        return n;
    }

    /**
     * A handler that polls would read the ring whose record it is handling from where that read began: the
     * record again, or records moved under it. Handlers may offer rows (a full buffer is waited for without
     * delivering); delivery is the worker's loop's.
     */
    private void notInAHandler(String call) {
        if (depth > 0) {
            throw new IllegalStateException("worker " + global + ": " + call + "() inside a row handler (a handler "
                + "may offer rows; return false to stop delivery instead, and " + call + " after the poll)");
        }
    }

    /** {@link #poll} without the flush: delivers the inbox, then what the rings hold. */
    private int receive() throws RdmxException {
        notInAHandler("poll");
        if (failure != null) {
            throw failure;
        }
        if (anyGone) {
            checkGone();
        }
        int n = inboxRecords > 0 ? deliverInbox() : 0;
        n += readAll();
        if (owedCount > 0) {
            sendCredits();
        }
        return n;
    }

    /**
     * Delivers the rows that are there, without blocking (the former name of {@link #poll}).
     *
     * @return what {@link #poll} returns
     * @throws RdmxException if a peer is lost (names it)
     */
    public int pump() throws RdmxException {
        return poll();
    }

    /**
     * Blocks until records arrive, space frees in the buffer the last offer found full, a peer fails, or the
     * timeout; for an engine's scheduler with nothing to do. Emits packs and sends what is committed first.
     *
     * @param timeout the bound
     * @param unit its unit
     * @return records read meanwhile (delivered or set aside); 0 on timeout or a wake-up for space
     * @throws RdmxException if a peer is lost (names it)
     * @throws InterruptedException if interrupted
     */
    public int await(long timeout, TimeUnit unit) throws RdmxException, InterruptedException {
        notInAHandler("await");
        if (failure != null) {
            throw failure;
        }
        flush();
        int dst = pressuredByWindow ? -1 : pressuredDst; // waiting for a credit: any record read may be it
        pressuredDst = -1;
        ShuffleTransport.Outbox ob = dst >= 0 ? outboxes[dst] : null;
        long nanos = unit.toNanos(timeout);
        if (ob != null) {
            ob.wakeOnSpace(local);
            nanos = Math.min(nanos, TimeUnit.MILLISECONDS.toNanos(1));
        }
        if (owedCount > 0) {
            // a credit waits for space in a full ring: nothing arms a wake-up for that, look again soon
            nanos = Math.min(nanos, TimeUnit.MILLISECONDS.toNanos(1));
        }
        int spaceW = localWorker(dst);
        try {
            if (spaceW >= 0) {
                if (armSpace(spaceW)) {
                    return 0; // the reader freed space meanwhile
                }
            } else {
                waiting = true;
                VarHandle.fullFence();
            }
            int n = readAll();
            int room = room();
            if (n == 0 && room > 0) {
                n = readTransport(room, Math.max(1, nanos));
            } else if (n == 0) {
                transport.park(local, Math.min(nanos, 50_000)); // inbox full: as in awaitSpace
            }
            return n;
        } finally {
            waiting = false;
            spaceFrom = -1;
            if (ob != null) {
                ob.wakeOnSpace(-1);
            }
        }
    }

    /**
     * The convenience loop of a plan on top of {@link #poll} and {@link #await}: deliver arrived rows; else run
     * local work; else, unless {@code finished}, block until something arrives or space frees.
     *
     * @param work one step of the child operators
     * @param finished true when this worker's part of the plan is complete
     * @throws Exception if a peer is lost (a {@link io.rdmx.transport.ConnectionClosedException} naming it),
     *                   nothing arrives within the idle timeout, or the local work fails
     */
    public void run(LocalWork work, BooleanSupplier finished) throws Exception {
        long idleSince = System.nanoTime();
        long flushedAt = idleSince;
        while (!finished.getAsBoolean()) {
            pressuredDst = -1;
            // no flush per empty poll while local work goes on (it would cut packs and publish every ring after
            // every step, waking each parked reader for a few rows): full packs and the batching threshold send,
            // a flush at most every RUN_FLUSH_NANOS bounds how long rows wait, and await flushes when idle
            if (receive() > 0 || work.step()) {
                long now = System.nanoTime();
                idleSince = now;
                if (now - flushedAt > RUN_FLUSH_NANOS) {
                    flush();
                    flushedAt = now;
                }
                continue;
            }
            if (finished.getAsBoolean()) {
                return;
            }
            int dst = pressuredDst;
            boolean byWindow = pressuredByWindow;
            int exchange = pressuredExchange;
            flushedAt = System.nanoTime(); // await flushes first
            if (await(100, TimeUnit.MILLISECONDS) > 0) {
                idleSince = System.nanoTime();
            } else if (System.nanoTime() - idleSince > idleNanos) {
                throw new RdmxTimeoutException("worker " + global + (dst >= 0 ? " could not send: "
                    + blockedOn(dst, byWindow, exchange) : " received nothing") + " for "
                    + TimeUnit.NANOSECONDS.toSeconds(idleNanos) + " s and has no local work left (inbox "
                    + live + " of " + inboxCap + " bytes" + (dst >= 0 && room() == 0
                    ? "; full of rows its handlers could not pass on: workers waiting on each other's full inboxes"
                    + " deadlock, raise inboxBytes" : "") + ")");
            }
        }
    }

    /** @return what the last back-pressured offer waits for, for a message */
    private String blockedOn(int dst, boolean byWindow, int exchange) {
        return byWindow ? "worker " + dst + " credited back too few of the rows of exchange " + exchange
            + " it holds (windowBytes=" + window + ")" : "the buffer to worker " + dst + " stayed full";
    }

    /** @return bytes currently set aside in the inbox (received and not yet taken by a handler) */
    public long stashedBytes() {
        return live;
    }

    /** @return ranks this worker saw leave after they had ended every stream it consumed (not failures) */
    public int ranksGone() {
        int n = 0;
        for (ConnectionClosedException e : gone) {
            if (e != null) {
                n++;
            }
        }
        return n;
    }

    /** @return offers (and flushes) that were back-pressured */
    public long backPressured() {
        return backPressured;
    }

    /** @return rows this worker offered successfully */
    public long rowsSent() {
        return rowsSent;
    }
}
