package io.rdmx.shuffle;

import io.rdmx.channel.RingBuffer;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RdmxTimeoutException;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * One worker thread's view of the shuffle service: it sends rows of any number of exchanges (stages) and
 * consumes the rows routed to it, all multiplexed over the same buffers. One thread per worker.
 *
 * <p>Push-based: a sender never waits for a request; it blocks only when an outgoing buffer is full, and while
 * it waits it keeps draining its own incoming buffers (setting the rows aside, not processing them), so two
 * workers sending to each other cannot deadlock. Rows for a worker of the same process skip the network
 * through in-memory rings. {@link #run} consumes rows as they arrive; when none are there it first runs local
 * work (the child operator); it blocks only when there is no local work left, until rows or end-of-stream
 * arrive, or a peer fails (an exception naming it), or the idle timeout passes.
 */
public final class Worker {
    /** Local work a worker runs when no row is waiting: one step of the child operators. */
    @FunctionalInterface
    public interface LocalWork {
        /**
         * @return true if it did something (more may follow); false when there is no local work left
         * @throws Exception on failure
         */
        boolean step() throws Exception;
    }

    private static final class Consumed<T> {
        final Exchange<T> exchange;
        final Consumer<T> handler;
        int eos;
        long rows;

        Consumed(Exchange<T> exchange, Consumer<T> handler) {
            this.exchange = exchange;
            this.handler = handler;
        }

        @SuppressWarnings("unchecked")
        void deliverRow(Object row) {
            handler.accept((T) row);
            rows++;
        }
    }

    /**
     * A received record, already deserialized (rows never hold ring memory past the read that found them:
     * handlers run only after the ring's space was released, so a handler that blocks cannot pin it).
     * {@code bytes} holds the raw payload only when the exchange is not declared yet.
     */
    private record Stashed(int stream, Object row, byte[] bytes) {
    }

    private final ShuffleService svc;
    private final ShuffleTransport transport;
    private final int local;
    private final int global;
    private final int total;
    private final ShuffleTransport.Outbox[] outboxes;
    private final RingBuffer[] localIn;
    private final Map<Integer, Consumed<?>> consumers = new HashMap<>();
    private final Consumed<?>[] byId = new Consumed<?>[Exchange.MAX_ID + 1];
    private final Exchange<?>[] declaredById = new Exchange<?>[Exchange.MAX_ID + 1];
    private final ArrayDeque<Stashed> pending = new ArrayDeque<>();
    private final long idleNanos;
    private volatile boolean waiting;
    private int depth;
    private long stashedBytes;

    private final RingBuffer.Handler dispatch = this::dispatch;

    Worker(ShuffleService svc, ShuffleTransport transport, int local, RingBuffer[][] localRings) {
        this.svc = svc;
        this.transport = transport;
        this.local = local;
        ShuffleConfig cfg = svc.config();
        this.global = cfg.rank() * cfg.workers() + local;
        this.total = cfg.processes() * cfg.workers();
        this.idleNanos = cfg.idleTimeout().toNanos();
        this.outboxes = new ShuffleTransport.Outbox[total];
        for (int g = 0; g < total; g++) {
            int rank = g / cfg.workers();
            int w = g % cfg.workers();
            outboxes[g] = rank == cfg.rank() ? localOutbox(localRings[local][w], w)
                : transport.outbox(local, rank, w);
        }
        this.localIn = new RingBuffer[cfg.workers()];
        for (int s = 0; s < cfg.workers(); s++) {
            localIn[s] = localRings[s][local];
        }
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
                svc.worker(dst).wakeIfWaiting();
            }
        };
    }

    void wakeIfWaiting() {
        VarHandle.fullFence();
        if (waiting) {
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

    /**
     * Registers this worker as a consumer of an exchange. Rows that arrived earlier are delivered on the next
     * {@link #pump}.
     *
     * @param ex the exchange
     * @param handler called on this thread for every row routed here
     * @param <T> row type
     */
    public <T> void consume(Exchange<T> ex, Consumer<T> handler) {
        Consumed<?> prev = consumers.get(ex.id());
        if (prev != null && prev.handler != null) {
            throw new IllegalStateException("worker " + global + " already consumes exchange " + ex.id());
        }
        Consumed<T> c = new Consumed<>(ex, handler);
        if (prev != null) {
            c.eos = prev.eos;
        }
        consumers.put(ex.id(), c);
        byId[ex.id()] = c;
        declaredById[ex.id()] = ex;
    }

    /**
     * Sends a row where the exchange routes it; blocks only while an outgoing buffer is full.
     *
     * @param ex the exchange
     * @param row the row
     * @param <T> row type
     * @throws RdmxException if a peer is lost (names it) or the buffer stays full past the idle timeout
     * @throws InterruptedException if interrupted
     */
    public <T> void send(Exchange<T> ex, T row) throws RdmxException, InterruptedException {
        int dst = ex.routing().route(row, total);
        RowSerializer<T> ser = ex.serializer();
        int len = ser.size(row);
        if (dst == Routing.ALL) {
            for (int g = 0; g < total; g++) {
                put(g, ex.dataStream(), len, row, ser);
            }
        } else {
            if (dst < 0 || dst >= total) {
                throw new IllegalArgumentException("routing of exchange " + ex.id() + " returned worker=" + dst
                    + " outside [0, " + total + ")");
            }
            put(dst, ex.dataStream(), len, row, ser);
        }
    }

    private <T> void put(int dst, int stream, int len, T row, RowSerializer<T> ser)
        throws RdmxException, InterruptedException {
        ShuffleTransport.Outbox ob = outboxes[dst];
        int at = ob.tryClaim(stream, len);
        if (at < 0) {
            at = blockedClaim(ob, dst, stream, len);
        }
        if (row != null) {
            ser.write(row, ob.buffer(), at);
        }
        ob.commit();
    }

    private int blockedClaim(ShuffleTransport.Outbox ob, int dst, int stream, int len)
        throws RdmxException, InterruptedException {
        long deadline = System.nanoTime() + idleNanos;
        svc.metricBlocked();
        depth++;
        ob.wakeOnSpace(local);
        try {
            while (true) {
                ob.flush();
                int at = ob.tryClaim(stream, len);
                if (at >= 0) {
                    return at;
                }
                if (drainLocal() + transport.poll(local, dispatch, 256) == 0) {
                    waiting = true;
                    try {
                        transport.read(local, dispatch, 256, TimeUnit.MILLISECONDS.toNanos(5));
                    } finally {
                        waiting = false;
                    }
                }
                if (System.nanoTime() > deadline) {
                    throw new RdmxTimeoutException("worker " + global + ": the buffer to worker " + dst
                        + " stayed full for " + TimeUnit.NANOSECONDS.toSeconds(idleNanos) + " s");
                }
            }
        } finally {
            ob.wakeOnSpace(-1);
            depth--;
        }
    }

    /**
     * Sends end-of-stream of an exchange from this worker to every worker that can receive its rows.
     *
     * @param ex the exchange
     * @throws RdmxException if a peer is lost
     * @throws InterruptedException if interrupted
     */
    public void finish(Exchange<?> ex) throws RdmxException, InterruptedException {
        int only = ex.routing().only();
        for (int g = 0; g < total; g++) {
            if (only == Routing.ALL || only == g) {
                put(g, ex.eosStream(), 0, null, null);
            }
        }
        flushAll();
    }

    /** Sends whatever is committed in every outgoing buffer. */
    public void flushAll() {
        for (ShuffleTransport.Outbox ob : outboxes) {
            ob.flush();
        }
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
        Consumed<?> c = consumers.get(ex.id());
        if (c == null || c.eos < total) {
            return false;
        }
        for (Stashed s : pending) {
            if ((s.stream() & Exchange.MAX_ID) == ex.id()) {
                return false;
            }
        }
        return true;
    }

    /**
     * Forgets this worker's consumer of a finished exchange. An exchange id may be declared again only once
     * every worker of every process has released it (rows of a new incarnation must not meet an old consumer).
     *
     * @param ex the exchange
     */
    public void release(Exchange<?> ex) {
        consumers.remove(ex.id());
        byId[ex.id()] = null;
        declaredById[ex.id()] = null;
    }

    /**
     * @param ex an exchange
     * @return rows of it delivered to this worker
     */
    public long rowsReceived(Exchange<?> ex) {
        Consumed<?> c = consumers.get(ex.id());
        return c == null ? 0 : c.rows;
    }

    private void dispatch(int stream, ByteBuffer buf, int off, int len) {
        int id = stream & Exchange.MAX_ID;
        Object row = null;
        byte[] bytes = null;
        if ((stream & 0x8000) == 0) {
            Exchange<?> ex = declaredById[id];
            if (ex == null) {
                ex = svc.declared(id);
            }
            if (ex != null) {
                row = ex.serializer().read(buf, off, len);
            } else {
                bytes = new byte[len];
                buf.get(off, bytes);
                stashedBytes += len;
                svc.metricStashed(len);
            }
        }
        pending.addLast(new Stashed(stream, row, bytes));
    }

    private int drainLocal() {
        int n = 0;
        for (int s = 0; s < localIn.length; s++) {
            int k = localIn[s].read(dispatch, 256);
            if (k > 0 && s != local) {
                svc.worker(s).wakeIfWaiting();
            }
            n += k;
        }
        return n;
    }

    /** Delivers received records in arrival order; stops when a handler blocks (nested records queue behind). */
    private int deliverPending() {
        int n = 0;
        int size = pending.size();
        for (int i = 0; i < size && depth == 0 && !pending.isEmpty(); i++) {
            Stashed s = pending.pollFirst();
            int id = s.stream() & Exchange.MAX_ID;
            Consumed<?> c = byId[id];
            if (c == null || c.handler == null) {
                pending.addLast(s);
                continue;
            }
            n++;
            if ((s.stream() & 0x8000) != 0) {
                c.eos++;
            } else if (s.bytes() != null) {
                stashedBytes -= s.bytes().length;
                c.deliverRow(c.exchange.serializer().read(ByteBuffer.wrap(s.bytes())
                    .order(java.nio.ByteOrder.LITTLE_ENDIAN), 0, s.bytes().length));
            } else {
                c.deliverRow(s.row());
            }
        }
        return n;
    }

    /**
     * Delivers the rows that are there (rows set aside first), without blocking.
     *
     * @return rows and end-of-stream marks handled
     * @throws RdmxException if a peer is lost (names it)
     */
    public int pump() throws RdmxException {
        int n = deliverPending();
        if (depth == 0 && !pending.isEmpty() && n == 0 && pending.size() > 100_000) {
            throw new IllegalStateException("worker " + global + " holds " + pending.size()
                + " rows of exchanges it does not consume");
        }
        int got = drainLocal() + transport.poll(local, dispatch, 256);
        return n + got + deliverPending();
    }

    /**
     * The worker loop of a plan: deliver arrived rows; else run local work; else, unless {@code finished},
     * block until something arrives.
     *
     * @param work one step of the child operators
     * @param finished true when this worker's part of the plan is complete
     * @throws Exception if a peer is lost (a {@link io.rdmx.transport.ConnectionClosedException} naming it),
     *                   nothing arrives within the idle timeout, or the local work fails
     */
    public void run(LocalWork work, BooleanSupplier finished) throws Exception {
        long idleSince = System.nanoTime();
        while (!finished.getAsBoolean()) {
            if (pump() > 0 || work.step()) {
                idleSince = System.nanoTime();
                continue;
            }
            if (finished.getAsBoolean()) {
                return;
            }
            flushAll();
            waiting = true;
            int n;
            try {
                VarHandle.fullFence();
                n = drainLocal();
                if (n == 0) {
                    n = transport.read(local, dispatch, 256, TimeUnit.MILLISECONDS.toNanos(100));
                }
            } finally {
                waiting = false;
            }
            if (n > 0) {
                deliverPending();
                idleSince = System.nanoTime();
            } else if (System.nanoTime() - idleSince > idleNanos) {
                throw new RdmxTimeoutException("worker " + global + " received nothing for "
                    + TimeUnit.NANOSECONDS.toSeconds(idleNanos) + " s and has no local work left");
            }
        }
    }

    /** @return bytes currently set aside (received while blocked, or before their consumer registered) */
    public long stashedBytes() {
        return stashedBytes;
    }
}
