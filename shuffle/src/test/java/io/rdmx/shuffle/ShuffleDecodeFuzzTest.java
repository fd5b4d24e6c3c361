package io.rdmx.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;

/**
 * Fuzzes what the shuffle decodes from a peer: rows ({@link RowSerializer#read}) of a record whose length the
 * peer announced, and the row count of a packed record of a fixed-width exchange ({@link Delivery#rowsIn}).
 *
 * <p>Input layout: byte 0 picks the decoder (0-4: INT, LONG, DOUBLE, LONGS, BYTES; else the frame header), then
 * for a row the record's offset (u16) and length (i32) in the buffer holding the rest of the input, as the ring
 * reader hands it over (inside the buffer); for a packed record: exchange (u16), unused (u16), length (i32),
 * width - 1 (u8). Contract: a row whose length fits its format is read (and writes back to the same bytes), any
 * other length throws {@link IllegalArgumentException} naming {@code length=}; a packed record is accepted only
 * as a whole number of rows, else the {@link IllegalStateException} names {@code length=} and {@code width=}.
 *
 * <p>Regression inputs: {@code src/test/resources/io/rdmx/shuffle/ShuffleDecodeFuzzTestInputs/decode}.
 */
class ShuffleDecodeFuzzTest {
    private static final List<RowSerializer<?>> ROWS = List.of(RowSerializer.INT, RowSerializer.LONG,
        RowSerializer.DOUBLE, RowSerializer.LONGS, RowSerializer.BYTES);

    @FuzzTest
    @Timeout(value = 10, unit = TimeUnit.SECONDS)
    void decode(byte[] input) {
        if (input.length < 7) {
            return;
        }
        ByteBuffer in = ByteBuffer.wrap(input).order(ByteOrder.LITTLE_ENDIAN);
        int which = in.get() & 0xFF;
        if (which < ROWS.size()) {
            row(ROWS.get(which), in);
        } else if (in.remaining() >= 9) {
            int exchange = in.getShort() & 0xFFFF;
            in.getShort();
            int len = in.getInt();
            int width = 1 + (in.get() & 0xFF);
            int rows;
            try {
                rows = Delivery.rowsIn(0, exchange, len, width);
            } catch (IllegalStateException e) {
                assertTrue(e.getMessage().contains("length=" + len) && e.getMessage().contains("width=" + width),
                    () -> "reason names no length= and width=: " + e);
                assertTrue(len < 0 || len % width != 0, "refused a whole number of rows: " + e);
                return;
            }
            assertEquals(len, rows * width, "accepted length=" + len + " width=" + width);
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> void row(RowSerializer<T> ser, ByteBuffer in) {
        int offset = in.getShort() & 0xFFFF;
        int length = in.getInt();
        ByteBuffer buf = in.slice().order(ByteOrder.LITTLE_ENDIAN);
        // the ring hands out records inside its memory: clamp to what a reader can be given
        offset = Math.min(offset, buf.capacity());
        if (length >= 0) {
            length = Math.min(length, buf.capacity() - offset);
        }
        T row;
        try {
            row = ser.read(buf, offset, length);
        } catch (IllegalArgumentException e) {
            assertTrue(e.getMessage() != null && e.getMessage().contains("length="),
                () -> "error names no length=: " + e);
            return;
        }
        int size = ser.size(row);
        assertEquals(length, size, "read a row of size=" + size + " from a record of length=" + length);
        ByteBuffer back = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        ser.write(row, back, 0);
        assertEquals(buf.slice(offset, length).order(ByteOrder.LITTLE_ENDIAN), back,
            "row does not write back to the bytes it was read from");
    }
}
