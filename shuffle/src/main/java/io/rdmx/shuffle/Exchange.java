package io.rdmx.shuffle;

/**
 * A shuffle operator (one stage of a plan), identified by the same id on every process. Producers send rows
 * with {@link Worker#send}; consumers receive them in the handler registered with {@link Worker#consume}.
 *
 * @param <T> the row type
 */
public final class Exchange<T> {
    /** The largest exchange id (stream ids are 15 bits; the top bit marks end-of-stream). */
    public static final int MAX_ID = 0x7FFF;

    private final int id;
    private final Routing<T> routing;
    private final RowSerializer<T> serializer;

    Exchange(int id, Routing<T> routing, RowSerializer<T> serializer) {
        if (id < 0 || id > MAX_ID) {
            throw new IllegalArgumentException("exchange id=" + id + " outside [0, " + MAX_ID + "]");
        }
        this.id = id;
        this.routing = routing;
        this.serializer = serializer;
    }

    /** @return the id */
    public int id() {
        return id;
    }

    /** @return the routing */
    public Routing<T> routing() {
        return routing;
    }

    /** @return the serializer */
    public RowSerializer<T> serializer() {
        return serializer;
    }

    int dataStream() {
        return id;
    }

    int eosStream() {
        return id | 0x8000;
    }
}
