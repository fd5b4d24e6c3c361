package io.rdmx.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;

/**
 * Fuzzes the reader of an incoming ring whose memory a misbehaving peer filled: {@link RingBuffer#read} over
 * arbitrary bytes, with a head that the peer announced (bounded as {@code IncomingRing.onData} bounds it: at
 * most one ring of unconsumed data).
 *
 * <p>Input layout: byte 0 picks the capacity ({@code 64 << (b % 5)}), then the tail position (u32 LE, aligned
 * down to 8: the tail is this node's own and only moves by whole records), the head's
 * distance from it (u32 LE, capped at the capacity), then the ring's bytes (the rest zero).
 * Contract: a record handed out lies inside the ring and before the head; the tail only moves forward, never
 * past the head; a corrupt header throws the documented {@code IllegalStateException} naming the position;
 * reading ends (the per-input timeout catches a loop that does not).
 *
 * <p>Regression inputs: {@code src/test/resources/io/rdmx/channel/RingBufferFuzzTestInputs/read}.
 */
class RingBufferFuzzTest {
    @FuzzTest
    @Timeout(value = 10, unit = TimeUnit.SECONDS)
    void read(byte[] input) {
        if (input.length < 9) {
            return;
        }
        ByteBuffer in = ByteBuffer.wrap(input).order(ByteOrder.LITTLE_ENDIAN);
        int capacity = 64 << ((in.get() & 0xFF) % 5);
        long tail = in.getInt() & 0xFFFF_FFF8L; // the reader's own position: it only moves by aligned records
        long head = tail + Math.min(in.getInt() & 0xFFFF_FFFFL, capacity);
        ByteBuffer memory = ByteBuffer.allocateDirect(capacity);
        memory.put(0, input, 9, Math.min(capacity, input.length - 9));
        RingBuffer ring = new RingBuffer(memory, capacity / 4);
        ring.tailRelease(tail);
        ring.headRelease(head);
        long[] consumed = {tail};
        RingBuffer.Handler handler = (stream, buf, offset, length) -> {
            assertTrue(offset >= RecordDescriptor.HEADER_LENGTH && length >= 0
                && (long) offset + length <= capacity, () -> "record outside the ring: offset=" + offset
                + " length=" + length + " capacity=" + capacity);
            if (length > 0) {
                buf.get(offset + length - 1);
            }
            assertTrue(stream >= 0 && stream <= RecordDescriptor.MAX_STREAM_ID, "stream=" + stream);
        };
        // each read consumes at least one record or padding (>= 8 bytes) unless it reaches the head
        for (int calls = 0; calls <= capacity / RecordDescriptor.ALIGNMENT + 1; calls++) {
            long before = ring.tailAcquire();
            int n;
            try {
                n = ring.read(handler, 2);
            } catch (IllegalStateException e) {
                assertTrue(e.getMessage() != null && e.getMessage().startsWith("corrupt ring at position="),
                    () -> "undocumented exception: " + e);
                checkTail(ring, before, head);
                return;
            }
            long after = checkTail(ring, before, head);
            consumed[0] = after;
            if (n == 0 && after == before) {
                assertEquals(head, after, "read stopped before the head without reading anything");
                return;
            }
            if (after == head) {
                return;
            }
        }
        throw new AssertionError("reading " + (head - tail) + " bytes did not finish in " + (capacity / 8 + 2)
            + " reads; tail=" + consumed[0]);
    }

    private static long checkTail(RingBuffer ring, long before, long head) {
        long after = ring.tailAcquire();
        assertTrue(after >= before && after <= head, "tail moved from " + before + " to " + after + " (head="
            + head + ")");
        return after;
    }
}
