package io.rdmx.bench.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A bad measuring time fails at start, naming the key and the value, before any case runs. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ChannelBenchSettingsTest {
    @Test
    void aMeasuringTimeOutOfRangeFailsNamingTheKeyAndTheValue(@TempDir Path results) throws Exception {
        String before = System.getProperty(ChannelBench.MEASURE_PROP);
        System.setProperty(ChannelBench.MEASURE_PROP, "5");
        try {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ChannelBench.run(true, results));
            assertEquals(ChannelBench.MEASURE_PROP + "=5 must be 100 to 600000", e.getMessage());
            e = assertThrows(IllegalArgumentException.class, () -> ChannelBench.runHosts(true, results));
            assertEquals(ChannelBench.MEASURE_PROP + "=5 must be 100 to 600000", e.getMessage());
        } finally {
            if (before == null) {
                System.clearProperty(ChannelBench.MEASURE_PROP);
            } else {
                System.setProperty(ChannelBench.MEASURE_PROP, before);
            }
        }
    }
}
