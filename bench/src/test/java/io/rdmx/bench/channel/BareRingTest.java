package io.rdmx.bench.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class BareRingTest {
    /**
     * A small ring wraps a hundred times: the reader must skip exactly the gap the writer left at the end and read
     * every record written, in order (each carries its number, which the reader checks: a stale record of an
     * earlier lap or a misplaced one makes stream() throw). A number of records, not a time: what is checked does
     * not depend on this machine's speed (the time bound is only the test's own guard).
     */
    @ParameterizedTest
    @ValueSource(ints = {32, 40, 1000, 4096})
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void theReaderReadsEveryRecordTheWriterWroteAcrossManyWraps(int size) throws InterruptedException {
        int capacity = 3 * 4096 + 24;
        long laps = 100;
        long records = laps * capacity / (size + 8);
        BareRing.Result r = new BareRing(capacity, true).stream(size, TimeUnit.SECONDS.toMillis(20), records);
        assertEquals(records, r.records(), "records written and read across " + laps + " laps of the ring");
    }
}
