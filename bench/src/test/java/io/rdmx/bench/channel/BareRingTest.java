package io.rdmx.bench.channel;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class BareRingTest {
    /**
     * A small ring wraps thousands of times in 100 ms: the reader must skip exactly the gap the writer left at
     * the end and read every record written, in order (each carries its number, which the reader checks: a
     * stale record of an earlier lap or a misplaced one makes stream() throw).
     */
    @ParameterizedTest
    @ValueSource(ints = {32, 40, 1000, 4096})
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void theReaderReadsEveryRecordTheWriterWroteAcrossManyWraps(int size) throws InterruptedException {
        BareRing.Result r = new BareRing(3 * 4096 + 24, true).stream(size, 100);
        assertTrue(r.records() > 3 * (3 * 4096 + 24) / (size + 8), r.records() + " records: the ring did not wrap");
    }
}
