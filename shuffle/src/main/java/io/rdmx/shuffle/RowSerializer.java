package io.rdmx.shuffle;

import java.nio.ByteBuffer;

/**
 * Writes rows straight into an outgoing buffer and reads them back from an incoming one (little endian).
 *
 * @param <T> the row type
 */
public interface RowSerializer<T> {
    /**
     * @param row a row
     * @return its serialized length
     */
    int size(T row);

    /**
     * @param row the row
     * @param buf the outgoing buffer
     * @param offset where to write ({@link #size} bytes are reserved)
     */
    void write(T row, ByteBuffer buf, int offset);

    /**
     * Reads a row a peer wrote: the length is the record's, as the peer announced it, so a reader checks it
     * against its format before reading.
     *
     * @param buf the incoming buffer (valid only during the call)
     * @param offset where the row starts
     * @param length its length
     * @return the row
     * @throws IllegalArgumentException if the length does not fit the row format (the message names it)
     */
    T read(ByteBuffer buf, int offset, int length);

    /**
     * Checks a fixed-size row's length.
     *
     * @param length the record's length
     * @param size the row format's size
     * @param format the format, for the message
     * @throws IllegalArgumentException if they differ
     */
    static void checkLength(int length, int size, String format) {
        if (length != size) {
            throw new IllegalArgumentException(format + " row of length=" + length + " (expected " + size + ")");
        }
    }

    /** Rows of one {@code int}. */
    RowSerializer<Integer> INT = new RowSerializer<>() {
        @Override
        public int size(Integer row) {
            return 4;
        }

        @Override
        public void write(Integer row, ByteBuffer buf, int offset) {
            buf.putInt(offset, row);
        }

        @Override
        public Integer read(ByteBuffer buf, int offset, int length) {
            RowSerializer.checkLength(length, 4, "int");
            return buf.getInt(offset);
        }
    };

    /** Rows of one {@code long}. */
    RowSerializer<Long> LONG = new RowSerializer<>() {
        @Override
        public int size(Long row) {
            return 8;
        }

        @Override
        public void write(Long row, ByteBuffer buf, int offset) {
            buf.putLong(offset, row);
        }

        @Override
        public Long read(ByteBuffer buf, int offset, int length) {
            RowSerializer.checkLength(length, 8, "long");
            return buf.getLong(offset);
        }
    };

    /** Rows of one {@code double}. */
    RowSerializer<Double> DOUBLE = new RowSerializer<>() {
        @Override
        public int size(Double row) {
            return 8;
        }

        @Override
        public void write(Double row, ByteBuffer buf, int offset) {
            buf.putDouble(offset, row);
        }

        @Override
        public Double read(ByteBuffer buf, int offset, int length) {
            RowSerializer.checkLength(length, 8, "double");
            return buf.getDouble(offset);
        }
    };

    /** Rows of {@code long[]} (fixed-width tuples of longs). */
    RowSerializer<long[]> LONGS = new RowSerializer<>() {
        @Override
        public int size(long[] row) {
            return row.length * 8;
        }

        @Override
        public void write(long[] row, ByteBuffer buf, int offset) {
            for (int i = 0; i < row.length; i++) {
                buf.putLong(offset + 8 * i, row[i]);
            }
        }

        @Override
        public long[] read(ByteBuffer buf, int offset, int length) {
            if (length < 0 || length % 8 != 0) {
                throw new IllegalArgumentException("long[] row of length=" + length + " (not a multiple of 8)");
            }
            long[] r = new long[length / 8];
            for (int i = 0; i < r.length; i++) {
                r[i] = buf.getLong(offset + 8 * i);
            }
            return r;
        }
    };

    /** Rows of raw bytes. */
    RowSerializer<byte[]> BYTES = new RowSerializer<>() {
        @Override
        public int size(byte[] row) {
            return row.length;
        }

        @Override
        public void write(byte[] row, ByteBuffer buf, int offset) {
            buf.put(offset, row);
        }

        @Override
        public byte[] read(ByteBuffer buf, int offset, int length) {
            if (length < 0) {
                throw new IllegalArgumentException("byte[] row of negative length=" + length);
            }
            byte[] b = new byte[length];
            buf.get(offset, b);
            return b;
        }
    };
}
