package io.rdmx.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The pair region: every ring of both directions gets its own, in-bounds slice, and bad sizes are refused. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class PairLayoutTest {
    @ParameterizedTest
    @CsvSource({"1, 1, 64", "2, 3, 4096", "3, 2, 4096", "5, 7, 128"})
    void everyRingOfBothDirectionsHasItsOwnSliceInsideTheRegion(int low, int high, int cap) {
        PairLayout l = new PairLayout(low, high, cap);
        assertEquals(2 * low * high * cap, l.regionLength());
        assertEquals(low * high, l.rings(true));
        assertEquals(low * high, l.rings(false));
        int[] owner = new int[l.regionLength()];
        for (int dir = 0; dir < 2; dir++) {
            boolean fromLow = dir == 0;
            int senders = fromLow ? low : high;
            int receivers = fromLow ? high : low;
            boolean[] seen = new boolean[low * high];
            for (int s = 0; s < senders; s++) {
                for (int r = 0; r < receivers; r++) {
                    int idx = l.ringIndex(fromLow, s, r);
                    assertTrue(idx >= 0 && idx < l.rings(fromLow), "index=" + idx);
                    assertTrue(!seen[idx], "ring index " + idx + " given twice");
                    seen[idx] = true;
                    int off = l.offset(fromLow, idx);
                    for (int b = off; b < off + cap; b++) {
                        assertEquals(0, owner[b], "byte " + b + " in two rings");
                        owner[b] = 1 + dir * low * high + idx;
                    }
                }
            }
        }
        for (int b = 0; b < owner.length; b++) {
            assertTrue(owner[b] != 0, "byte " + b + " belongs to no ring");
        }
    }

    @Test
    void ringIndexAndOffsetFollowTheDiagram() {
        PairLayout l = new PairLayout(2, 3, 1024);
        assertEquals(1 * 3 + 2, l.ringIndex(true, 1, 2), "low -> high: s * highW + r");
        assertEquals(2 * 2 + 1, l.ringIndex(false, 2, 1), "high -> low: s * lowW + r");
        assertEquals(0, l.offset(true, 0));
        assertEquals(5 * 1024, l.offset(true, 5));
        assertEquals(6 * 1024, l.offset(false, 0), "the high -> low half starts after lowW * highW rings");
        assertEquals(11 * 1024, l.offset(false, 5));
    }

    @Test
    void theLastWorkersOfTheLargestConfigurationEndOnTheLastByte() {
        int cap = 8192;
        PairLayout l = new PairLayout(256, 256, cap);
        assertEquals(1 << 30, l.regionLength());
        int last = l.ringIndex(false, 255, 255);
        assertEquals(PairLayout.MAX_RINGS - 1, last, "fits the 16-bit ring index of a NOTIFY entry");
        assertEquals(0xFFFF, last & 0xFFFF);
        assertEquals(l.regionLength(), l.offset(false, last) + cap, "the last ring ends on the region's last byte");
        assertEquals(l.regionLength() / 2, l.offset(true, l.ringIndex(true, 255, 255)) + cap);
    }

    @Test
    void regionOfTwoGibibytesIsRefusedOneBelowIsNot() {
        assertEquals(Integer.MAX_VALUE - 1, new PairLayout(1, 1, (1 << 30) - 1).regionLength());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> new PairLayout(256, 256, 16384));
        assertTrue(e.getMessage().contains("lowWorkers=256") && e.getMessage().contains("highWorkers=256")
            && e.getMessage().contains("capacity=16384"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new PairLayout(1, 1, 1 << 30));
        assertTrue(e.getMessage().contains("capacity=1073741824"), e.getMessage());
    }

    @Test
    void nonPositiveSizesAreRefusedNamingTheValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new PairLayout(0, 1, 64));
        assertTrue(e.getMessage().contains("lowWorkers=0"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new PairLayout(1, -1, 64));
        assertTrue(e.getMessage().contains("highWorkers=-1"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new PairLayout(1, 1, 0));
        assertTrue(e.getMessage().contains("capacity=0"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new PairLayout(-1, -1, 64),
            "two negatives make a positive size; still refused");
        assertTrue(e.getMessage().contains("lowWorkers=-1"), e.getMessage());
    }

    @Test
    void moreRingsThanA16BitIndexCanNameAreRefused() {
        assertEquals(PairLayout.MAX_RINGS, new PairLayout(256, 256, 64).rings(true));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> new PairLayout(257, 256, 64));
        assertTrue(e.getMessage().contains("lowWorkers=257") && e.getMessage().contains("highWorkers=256"),
            e.getMessage());
    }
}
