package io.rdmx.bench.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The benchmark's own settings. */
class ShuffleRunnerTest {
    @Test
    void untimedPassesDefaultToEightAndTakeAWholeNumber() {
        assertEquals(8, ShuffleRunner.untimedPasses(null));
        assertEquals(0, ShuffleRunner.untimedPasses("0"));
        assertEquals(3, ShuffleRunner.untimedPasses(" 3 "));
    }

    @Test
    void aBadUntimedPassCountFailsNamingTheKeyAndTheValue() {
        for (String bad : new String[] {"-1", "101", "many", ""}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ShuffleRunner.untimedPasses(bad));
            assertTrue(e.getMessage().contains(ShuffleRunner.UNTIMED_PROP + "=" + bad), e.getMessage());
        }
    }

    @Test
    void theProvidersOfARunAreWhatEveryRankSaidOrUnknownWhereOneDidNot() {
        assertEquals("tcp", ShuffleRunner.providers(new String[] {"tcp,tcp,tcp", "tcp,tcp,tcp"}));
        // a run where auto chose shm for one peer and tcp for another says both
        assertEquals("shm+tcp", ShuffleRunner.providers(new String[] {"shm,tcp", "tcp,shm"}));
        assertEquals("?", ShuffleRunner.providers(new String[] {"tcp", null}));
    }
    /** A pass ends the warm-up (with the next) when the JIT compiler threads took at most 5% of its CPU. */
    @Test
    void aPassIsJitQuietWhenTheCompilersTookAtMostFivePercentOfItsCpu() {
        assertTrue(ShuffleRunner.jitQuiet(pass(1.0, 0.0)));
        assertTrue(ShuffleRunner.jitQuiet(pass(1.0, 0.05)));
        assertTrue(!ShuffleRunner.jitQuiet(pass(1.0, 0.06)));
        assertTrue(!ShuffleRunner.jitQuiet(pass(0.2, 0.09)));
        assertTrue(ShuffleRunner.warmUpRule().contains("at least " + ShuffleRunner.UNTIMED_PASSES),
            ShuffleRunner.warmUpRule());
    }

    /** A pass whose compiler CPU could not be read, or went down (a compiler thread retired), is not quiet. */
    @Test
    void aPassWhoseCompilerTimeIsUnknownIsNotQuiet() {
        assertTrue(!ShuffleRunner.jitQuiet(pass(1.0, -1)));
        assertTrue(!ShuffleRunner.jitQuiet(pass(1.0, Double.NaN)));
        assertEquals(-1, ShuffleRunner.compileSeconds(-1, 5));
        assertEquals(-1, ShuffleRunner.compileSeconds(5, -1));
        assertTrue(Double.isNaN(ShuffleRunner.compileSeconds(7_000_000, 5_000_000)));
        assertEquals(0.002, ShuffleRunner.compileSeconds(5_000_000, 7_000_000), 1e-12);
    }

    /**
     * The warm-up: never before the minimum; then until two quiet passes in a row, at the cap, or at once where the
     * JIT cannot be observed (the fixed count).
     */
    @Test
    void theWarmUpEndsAfterTheMinimumWithTwoQuietPassesAtTheCapOrWhereTheJitCannotBeSeen() {
        int min = ShuffleRunner.UNTIMED_PASSES;
        assertTrue(!ShuffleRunner.warmUpDone(min - 1, 5, true), "before the minimum, however quiet");
        assertTrue(!ShuffleRunner.warmUpDone(min, 1, true), "one quiet pass is not enough");
        assertTrue(ShuffleRunner.warmUpDone(min, 2, true));
        assertTrue(!ShuffleRunner.warmUpDone(min + 20, 0, true), "a noisy pass starts the count again");
        assertTrue(ShuffleRunner.warmUpDone(Math.max(min, ShuffleRunner.MAX_UNTIMED), 0, true), "the cap");
        assertTrue(ShuffleRunner.warmUpDone(min, 0, false), "not observable: the fixed count");
        assertTrue(!ShuffleRunner.warmUpDone(min - 1, 0, false), "not observable: still the fixed count");
    }

    private static ShuffleRunner.Run pass(double cpu, double compile) {
        return new ShuffleRunner.Run("tcp", 4, 1, 16 << 10, 1000, 0.1, 0, cpu, 10, 10, 10, 0, 0, 0.1, "tcp", compile,
            0, 0, 0, false);
    }
}
