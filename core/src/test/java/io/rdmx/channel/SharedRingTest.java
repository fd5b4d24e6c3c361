package io.rdmx.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The shared words of mapped channels: where they lie, and the hand-offs seen from one thread. */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class SharedRingTest {
    @Test
    void everySharedWordHasItsOwnLineInsideTheRegion() {
        PairLayout l = new PairLayout(2, 3, 1024, true);
        assertEquals(2 * 6 * 1024 + 2 * 6 * SharedRing.RING_HEADER_LENGTH + 5 * SharedRing.READER_HEADER_LENGTH,
            l.regionLength());
        TreeSet<Integer> words = new TreeSet<>();
        for (boolean fromLow : new boolean[] {true, false}) {
            for (int i = 0; i < 6; i++) {
                int h = l.ringHeaderOffset(fromLow, i);
                assertTrue(h >= 2 * 6 * 1024, "headers follow the rings");
                words.add(h + SharedRing.HEAD_OFFSET);
                words.add(h + SharedRing.CREDIT_OFFSET);
                words.add(h + SharedRing.WRITER_PARKED_OFFSET);
            }
        }
        for (int w = 0; w < 2; w++) {
            words.add(l.readerHeaderOffset(true, w));
        }
        for (int w = 0; w < 3; w++) {
            words.add(l.readerHeaderOffset(false, w));
        }
        assertEquals(6 * 2 * 3 + 5, words.size(), "no two words share an offset");
        int prev = -SharedRing.LINE;
        for (int at : words) {
            assertEquals(0, at % SharedRing.LINE, "at=" + at);
            assertTrue(at - prev >= SharedRing.LINE, "at=" + at + " prev=" + prev);
            prev = at;
        }
        assertTrue(prev + SharedRing.LINE <= l.regionLength());
        assertThrows(IllegalStateException.class, () -> new PairLayout(1, 1, 1024).ringHeaderOffset(true, 0));
        assertEquals(2 * 1024, new PairLayout(1, 1, 1024).regionLength(), "the WRITE path's layout is unchanged");
    }

    @Test
    void misplacedHeadersAreRefusedWithTheirValues() {
        ByteBuffer m = ByteBuffer.allocateDirect(4096);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new SharedRing(m, 4, 0));
        assertTrue(e.getMessage().contains("index=4"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new SharedRing(m, 0, 4096));
        assertTrue(e.getMessage().contains("index=4096"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new SharedRing(ByteBuffer.allocate(4096), 0, 512));
    }

    @Test
    void aDoorbellIsDueOnlyForAParkedSideAndOnlyOnce() {
        PairLayout l = new PairLayout(1, 1, 1024, true);
        ByteBuffer region = ByteBuffer.allocateDirect(l.regionLength());
        SharedRing writer = new SharedRing(region, l.ringHeaderOffset(true, 0), l.readerHeaderOffset(false, 0));
        SharedRing reader = new SharedRing(region, l.ringHeaderOffset(true, 0), l.readerHeaderOffset(false, 0));
        assertEquals(SharedRing.AWAKE, writer.publishHeadRelease(64), "reader awake: no doorbell");
        assertEquals(64, reader.headAcquire());
        reader.readerParkedVolatile(SharedRing.PARKED_DOORBELL);
        assertEquals(SharedRing.PARKED_DOORBELL, writer.publishHeadRelease(128), "reader parked: ring");
        assertEquals(SharedRing.AWAKE, writer.publishHeadRelease(192), "the flag was taken: one doorbell per sleep");
        assertEquals(SharedRing.AWAKE, reader.publishCreditRelease(128), "writer awake: no doorbell");
        assertEquals(128, writer.creditAcquire());
        writer.writerParkedVolatile(SharedRing.PARKED_DOORBELL);
        writer.writerParkedVolatile(SharedRing.AWAKE);
        assertEquals(SharedRing.AWAKE, reader.publishCreditRelease(192), 
            "the writer stopped waiting before the credit");
        writer.writerParkedVolatile(SharedRing.PARKED_DOORBELL);
        assertEquals(SharedRing.PARKED_DOORBELL, reader.publishCreditRelease(192));
        assertEquals(SharedRing.AWAKE, reader.publishCreditRelease(192));
    }

    @Test
    void aBadMappedValueIsRefusedNamingTheKey() {
        System.setProperty(ChannelConfig.MAPPED_PROP, "yes");
        try {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ChannelConfig.builder(1).build());
            assertTrue(e.getMessage().contains(ChannelConfig.MAPPED_PROP + "=yes"), e.getMessage());
        } finally {
            System.clearProperty(ChannelConfig.MAPPED_PROP);
        }
        assertTrue(ChannelConfig.builder(1).build().mapped());
        assertFalse(ChannelConfig.builder(1).mapped(false).build().mapped());
    }
}
