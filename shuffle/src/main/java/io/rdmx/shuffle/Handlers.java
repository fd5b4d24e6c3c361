package io.rdmx.shuffle;

import java.nio.ByteBuffer;

/**
 * The primitive, flyweight and batch row handlers and writers of {@link Worker}. A handler that returns
 * {@code false} (or takes fewer rows than offered) is back-pressured, typically because an {@code offer} it
 * made returned {@link Worker#BACK_PRESSURED}: the rows it did not take are kept (in the worker's bounded
 * inbox) and offered again, first, by a later {@link Worker#poll}.
 */
public final class Handlers {
    private Handlers() {
    }

    /** Receives rows of an {@code int} exchange one at a time. */
    @FunctionalInterface
    public interface IntHandler {
        /**
         * @param value the row
         * @return true if taken; false to be offered this row again later
         */
        boolean onInt(int value);
    }

    /** Receives rows of a {@code long} exchange one at a time. */
    @FunctionalInterface
    public interface LongHandler {
        /**
         * @param value the row
         * @return true if taken; false to be offered this row again later
         */
        boolean onLong(long value);
    }

    /** Receives rows one at a time as a flyweight view of their bytes. */
    @FunctionalInterface
    public interface RowHandler {
        /**
         * @param row a view of one row (valid during the call only)
         * @return true if taken; false to be offered this row again later
         */
        boolean onRow(RowView row);
    }

    /** Receives the fixed-width rows of a record in one call. */
    @FunctionalInterface
    public interface BatchHandler {
        /**
         * @param rows a view of the rows (valid during the call only)
         * @return how many rows, from the first, were taken; the rest are offered again later
         */
        int onBatch(RowView rows);
    }

    /** Writes one fixed-width row where the worker packs it. */
    @FunctionalInterface
    public interface RowWriter {
        /**
         * @param buffer little endian
         * @param offset where the row starts ({@code width} bytes are reserved)
         */
        void write(ByteBuffer buffer, int offset);
    }
}
