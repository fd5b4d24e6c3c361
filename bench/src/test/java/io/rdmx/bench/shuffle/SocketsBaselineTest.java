package io.rdmx.bench.shuffle;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.shuffle.Endpoints;
import io.rdmx.shuffle.ShuffleConfig;
import io.rdmx.shuffle.ShuffleService;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The paper's synthetic plan, exactly once, on the sockets baseline and on rdmx; the baseline's frame checks. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SocketsBaselineTest {
    @ParameterizedTest
    @ValueSource(strings = {"sockets", "shm"})
    void theSyntheticPlanDeliversEveryRowExactlyOnce(String transport) throws Exception {
        int processes = 3;
        long rows = 50_000;
        List<String> members = Endpoints.freeLocal(processes);
        ExecutorService ex = Executors.newFixedThreadPool(processes);
        List<ShuffleService> services = new ArrayList<>();
        try {
            List<CompletableFuture<ShuffleService>> opened = new ArrayList<>();
            for (int r = 0; r < processes; r++) {
                ShuffleConfig cfg = ShuffleConfig.builder(r, processes, 2)
                    .provider(transport.equals("sockets") ? "tcp" : transport)
                    .job("sb" + ProcessHandle.current().pid()).members(members).build();
                opened.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        return transport.equals("sockets") ? ShuffleService.open(cfg, NioShuffleTransport::open)
                            : ShuffleService.open(cfg);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }, ex));
            }
            for (CompletableFuture<ShuffleService> f : opened) {
                services.add(f.get(60, TimeUnit.SECONDS));
            }
            List<CompletableFuture<SyntheticPlan.Result>> runs = new ArrayList<>();
            for (ShuffleService s : services) {
                runs.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        return SyntheticPlan.run(s, rows, 1, null);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }, ex));
            }
            SyntheticPlan.Result total = new SyntheticPlan.Result(0, 0, 0, 0, 0);
            for (CompletableFuture<SyntheticPlan.Result> f : runs) {
                SyntheticPlan.Result r = f.get(100, TimeUnit.SECONDS);
                assertTrue(r.count1() > 0 && r.count2() > 0, "every process receives rows: " + r);
                total = total.plus(r);
            }
            long[] want = SyntheticPlan.expected(processes, rows);
            assertArrayEquals(want, new long[] {total.count1(), total.sum1(), total.sum2()});
            assertEquals(want[0], total.count2());
        } finally {
            for (ShuffleService s : services) {
                s.close();
            }
            ex.shutdownNow();
        }
    }

    @Test
    void framesOutsideTheirBoundsAreRefusedNamingTheField() {
        assertNull(NioShuffleTransport.checkFrame(1, 0, 100, 2, 4096));
        assertTrue(NioShuffleTransport.checkFrame(2, 0, 100, 2, 4096).contains("=2"));
        assertTrue(NioShuffleTransport.checkFrame(0, 5, 100, 2, 4096).contains("=5"));
        assertTrue(NioShuffleTransport.checkFrame(0, 0, -1, 2, 4096).contains("length=-1"));
        assertTrue(NioShuffleTransport.checkFrame(0, 0, 4097, 2, 4096).contains("length=4097"));
    }
}
