package io.rdmx.shuffle;

import java.nio.ByteBuffer;

/**
 * A flyweight view of received rows where they lie (in a ring, or in the worker's inbox): one row, or a batch
 * of fixed-width rows packed one after the other. Valid only during the handler call that receives it; re-used
 * by the worker, never allocated per row. All accessors are little endian.
 */
public final class RowView {
    private ByteBuffer buffer;
    private int offset;
    private int width;
    private int count;

    RowView() {
    }

    RowView set(ByteBuffer buffer, int offset, int width, int count) {
        this.buffer = buffer;
        this.offset = offset;
        this.width = width;
        this.count = count;
        return this;
    }

    /** @return rows in this view (1 for a row handler) */
    public int count() {
        return count;
    }

    /** @return bytes per row (for an object exchange: the record's length) */
    public int width() {
        return width;
    }

    /** @return the memory the rows lie in (do not keep it past the call) */
    public ByteBuffer buffer() {
        return buffer;
    }

    /**
     * @param row a row index (0..count-1)
     * @return where that row starts in {@link #buffer()}
     */
    public int offset(int row) {
        return offset + row * width;
    }

    /**
     * @param row a row index
     * @param field byte offset of the field in the row
     * @return the int there
     */
    public int getInt(int row, int field) {
        return buffer.getInt(offset + row * width + field);
    }

    /**
     * @param row a row index
     * @param field byte offset of the field in the row
     * @return the long there
     */
    public long getLong(int row, int field) {
        return buffer.getLong(offset + row * width + field);
    }

    /**
     * @param row a row index
     * @param field byte offset of the field in the row
     * @return the double there
     */
    public double getDouble(int row, int field) {
        return buffer.getDouble(offset + row * width + field);
    }

    /**
     * @param field byte offset in the first row
     * @return the int there
     */
    public int getInt(int field) {
        return buffer.getInt(offset + field);
    }

    /**
     * @param field byte offset in the first row
     * @return the long there
     */
    public long getLong(int field) {
        return buffer.getLong(offset + field);
    }

    /**
     * Copies a row's bytes out.
     *
     * @param row a row index
     * @param dst where to
     * @param at index in dst
     */
    public void copy(int row, byte[] dst, int at) {
        buffer.get(offset + row * width, dst, at, width);
    }
}
