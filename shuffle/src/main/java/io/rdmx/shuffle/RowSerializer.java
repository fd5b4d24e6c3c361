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
     * @param buf the incoming buffer (valid only during the call)
     * @param offset where the row starts
     * @param length its length
     * @return the row
     */
    T read(ByteBuffer buf, int offset, int length);

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
            byte[] b = new byte[length];
            buf.get(offset, b);
            return b;
        }
    };
}
