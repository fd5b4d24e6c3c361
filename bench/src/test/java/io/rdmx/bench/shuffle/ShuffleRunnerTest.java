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
}
