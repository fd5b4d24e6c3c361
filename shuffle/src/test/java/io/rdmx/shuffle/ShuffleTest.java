package io.rdmx.shuffle;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

/** Shuffle semantics over every transport, with P processes simulated in one JVM. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ShuffleTest {

    /** Runs a body on every worker of every process; returns per-worker results in global order. */
    private static <T, R> List<R> everyWorker(Cluster c, java.util.function.Function<ShuffleService, Exchange<T>> decl,
                                              WorkerBody<T, R> body) throws Exception {
        List<List<R>> perProcess = c.spmd(s -> {
            Exchange<T> ex0 = decl.apply(s);
            ExecutorService ex = Executors.newFixedThreadPool(s.config().workers());
            try {
                List<Future<R>> fs = new ArrayList<>();
                for (int w = 0; w < s.config().workers(); w++) {
                    Worker wk = s.worker(w);
                    fs.add(ex.submit(() -> body.run(ex0, wk)));
                }
                List<R> out = new ArrayList<>();
                for (Future<R> f : fs) {
                    out.add(f.get(100, TimeUnit.SECONDS));
                }
                return out;
            } finally {
                ex.shutdownNow();
            }
        });
        List<R> all = new ArrayList<>();
        perProcess.forEach(all::addAll);
        return all;
    }

    interface WorkerBody<T, R> {
        R run(Exchange<T> ex, Worker w) throws Exception;
    }

    @ParameterizedTest
    @ValueSource(strings = {"shm", "tcp", "loopback", "auto"})
    void twoStagesDeliverEveryRowExactlyOnce(String t) throws Exception {
        long rows = 30_000;
        try (Cluster c = new Cluster(t, 3, 2, b -> b)) {
            List<TwoStagePlan.Result> rs = c.spmd(s -> TwoStagePlan.run(s, rows, 10));
            TwoStagePlan.Result total = rs.get(0);
            for (int i = 1; i < rs.size(); i++) {
                total = total.plus(rs.get(i));
            }
            long[] want = TwoStagePlan.expected(3, rows);
            assertArrayEquals(want, new long[] {total.count1(), total.sum1(), total.sum2()},
                "stage-1 count and both checksums");
            assertEquals(want[0], total.count2());
            for (TwoStagePlan.Result r : rs) {
                assertTrue(r.count1() > 0 && r.count2() > 0, "every process receives rows: " + r);
            }
            // the same service runs a second query
            List<TwoStagePlan.Result> again = c.spmd(s -> TwoStagePlan.run(s, 1000, 12));
            assertEquals(3000, again.stream().mapToLong(TwoStagePlan.Result::count2).sum());
        }
    }

    @Test
    void broadcastReachesEveryWorker() throws Exception {
        try (Cluster c = new Cluster("shm", 2, 2, b -> b)) {
            List<Long> got = everyWorker(c, s -> s.exchange(1, Routing.<Long>broadcast(), RowSerializer.LONG),
                (b, w) -> {
                long[] sum = {0, 0};
                w.consume(b, x -> {
                    sum[0]++;
                    sum[1] += x;
                });
                boolean[] fin = {false};
                w.run(() -> {
                    if (!fin[0]) {
                        for (long i = 0; i < 100; i++) {
                            w.send(b, w.globalIndex() * 1000L + i);
                        }
                        w.finish(b);
                        fin[0] = true;
                        return true;
                    }
                    return false;
                }, () -> fin[0] && w.done(b));
                return sum[0] * 1_000_000 + sum[1] % 1_000_000;
            });
            long expectSum = 0;
            for (int g = 0; g < 4; g++) {
                for (long i = 0; i < 100; i++) {
                    expectSum += g * 1000L + i;
                }
            }
            for (long v : got) {
                assertEquals(400 * 1_000_000 + expectSum % 1_000_000, v);
            }
        }
    }

    @Test
    void gatherSendsEverythingToTheMasterAndOthersFinishAtOnce() throws Exception {
        try (Cluster c = new Cluster("tcp", 2, 2, b -> b)) {
            List<Long> got = everyWorker(c, s -> s.exchange(2, Routing.<Integer>gather(3), RowSerializer.INT),
                (g, w) -> {
                long[] n = {0};
                w.consume(g, x -> n[0]++);
                boolean[] fin = {false};
                w.run(() -> {
                    if (!fin[0]) {
                        for (int i = 0; i < 250; i++) {
                            w.send(g, i);
                        }
                        w.finish(g);
                        fin[0] = true;
                        return true;
                    }
                    return false;
                }, () -> fin[0] && w.done(g));
                return n[0];
            });
            assertEquals(List.of(0L, 0L, 0L, 1000L), got);
        }
    }

    @Test
    void endOfStreamCompletesConsumersThatGetNoRows() throws Exception {
        try (Cluster c = new Cluster("shm", 2, 2, b -> b)) {
            List<String> got = everyWorker(c, s -> s.exchange(3, Routing.<Integer>hash(x -> 0), RowSerializer.INT),
                (ex, w) -> {
                long[] n = {0};
                w.consume(ex, x -> n[0]++);
                boolean before = w.done(ex);
                boolean[] fin = {false};
                w.run(() -> {
                    if (!fin[0]) {
                        w.send(ex, w.globalIndex());
                        w.finish(ex);
                        fin[0] = true;
                        return true;
                    }
                    return false;
                }, () -> fin[0] && w.done(ex));
                return before + ":" + n[0];
            });
            long rows = got.stream().mapToLong(x -> Long.parseLong(x.split(":")[1])).sum();
            assertEquals(4, rows, "all 4 rows hash to one worker");
            assertTrue(got.stream().noneMatch(x -> x.startsWith("true")), "not done before end-of-stream: " + got);
            assertEquals(3, got.stream().filter(x -> x.endsWith(":0")).count());
        }
    }

    @Test
    void rowsForWorkersOfTheSameProcessSkipTheNetwork() throws Exception {
        try (Cluster c = new Cluster("shm", 2, 2, b -> b)) {
            everyWorker(c, s -> s.exchange(4, Routing.<Integer>hash(x -> x), RowSerializer.INT), (ex, w) -> {
                w.consume(ex, x -> { });
                boolean[] fin = {false};
                w.run(() -> {
                    if (!fin[0]) {
                        // each worker sends one row to each of the 4 workers: routing by the value itself
                        for (int dst = 0; dst < 4; dst++) {
                            int v = 0;
                            while (Routing.partition(Routing.mix(v), 4) != dst) {
                                v++;
                            }
                            w.send(ex, v);
                        }
                        w.finish(ex);
                        fin[0] = true;
                        return true;
                    }
                    return false;
                }, () -> fin[0] && w.done(ex));
                return 0;
            });
            for (ShuffleService s : c.services) {
                // 2 local workers x (2 remote rows + 2 remote end-of-stream marks), and up to 2 credits each back to
                // the remote senders (written when the exchange ended; a later flush sends them); rows and marks for
                // the local workers over the network would add 8 more
                long n = s.networkRecords();
                assertTrue(n >= 8 && n <= 12, "only rows for the other process (and credits) cross the network: " + n);
            }
        }
    }

    @Test
    void fullBuffersBlockTheSenderWithoutLossOrDeadlock() throws Exception {
        long rows = 20_000;
        try (Cluster c = new Cluster("shm", 2, 2, b -> b.bufferSize(1024).batchThreshold(64))) {
            List<TwoStagePlan.Result> rs = c.spmd(s -> TwoStagePlan.run(s, rows, 20));
            long n = rs.stream().mapToLong(TwoStagePlan.Result::count2).sum();
            assertEquals(2 * rows, n);
            long sum2 = rs.stream().mapToLong(TwoStagePlan.Result::sum2).sum();
            assertEquals(TwoStagePlan.expected(2, rows)[2], sum2);
            assertTrue(c.services.stream().mapToLong(ShuffleService::blockedSends).sum() > 0,
                "1 KiB buffers must fill and block senders");
        }
    }

    @Test
    void configurationIsValidated() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> ShuffleConfig.builder(4, 4, 2).build());
        assertTrue(e.getMessage().contains("rank=4"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
            () -> ShuffleConfig.builder(0, 2, 2).provider("tcp").build());
        assertTrue(e.getMessage().contains("members=0"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
            () -> ShuffleConfig.builder(0, 2, 2).bufferSize(1000).build());
        assertTrue(e.getMessage().contains("bufferSize=1000"), e.getMessage());
        assertEquals(List.of("localhost:0"), ShuffleConfig.builder(0, 1, 1).build().members());
    }
}
