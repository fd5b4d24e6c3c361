package io.rdmx.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The circular buffer alone: layout, wrap-around, exact fit, full buffer, bad input. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RingBufferTest {
    private final RingBuffer ring = new RingBuffer(ByteBuffer.allocateDirect(256), 64);

    private List<String> drain() {
        List<String> out = new ArrayList<>();
        ring.read((s, b, o, l) -> {
            byte[] a = new byte[l];
            b.get(o, a);
            out.add(s + ":" + new String(a, java.nio.charset.StandardCharsets.US_ASCII));
        }, Integer.MAX_VALUE);
        return out;
    }

    private boolean put(int stream, String s) {
        return ring.write(stream, ByteBuffer.wrap(s.getBytes(java.nio.charset.StandardCharsets.US_ASCII)));
    }

    @Test
    void recordsAreAlignedAndCarryTheirStream() {
        assertTrue(put(7, "abc"));
        assertEquals(16, ring.headAcquire(), "8-byte header + 3 bytes, aligned to 8");
        assertTrue(put(65535, ""));
        assertEquals(24, ring.headAcquire());
        assertEquals(List.of("7:abc", "65535:"), drain());
        assertEquals(24, ring.tailAcquire());
    }

    @Test
    void theWritersOwnPositionMovesOnlyOnCommitAndAgreesWithThePublishedHead() {
        int at = ring.tryClaim(3, 5);
        assertEquals(0, ring.position(), "a claim moves nothing yet");
        assertEquals(0, ring.headAcquire());
        ring.abort();
        assertEquals(0, ring.position(), "an aborted claim moves nothing");
        at = ring.tryClaim(3, 5);
        assertEquals(RecordDescriptor.HEADER_LENGTH, at, "the aborted claim's space is claimed again");
        ring.commit();
        assertEquals(16, ring.position());
        assertEquals(ring.position(), ring.headAcquire(), "the commit publishes what the writer keeps");
        // a wrap: the padding record and the record after it move both by the whole claim
        for (int i = 0; i < 14; i++) {
            assertTrue(put(1, "0123456"), "record " + i);
        }
        assertEquals(240, ring.position());
        assertEquals(15, drain().size(), "the first record and the 14 after it");
        assertTrue(put(2, "0123456789"), "24 bytes do not fit in the 16 before the end: padding, then at 0");
        assertEquals(256 + 24, ring.position());
        assertEquals(ring.position(), ring.headAcquire());
    }

    @Test
    void anEndOfStreamMarkerIsDeliveredInOrderAndCounted() {
        assertTrue(put(7, "abc"));
        int at = ring.tryClaim(0, 0);
        ring.buffer().put(at - RecordDescriptor.HEADER_LENGTH + RecordDescriptor.TYPE_OFFSET,
            (byte) RecordDescriptor.TYPE_END);
        ring.commit();
        List<String> got = new ArrayList<>();
        RingBuffer.Handler h = new RingBuffer.Handler() {
            @Override
            public void onRecord(int streamId, ByteBuffer buffer, int offset, int length) {
                got.add("record " + streamId);
            }

            @Override
            public void onEndOfStream() {
                got.add("end");
            }
        };
        assertEquals(1, ring.read(h, 1), "the limit counts the end too");
        assertEquals(1, ring.read(h, 10));
        assertEquals(List.of("record 7", "end"), got);
        assertEquals(24, ring.tailAcquire());
        assertEquals(0, drain().size(), "a handler without onEndOfStream ignores it");
    }

    @Test
    void anEndOfStreamMarkerWithAPayloadIsCorrupt() {
        assertTrue(put(1, "abcd"));
        ring.buffer().put(RecordDescriptor.TYPE_OFFSET, (byte) RecordDescriptor.TYPE_END);
        IllegalStateException e = assertThrows(IllegalStateException.class, this::drain);
        assertTrue(e.getMessage().contains("end-of-stream record length=4"), e.getMessage());
    }

    @Test
    void fullBufferRefusesUntilTheReaderConsumes() {
        int n = 0;
        while (put(1, "x".repeat(24))) {
            n++;
        }
        assertEquals(8, n, "256 / 32 bytes per record");
        assertEquals(RingBuffer.INSUFFICIENT_SPACE, ring.tryClaim(1, 0));
        assertEquals(8, drain().size());
        assertTrue(put(1, "y"));
    }

    @Test
    void exactFitUsesTheWholeBuffer() {
        for (int i = 0; i < 4; i++) {
            assertTrue(put(1, "z".repeat(56)), "record " + i);
        }
        assertEquals(256, ring.size());
        assertEquals(RingBuffer.INSUFFICIENT_SPACE, ring.tryClaim(1, 0));
        assertEquals(4, drain().size());
        for (int i = 0; i < 4; i++) {
            assertTrue(put(1, "w".repeat(56)), "after wrap " + i);
        }
    }

    @Test
    void recordThatDoesNotFitBeforeTheEndWrapsWithPadding() {
        assertTrue(put(1, "a".repeat(56)));
        assertTrue(put(1, "b".repeat(56)));
        assertTrue(put(1, "c".repeat(56)));
        assertEquals(3, drain().size());
        assertTrue(put(2, "d".repeat(40)), "48 bytes do not fit in the last 64? they do");
        assertTrue(put(3, "e".repeat(24)), "needs 32, only 16 left: padding then index 0");
        assertEquals(192 + 48 + 16 + 32, ring.headAcquire());
        assertEquals(List.of("2:" + "d".repeat(40), "3:" + "e".repeat(24)), drain());
        for (int round = 0; round < 100; round++) {
            String s = "r" + round + "x".repeat(round % 50);
            assertTrue(put(round, s));
            assertEquals(List.of(round + ":" + s), drain());
        }
    }

    @Test
    void paddingCountsAgainstFreeSpace() {
        RingBuffer r = new RingBuffer(ByteBuffer.allocateDirect(256), 112);
        for (int i = 0; i < 3; i++) {
            assertTrue(r.write(1, ByteBuffer.allocate(56)));
        }
        assertEquals(1, r.read((s, b, o, l) -> { }, 1));
        assertEquals(128, 256 - r.size(), "free bytes");
        assertEquals(RingBuffer.INSUFFICIENT_SPACE, r.tryClaim(1, 104),
            "112 bytes fit in the free 128, but not with the 64 bytes of padding before the end");
        assertTrue(r.tryClaim(1, 56) >= 0, "64 bytes fit exactly before the end");
    }

    @Test
    void misuseIsRefusedWithContext() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ring.tryClaim(1, 65));
        assertTrue(e.getMessage().contains("length=65"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ring.tryClaim(-1, 1));
        assertThrows(IllegalArgumentException.class, () -> ring.tryClaim(65536, 1));
        ring.tryClaim(1, 1);
        assertThrows(IllegalStateException.class, () -> ring.tryClaim(1, 1));
        ring.commit();
        assertThrows(IllegalStateException.class, ring::commit);
        assertThrows(IllegalArgumentException.class, () -> new RingBuffer(ByteBuffer.allocate(100), 8));
        assertThrows(IllegalArgumentException.class, () -> new RingBuffer(ByteBuffer.allocate(256), 200));
    }

    @Test
    void corruptHeaderIsReportedWithItsPosition() {
        assertTrue(put(1, "ok"));
        ring.buffer().putInt(0, 1000);
        IllegalStateException e = assertThrows(IllegalStateException.class, this::drain);
        assertTrue(e.getMessage().contains("position=0"), e.getMessage());
    }
}
