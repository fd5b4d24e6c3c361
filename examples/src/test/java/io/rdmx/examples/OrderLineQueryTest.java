package io.rdmx.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.shuffle.Endpoints;
import io.rdmx.shuffle.ShuffleConfig;
import io.rdmx.shuffle.ShuffleService;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The TPC-C-like join + group-by + gather plan across processes equals the same query in one process. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class OrderLineQueryTest {
    private static final AtomicInteger JOBS = new AtomicInteger();

    @ParameterizedTest
    @ValueSource(strings = {"shm", "tcp", "loopback", "auto"})
    void distributedResultEqualsTheSingleProcessResult(String provider) throws Exception {
        OrderLineQuery.Scale scale = new OrderLineQuery.Scale(6, 60, 30);
        Map<Long, OrderLineQuery.Group> want = OrderLineQuery.reference(scale);
        assertEquals(15, want.size(), "ol_number 1..15");
        assertTrue(want.values().stream().mapToLong(OrderLineQuery.Group::count).sum() > 1000);
        int processes = 3;
        List<String> members = provider.equals("shm") || provider.equals("loopback") ? List.of()
            : Endpoints.freeLocal(processes);
        String job = "ol" + ProcessHandle.current().pid() + "-" + JOBS.incrementAndGet();
        ExecutorService ex = Executors.newFixedThreadPool(processes);
        List<ShuffleService> services = new ArrayList<>();
        try {
            List<CompletableFuture<ShuffleService>> opened = new ArrayList<>();
            for (int r = 0; r < processes; r++) {
                ShuffleConfig cfg = ShuffleConfig.builder(r, processes, 2).provider(provider).job(job)
                    .members(members).build();
                opened.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        return ShuffleService.open(cfg);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }, ex));
            }
            for (CompletableFuture<ShuffleService> f : opened) {
                services.add(f.get(60, TimeUnit.SECONDS));
            }
            List<CompletableFuture<Map<Long, OrderLineQuery.Group>>> runs = new ArrayList<>();
            for (ShuffleService s : services) {
                runs.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        return OrderLineQuery.run(s, scale, 100);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }, ex));
            }
            List<Map<Long, OrderLineQuery.Group>> got = new ArrayList<>();
            for (CompletableFuture<Map<Long, OrderLineQuery.Group>> f : runs) {
                got.add(f.get(100, TimeUnit.SECONDS));
            }
            assertEquals(want, got.get(0), "rank 0 holds worker 0, the gather target");
            assertTrue(got.get(1).isEmpty() && got.get(2).isEmpty());
        } finally {
            for (ShuffleService s : services) {
                s.close();
            }
            ex.shutdownNow();
        }
    }
}
