package io.rdmx.shuffle;

/**
 * A shuffle operator (one stage of a plan), identified by the same id on every process. Rows are either objects
 * written by a {@link RowSerializer} (one record per row), or fixed-width rows ({@code width} bytes; ints, longs
 * or records written in place) packed many to a record.
 *
 * @param <T> the row type of an object exchange ({@link RowView} for a fixed-width one)
 */
public final class Exchange<T> {
    /**
     * The largest exchange id, 32767: the record header's stream id bits below the shuffle's control bit
     * ({@code ShuffleFrameDescriptor}).
     */
    public static final int MAX_ID = ShuffleFrameDescriptor.MAX_EXCHANGE_ID;

    private final int id;
    private final Routing<T> routing;
    private final RowSerializer<T> serializer;
    private final int width;
    private final int maxRowBytes;

    Exchange(int id, Routing<T> routing, RowSerializer<T> serializer, int width, int maxRowBytes) {
        if (id < 0 || id > MAX_ID) {
            throw new IllegalArgumentException("exchange id=" + id + " outside [0, " + MAX_ID + "]");
        }
        if (routing == null) {
            throw new IllegalArgumentException("exchange id=" + id + ": routing=null");
        }
        if (width == 0 && serializer == null) {
            throw new IllegalArgumentException("exchange id=" + id + ": serializer=null");
        }
        this.id = id;
        this.routing = routing;
        this.serializer = serializer;
        this.width = width;
        this.maxRowBytes = width > 0 ? width : maxRowBytes;
    }

    /** @return the id */
    public int id() {
        return id;
    }

    /** @return the routing */
    public Routing<T> routing() {
        return routing;
    }

    /** @return the serializer (null for a fixed-width exchange) */
    public RowSerializer<T> serializer() {
        return serializer;
    }

    /** @return bytes per row of a fixed-width exchange, 0 for an object exchange */
    public int width() {
        return width;
    }

    /**
     * The largest row this exchange carries, the same for every destination and every process of the service:
     * for an object exchange the largest serialized row ({@link ShuffleService#maxRowBytes()}: a larger row is
     * refused by {@link Worker#offer} before any copy of it is written, naming its size, this limit and the
     * exchange); for a fixed-width exchange its width.
     *
     * @return bytes
     */
    public int maxRowBytes() {
        return maxRowBytes;
    }

    /** @return the stream id of its rows */
    int dataStream() {
        return ShuffleFrameDescriptor.dataStream(id);
    }

    /** @return the stream id of its ends-of-stream (and credits) */
    int eosStream() {
        return ShuffleFrameDescriptor.controlStream(id);
    }

    @Override
    public String toString() {
        return "exchange " + id + (width > 0 ? " (rows of " + width + " bytes)" : "");
    }
}
