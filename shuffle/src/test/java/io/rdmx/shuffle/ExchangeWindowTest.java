package io.rdmx.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.RdmxTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Per-exchange windows keep stages that feed each other from deadlocking. The plan is the benchmark's: every
 * worker sends its stage-1 rows to all workers, whose stage-1 handler offers each row to stage 2 (again to all
 * workers) and refuses it while that offer is back-pressured. With only the inbox bound (before the windows), the
 * inboxes filled with stage-1 rows their handlers could not pass on, the workers stopped reading, and each waited
 * on another's full inbox until the idle timeout: {@code bench shuffle} at P=8 W=4 on tcp failed that way about
 * one run in six. With the inbox this test gives ({@link ShuffleConfig#guaranteedInbox} for windows of two
 * packs: 13,608 bytes at 8 workers with 4 KiB buffers and 64-byte packs), the code before the windows deadlocked
 * in each of three runs of P=2 W=4 on shm and tcp.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ExchangeWindowTest {
    private static final int ROWS = 200_000;
    private static final int BUFFER = 4096;
    private static final int PACK = 64;

    /** Routes a long row to the worker in its high 32 bits. */
    private static final Routing<RowView> TO_HIGH_BITS = new Routing<>() {
        @Override
        public int route(RowView row, int workers) {
            throw new UnsupportedOperationException("long rows are routed by key");
        }

        @Override
        public int routeKey(long key, int workers) {
            return (int) (key >>> 32);
        }
    };

    @ParameterizedTest
    @ValueSource(strings = {"shm", "tcp"})
    void stagesThatFeedEachOtherFinishWithTheSmallestGuaranteedInbox(String provider) throws Exception {
        for (int[] pw : new int[][] {{1, 4}, {2, 4}, {4, 2}}) {
            if (provider.equals("tcp") && pw[0] == 1) {
                continue; // one process: no network, the same as shm
            }
            int total = pw[0] * pw[1];
            // windows of two packs, and the least inbox that guarantees them
            int inbox = ShuffleConfig.guaranteedInbox(total, PACK, BUFFER, 2);
            // the idle timeout ends a deadlock (a failure here) well within the test's timeout
            long[] got = run(provider, pw[0], pw[1], b -> b.bufferSize(BUFFER).packBytes(PACK).inboxBytes(inbox)
                .windowBytes(2 * (PACK + Inbox.HEADER))
                .idleTimeout(Duration.ofSeconds(20)));
            long sum = total * ((long) ROWS * (ROWS - 1) / 2);
            String what = provider + " P=" + pw[0] + " W=" + pw[1] + " inbox=" + inbox;
            assertEquals((long) total * ROWS, got[0], what + ": stage-1 rows");
            assertEquals(sum, got[1], what + ": stage-1 checksum");
            assertEquals((long) total * ROWS, got[2], what + ": stage-2 rows");
            assertEquals(sum, got[3], what + ": stage-2 checksum");
        }
    }

    /**
     * A record larger than what is left of its window is not stuck below the receiver's credit threshold: a
     * sender holding 6,020 bytes of a 16,384-byte window waits for a credit before a record of 14,020, so the
     * receiver must credit what it took although that is under half the window (it credits at the window less
     * its largest record, here every record: local records reach 16,396 bytes with their header). Rows of 6,000
     * and 14,000 bytes in turn, from one worker to another; the receiver polls, the sender polls when
     * back-pressured (credits arrive through its reads). With credits at half a window only, row 1 never went.
     */
    @Test
    void aRecordLargerThanWhatIsLeftOfTheWindowIsNotStuckBelowTheCreditThreshold() throws Exception {
        try (Cluster c = new Cluster("shm", 1, 2, b -> b.windowBytes(16_384))) {
            ShuffleService s = c.services.get(0);
            Exchange<byte[]> ex = s.exchange(42, Routing.gather(0), RowSerializer.BYTES);
            Worker w0 = s.worker(0);
            Worker w1 = s.worker(1);
            long[] got = new long[2];
            w0.consume(ex, row -> {
                got[0]++;
                got[1] += row.length;
            });
            int rows = 200;
            long bytes = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            for (int i = 0; i < rows; i++) {
                byte[] row = new byte[i % 2 == 0 ? 6_000 : 14_000];
                while (w1.offer(ex, row) != Worker.OK) {
                    w1.poll();
                    w0.poll();
                    assertTrue(System.nanoTime() < deadline, "row " + i + " of " + row.length + " bytes never went");
                }
                bytes += row.length;
            }
            while (w1.offerFinish(ex) != Worker.OK) {
                w1.poll();
                w0.poll();
                assertTrue(System.nanoTime() < deadline);
            }
            assertEquals(Worker.OK, w0.offerFinish(ex));
            while (!w0.done(ex)) {
                w0.poll();
                w1.poll();
                assertTrue(System.nanoTime() < deadline, "received " + got[0] + " of " + rows + " rows");
            }
            assertEquals(rows, got[0]);
            assertEquals(bytes, got[1]);
        }
    }

    /**
     * An exchange whose window is closed does not hold back another exchange's rows to the same worker (they share
     * its pack buffer): a pack is admitted by its window when it starts, so emitting it never waits on a window.
     * Worker 1 offers rows of exchange 43 to worker 0, which reads them but consumes nothing of it yet (set aside),
     * while worker 1 reads no credits, until the window stops it; its next offer of exchange 44 to worker 0 is
     * taken.
     */
    @Test
    void aClosedWindowDoesNotHoldBackAnotherExchangeToTheSameWorker() throws Exception {
        try (Cluster c = new Cluster("shm", 1, 2, b -> b.windowBytes(16_384))) {
            ShuffleService s = c.services.get(0);
            Exchange<RowView> held = s.intExchange(43, Routing.gather(0));
            Exchange<RowView> other = s.intExchange(44, Routing.gather(0));
            Worker w0 = s.worker(0);
            Worker w1 = s.worker(1);
            int sent = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (w1.offerInt(held, sent) == Worker.OK) {
                sent++;
                if (sent % 1024 == 0) {
                    w1.flush();
                    w0.poll(); // reads and sets aside: the ring never fills, only the window can stop worker 1
                }
                assertTrue(System.nanoTime() < deadline && sent < 1_000_000, "the window never closed: " + sent);
            }
            assertTrue(sent * 4L >= 8_192 && sent * 4L <= 16_384 + 4_096, "stopped after bytes=" + sent * 4L);
            assertEquals(Worker.OK, w1.offerInt(other, 7), "exchange 44 waits behind exchange 43's closed window");
            long[] got = new long[2];
            w0.consumeInts(other, v -> {
                got[0] += v;
                return true;
            });
            w0.consumeInts(held, v -> {
                got[1]++;
                return true;
            });
            assertEquals(Worker.OK, w1.flush());
            while (got[0] != 7 || got[1] != sent) {
                w0.poll();
                w1.poll();
                assertTrue(System.nanoTime() < deadline, "received " + got[1] + " of " + sent);
            }
        }
    }

    /** @return stage-1 rows and checksum, stage-2 rows and checksum, over every worker of every process */
    private static long[] run(String provider, int processes, int workers, UnaryOperator<ShuffleConfig.Builder> cfg)
        throws Exception {
        try (Cluster c = new Cluster(provider, processes, workers, cfg)) {
            List<long[]> parts = c.spmd(svc -> {
                Exchange<RowView> s1 = svc.longExchange(40, TO_HIGH_BITS);
                Exchange<RowView> s2 = svc.longExchange(41, TO_HIGH_BITS);
                ExecutorService ex = Executors.newFixedThreadPool(workers);
                try {
                    List<Future<long[]>> fs = new ArrayList<>();
                    for (int w = 0; w < workers; w++) {
                        Worker wk = svc.worker(w);
                        fs.add(ex.submit(() -> worker(wk, s1, s2)));
                    }
                    long[] sum = new long[4];
                    for (Future<long[]> f : fs) {
                        long[] r = f.get();
                        for (int i = 0; i < 4; i++) {
                            sum[i] += r[i];
                        }
                    }
                    return sum;
                } catch (ExecutionException e) {
                    throw e.getCause() instanceof Exception x ? x : e;
                } finally {
                    ex.shutdownNow();
                }
            });
            long[] sum = new long[4];
            for (long[] p : parts) {
                for (int i = 0; i < 4; i++) {
                    sum[i] += p[i];
                }
            }
            return sum;
        } catch (ExecutionException | IllegalStateException e) {
            // Cluster.spmd wraps a body's exception: the control test wants the worker's own
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (t instanceof RdmxTimeoutException) {
                    throw new ExecutionException(t);
                }
            }
            throw e;
        }
    }

    /** @return a hashed destination in the high 32 bits */
    private static long to(long seed, int total) {
        return (long) Routing.partition(Routing.mix(seed), total) << 32;
    }

    private static long[] worker(Worker w, Exchange<RowView> s1, Exchange<RowView> s2) throws Exception {
        int total = w.totalWorkers();
        long[] acc = new long[4];
        w.consumeLongs(s1, x -> {
            if (w.offerLong(s2, to(x * 31 + 7, total) | (x & 0xFFFF_FFFFL)) != Worker.OK) {
                return false; // the next stage is back-pressured: refuse, the row waits in the inbox
            }
            acc[0]++;
            acc[1] += x & 0xFFFF_FFFFL;
            return true;
        });
        w.consumeLongs(s2, x -> {
            acc[2]++;
            acc[3] += x & 0xFFFF_FFFFL;
            return true;
        });
        long[] i = {0};
        boolean[] finished = new boolean[2];
        w.run(() -> {
            if (i[0] < ROWS) {
                long start = i[0];
                while (i[0] < ROWS && w.offerLong(s1, to(i[0] + 1000L * w.globalIndex(), total) | i[0]) == Worker.OK) {
                    i[0]++;
                }
                return i[0] > start;
            }
            if (!finished[0]) {
                finished[0] = w.offerFinish(s1) == Worker.OK;
                return finished[0];
            }
            if (!finished[1] && w.done(s1)) {
                finished[1] = w.offerFinish(s2) == Worker.OK;
                return finished[1];
            }
            return false;
        }, () -> finished[1] && w.done(s2));
        w.release(s1);
        w.release(s2);
        return acc;
    }
}
