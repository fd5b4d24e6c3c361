package io.rdmx.shuffle;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * One worker's consumer registry: per exchange id the handler registered for its rows, what arrived of it
 * (ends-of-stream, rows, records waiting in the inbox), and the exchanges released before they were done. One
 * thread (the worker's).
 */
final class Consumers {
    static final int KIND_OBJECT = 0;
    static final int KIND_INT = 1;
    static final int KIND_LONG = 2;
    static final int KIND_ROW = 3;
    static final int KIND_BATCH = 4;

    /** The consumer of one exchange. */
    static final class Consumed {
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

    private final int global;
    private final int total;
    private final Consumed[] byId = new Consumed[Exchange.MAX_ID + 1];
    /**
     * Exchanges this worker released before they were done and has not consumed again: their records are
     * dropped, not set aside for a consumer that will not come (they would fill the inbox for good).
     */
    private final boolean[] released = new boolean[Exchange.MAX_ID + 1];
    private final List<Consumed> active = new ArrayList<>();

    /**
     * @param global the worker's global index, for messages
     * @param total all workers of all processes
     */
    Consumers(int global, int total) {
        this.global = global;
        this.total = total;
    }

    /**
     * Registers a consumer.
     *
     * @param ex the exchange
     * @param kind one of the {@code KIND_} constants, the handler's type
     * @param handler the handler
     * @param staged records of the exchange waiting in the inbox already
     * @throws IllegalArgumentException if the handler is null
     * @throws IllegalStateException if the exchange has a consumer already
     */
    void register(Exchange<?> ex, int kind, Object handler, int staged) {
        if (handler == null) {
            throw new IllegalArgumentException("worker " + global + ": handler=null for " + ex);
        }
        if (byId[ex.id()] != null) {
            throw new IllegalStateException("worker " + global + " already consumes exchange " + ex.id());
        }
        Consumed c = new Consumed(ex, kind, handler, total);
        c.staged = staged;
        byId[ex.id()] = c;
        released[ex.id()] = false;
        active.add(c);
    }

    /**
     * Forgets the consumer of an exchange.
     *
     * @param ex the exchange
     * @return true if it was abandoned: consumed and not {@link #done} (its records are dropped from now on)
     */
    boolean release(Exchange<?> ex) {
        int id = ex.id();
        Consumed c = byId[id];
        boolean abandoned = c != null && !done(ex);
        if (c != null) {
            active.remove(c);
            released[id] = abandoned; // a second release (no consumer left) keeps what the first decided
        }
        byId[id] = null;
        return abandoned;
    }

    /**
     * @param id an exchange id
     * @return its consumer, or null
     */
    Consumed get(int id) {
        return byId[id];
    }

    /**
     * @param id an exchange id
     * @return true if it was released before it was done and not consumed since: its records are dropped
     */
    boolean released(int id) {
        return released[id];
    }

    /**
     * @param id an exchange id
     * @return true if nothing more of it may come to this worker: nobody consumes it, or every worker ended it
     */
    boolean noMoreOf(int id) {
        Consumed c = byId[id];
        return c == null || c.eos == total;
    }

    /**
     * @param ex an exchange this worker consumes
     * @return true once every producer sent end-of-stream to this worker and every row was delivered
     */
    boolean done(Exchange<?> ex) {
        int only = ex.routing().only();
        if (only != Routing.ALL && only != global) {
            return true;
        }
        Consumed c = byId[ex.id()];
        return c != null && c.eos == total && c.staged == 0;
    }

    /**
     * @param ex an exchange
     * @return rows of it delivered to this worker
     */
    long rowsReceived(Exchange<?> ex) {
        Consumed c = byId[ex.id()];
        return c == null ? 0 : c.received;
    }

    /**
     * @param first a rank's first worker (global index)
     * @param workers the rank's workers
     * @return true if an active consumer that receives rows here still waits for an end-of-stream from one of them
     */
    boolean waitsOn(int first, int workers) {
        for (Consumed c : active) {
            int only = c.exchange.routing().only();
            if (c.eos == total || only != Routing.ALL && only != global) {
                continue;
            }
            for (int g = first; g < first + workers; g++) {
                if (!c.eosFrom[g]) {
                    return true;
                }
            }
        }
        return false;
    }
}
