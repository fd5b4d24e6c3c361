package io.rdmx.examples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Runs every documented example and checks what it produced. */
class ExamplesTest {

    @ParameterizedTest
    @ValueSource(strings = {"loopback", "shm", "tcp"})
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void minimalExampleDeliversTheWriteBeforeTheSend(String provider) throws Exception {
        assertEquals("hello, one-sided world", MinimalExample.run(provider));
    }

    @ParameterizedTest
    @ValueSource(strings = {"loopback", "shm", "tcp"})
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void channelExampleDeliversTheRecordToRemoteWorker3(String provider) throws Exception {
        assertArrayEquals(new long[] {7, 42, 43}, ChannelExample.run(provider));
    }

    @ParameterizedTest
    @ValueSource(strings = {"loopback", "shm", "tcp"})
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void rpcExampleEchoesAndCarriesTheRemoteError(String provider) throws Exception {
        assertEquals("hello|java.lang.IllegalArgumentException: no method 9", RpcExample.run(provider));
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void shuffleExampleDeliversEveryRowOnce() throws Exception {
        ExecutorService procs = Executors.newFixedThreadPool(ShuffleExample.PROCESSES);
        try {
            List<Future<Long>> sums = new ArrayList<>();
            for (int rank = 0; rank < ShuffleExample.PROCESSES; rank++) {
                int r = rank;
                sums.add(procs.submit(() -> ShuffleExample.process(r, "shm")));
            }
            long total = 0;
            for (Future<Long> f : sums) {
                total += f.get(100, TimeUnit.SECONDS);
            }
            long rows = (long) ShuffleExample.PROCESSES * 2 * ShuffleExample.ROWS; // rows 0..rows-1, each once
            assertEquals(rows * (rows - 1) / 2, total);
        } finally {
            procs.shutdownNow();
        }
    }
}
