package io.rdmx.shuffle;

import io.rdmx.channel.RingBuffer;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RdmxTimeoutException;
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
 *
 * <h2>Inside</h2>
 * A facade over one worker's pieces, each of its thread: {@link Packer} (packing and offers),
 * {@link ExchangeWindow} (the per-exchange credit windows), {@link Inbox} (records set aside),
 * {@link Delivery} (reading, dispatch and decoding), {@link Consumers} (the consumer registry) and
 * {@link Parking} (the blocking waits and the wake-ups of the other workers of its process). What the shuffle
 * writes in a record (the control bit of its stream id, credits, ends-of-stream) is in
 * {@link ShuffleFrameDescriptor}. A lost peer is recorded here ({@link #failure()}).
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

    private final ShuffleService svc;
    private final int local;
    private final int global;
    private final int total;
    private final ShuffleTransport.Outbox[] outboxes;
    /** The largest record of this worker's destinations (the in-process rings, to itself included). */
    private final int largestRecord;
    private final long idleNanos;

    private final Consumers consumers;
    private final ExchangeWindow window;
    private final Inbox inbox;
    private final Packer packer;
    private final Delivery delivery;

    private final Parking parking;
    private ConnectionClosedException failure;

    Worker(ShuffleService svc, ShuffleTransport transport, int local, RingBuffer[][] localRings) {
        this.svc = svc;
        this.local = local;
        ShuffleConfig cfg = svc.config();
        this.global = cfg.rank() * cfg.workers() + local;
        this.total = cfg.processes() * cfg.workers();
        this.idleNanos = cfg.idleTimeout().toNanos();
        this.outboxes = new ShuffleTransport.Outbox[total];
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
        RingBuffer[] localIn = new RingBuffer[cfg.workers()];
        RingBuffer[] localOut = new RingBuffer[cfg.workers()];
        for (int s = 0; s < cfg.workers(); s++) {
            localIn[s] = localRings[s][local];
            localOut[s] = localRings[local][s];
        }
        this.largestRecord = maxPayload;
        // the largest record a peer may send (the same configuration everywhere)
        int largestIn = Math.max(largest, cfg.bufferSize() / 4);
        this.consumers = new Consumers(global, total);
        this.window = new ExchangeWindow(global, outboxes, cfg.windowBytes(), Inbox.maxRecord(largestIn),
            consumers::noMoreOf);
        this.inbox = new Inbox(global, cfg.inboxBytes(), largestIn, consumers, window);
        this.packer = new Packer(global, outboxes, localOut, cfg.packBytes(), window);
        this.delivery = new Delivery(cfg, transport, local, localIn, consumers, window, inbox,
            s -> svc.worker(s).wakeIfWaitingForSpace(local), this::fail);
        this.parking = new Parking(transport, local, outboxes, localOut, packer, window, inbox, delivery);
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
        packer.limitRows(bytes);
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

    /** A worker of this process committed to the ring it writes this worker: wakes this one if it waits. */
    void wakeIfWaiting() {
        parking.wakeIfWaiting();
    }

    /**
     * Another worker of this process read from the ring this worker writes it: wakes this worker if it waits for
     * space in that very ring.
     *
     * @param reader that worker's local index
     */
    void wakeIfWaitingForSpace(int reader) {
        parking.wakeIfWaitingForSpace(reader);
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
        consumers.register(ex, kind, handler, inbox.count(ex.id()));
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
        register(ex, Consumers.KIND_OBJECT, (Consumer<Object>) (Consumer<?>) handler);
    }

    /**
     * @param ex an exchange of 4-byte rows ({@link ShuffleService#intExchange})
     * @param handler receives every int routed here
     */
    public void consumeInts(Exchange<?> ex, Handlers.IntHandler handler) {
        checkWidth(ex, 4, "consumeInts");
        register(ex, Consumers.KIND_INT, handler);
    }

    /**
     * @param ex an exchange of 8-byte rows ({@link ShuffleService#longExchange})
     * @param handler receives every long routed here
     */
    public void consumeLongs(Exchange<?> ex, Handlers.LongHandler handler) {
        checkWidth(ex, 8, "consumeLongs");
        register(ex, Consumers.KIND_LONG, handler);
    }

    /**
     * @param ex any exchange (object rows: a view of the serialized bytes)
     * @param handler receives a flyweight view of each row
     */
    public void consumeRows(Exchange<?> ex, Handlers.RowHandler handler) {
        register(ex, Consumers.KIND_ROW, handler);
    }

    /**
     * @param ex a fixed-width exchange
     * @param handler receives the rows of each record in one call
     */
    public void consumeBatches(Exchange<?> ex, Handlers.BatchHandler handler) {
        checkWidth(ex, -1, "consumeBatches");
        register(ex, Consumers.KIND_BATCH, handler);
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
        if (consumers.release(ex)) {
            inbox.drop(id); // abandoned: its senders get the space back
        }
        packer.drop(id); // before the flush below, which would emit its packs
        window.oweAll(id); // the exchange's counts end at zero on both sides
        if (window.owes()) {
            window.sendCredits();
            flush();
        }
        inbox.resetIfEmpty();
    }

    /**
     * @param ex an exchange
     * @return rows of it delivered to this worker
     */
    public long rowsReceived(Exchange<?> ex) {
        return consumers.rowsReceived(ex);
    }

    /**
     * @param ex an exchange this worker consumes
     * @return true once every producer sent end-of-stream to this worker and every row was delivered
     */
    public boolean done(Exchange<?> ex) {
        return consumers.done(ex);
    }

    // ------------------------------------------------------------------------------------------------ sending

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
            return packer.offerInt(ex, value);
        } catch (ConnectionClosedException e) {
            fail(e);
            return CLOSED;
        }
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
            return packer.offerLong(ex, value);
        } catch (ConnectionClosedException e) {
            fail(e);
            return CLOSED;
        }
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
            return packer.offerRow(ex, key, writer);
        } catch (ConnectionClosedException e) {
            fail(e);
            return CLOSED;
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
            return packer.offer(ex, row);
        } catch (ConnectionClosedException e) {
            fail(e);
            return CLOSED;
        }
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
        int rc;
        try {
            rc = packer.offerFinish(ex);
        } catch (ConnectionClosedException e) {
            fail(e);
            return CLOSED;
        }
        if (rc == OK) {
            flush();
        }
        return rc;
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
            return packer.flush();
        } catch (ConnectionClosedException e) {
            fail(e);
            return CLOSED;
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

    /** Waits for space in the back-pressured buffer, reading into the inbox meanwhile ({@link Parking}). */
    private void awaitSpace(long deadline) throws RdmxException, InterruptedException {
        if (System.nanoTime() > deadline) {
            throw new RdmxTimeoutException("worker " + global + ": " + blockedOn(packer.pressuredDst(),
                packer.pressuredByWindow(), window.hitExchange()) + " for "
                + TimeUnit.NANOSECONDS.toSeconds(idleNanos) + " s (inbox " + inbox.live() + " of "
                + inbox.capacity() + " bytes, inboxBytes)");
        }
        parking.awaitSpace();
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
        if (delivery.paused()) {
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
        delivery.checkGone();
        int n = delivery.deliverInbox();
        n += delivery.readAll();
        if (window.owes()) {
            window.sendCredits();
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
        return parking.await(unit.toNanos(timeout));
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
            packer.clearPressure();
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
            int dst = packer.pressuredDst();
            boolean byWindow = packer.pressuredByWindow();
            int exchange = window.hitExchange();
            flushedAt = System.nanoTime(); // await flushes first
            if (await(100, TimeUnit.MILLISECONDS) > 0) {
                idleSince = System.nanoTime();
            } else if (System.nanoTime() - idleSince > idleNanos) {
                throw new RdmxTimeoutException("worker " + global + (dst >= 0 ? " could not send: "
                    + blockedOn(dst, byWindow, exchange) : " received nothing") + " for "
                    + TimeUnit.NANOSECONDS.toSeconds(idleNanos) + " s and has no local work left (inbox "
                    + inbox.live() + " of " + inbox.capacity() + " bytes" + (dst >= 0 && inbox.room() == 0
                    ? "; full of rows its handlers could not pass on: workers waiting on each other's full inboxes"
                    + " deadlock, raise inboxBytes" : "") + ")");
            }
        }
    }

    /** @return what the last back-pressured offer waits for, for a message */
    private String blockedOn(int dst, boolean byWindow, int exchange) {
        return byWindow ? "worker " + dst + " credited back too few of the rows of exchange " + exchange
            + " it holds (windowBytes=" + window.bytes() + ")" : "the buffer to worker " + dst + " stayed full";
    }

    /** @return bytes currently set aside in the inbox (received and not yet taken by a handler) */
    public long stashedBytes() {
        return inbox.live();
    }

    /** @return ranks this worker saw leave after they had ended every stream it consumed (not failures) */
    public int ranksGone() {
        return delivery.ranksGone();
    }

    /** @return offers (and flushes) that were back-pressured */
    public long backPressured() {
        return packer.backPressured();
    }

    /** @return rows this worker offered successfully */
    public long rowsSent() {
        return packer.rowsSent();
    }
}
