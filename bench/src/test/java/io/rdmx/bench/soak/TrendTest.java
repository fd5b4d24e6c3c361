package io.rdmx.bench.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 10, unit = TimeUnit.SECONDS)
class TrendTest {
    private static List<Double> times(int n) {
        List<Double> t = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            t.add((double) i);
        }
        return t;
    }

    @Test
    void aSteadyLeakOfOneUnitPerSecondGrows() {
        List<Double> v = new ArrayList<>();
        for (int i = 0; i < 90; i++) {
            v.add(100.0 + i);
        }
        Trend t = Trend.of(times(90), v, 8, 0.05);
        assertEquals(60.0, t.slopePerMinute(), 1e-9);
        assertEquals(89.0, t.growth(), 1e-9);
        assertTrue(t.grows(), String.valueOf(t));
        assertEquals("GROWS", t.verdict());
    }

    @Test
    void noiseAroundAFlatLevelIsFlat() {
        Random rnd = new Random(7);
        List<Double> v = new ArrayList<>();
        for (int i = 0; i < 90; i++) {
            v.add(1000.0 + rnd.nextInt(21) - 10);
        }
        Trend t = Trend.of(times(90), v, 8, 0.05);
        assertFalse(t.grows(), String.valueOf(t));
        assertEquals(990.0, t.min(), 10.0);
    }

    @Test
    void aShrinkingMetricIsFlat() {
        List<Double> v = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            v.add(50.0 - i);
        }
        assertFalse(Trend.of(times(10), v, 1, 0).grows());
    }

    @Test
    void growthWithinTheFloorIsFlatAndJustPastItGrows() {
        List<Double> v = List.of(0.0, 1.0, 2.0, 3.0);
        assertFalse(Trend.of(times(4), v, 3, 0).grows());
        assertTrue(Trend.of(times(4), v, 2.9, 0).grows());
    }

    @Test
    void tooFewSamplesAreRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> Trend.of(List.of(1.0), List.of(1.0), 1, 0));
        assertTrue(e.getMessage().contains("samples=1"), e.getMessage());
    }
}
