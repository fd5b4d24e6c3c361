package io.rdmx.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.RdmxException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The non-blocking API: offers with return codes, primitive, fixed-width and batch rows, the bounded inbox. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ShuffleApiTest {
    private static final long DEADLINE_NANOS = TimeUnit.SECONDS.toNanos(60);

    /** Runs one body per worker of every process, each on its own thread; results in global worker order. */
    private static <T, R> List<R> everyWorker(Cluster c, java.util.function.Function<ShuffleService, Exchange<T>> decl,
                                              WorkerBody<T, R> body) throws Exception {
        List<List<R>> per = c.spmd(s -> {
            Exchange<T> exchange = decl.apply(s);
            ExecutorService ex = Executors.newFixedThreadPool(s.config().workers());
            try {
                List<Future<R>> fs = new ArrayList<>();
                for (int w = 0; w < s.config().workers(); w++) {
                    Worker wk = s.worker(w);
                    fs.add(ex.submit(() -> body.run(exchange, wk)));
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
        per.forEach(all::addAll);
        return all;
    }

    interface WorkerBody<T, R> {
        R run(Exchange<T> ex, Worker w) throws Exception;
    }

    /** The engine's side of an offer: poll while back-pressured, fail on CLOSED, bounded by a deadline. */
    private static void offered(Worker w, java.util.function.IntSupplier offer) throws RdmxException {
        long deadline = System.nanoTime() + DEADLINE_NANOS;
        int rc;
        while ((rc = offer.getAsInt()) != Worker.OK) {
            if (rc == Worker.CLOSED) {
                throw w.failure();
            }
            w.poll();
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("worker " + w.globalIndex() + " stayed back-pressured");
            }
        }
    }

    private static void finishAndDrain(Worker w, Exchange<?> ex) throws RdmxException {
        offered(w, () -> w.offerFinish(ex));
        long deadline = System.nanoTime() + DEADLINE_NANOS;
        while (!w.done(ex)) {
            w.poll();
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("worker " + w.globalIndex() + " never saw every end-of-stream");
            }
        }
    }

    @Test
    void intRowsArePackedManyToARecordAndDeliveredExactlyOnce() throws Exception {
        int rows = 20_000;
        try (Cluster c = new Cluster("shm", 2, 2, b -> b)) {
            List<long[]> got = everyWorker(c, s -> s.intExchange(1, Routing.byKey()), (ex, w) -> {
                long[] acc = new long[2];
                w.consumeInts(ex, v -> {
                    acc[0]++;
                    acc[1] += v;
                    return true;
                });
                for (int i = 0; i < rows; i++) {
                    int v = w.globalIndex() * rows + i;
                    offered(w, () -> w.offerInt(ex, v));
                }
                finishAndDrain(w, ex);
                assertEquals(rows, w.rowsSent());
                return acc;
            });
            for (ShuffleService s : c.services) {
                ShuffleMetrics m = s.metrics();
                assertEquals(2L * rows, m.rowsSent());
                assertEquals(s.networkRecords(), m.networkRecords());
                assertEquals(0, m.inboxBytes());
            }
            long n = got.stream().mapToLong(a -> a[0]).sum();
            long sum = got.stream().mapToLong(a -> a[1]).sum();
            long total = 4L * rows;
            assertEquals(total, n);
            assertEquals(total * (total - 1) / 2, sum);
            assertTrue(got.stream().allMatch(a -> a[0] > 0), "every worker receives rows");
            for (ShuffleService s : c.services) {
                // about half of each worker's rows go to the other process; one record carries up to 1024 ints
                assertTrue(s.networkRecords() < rows / 50, "rows are packed: records=" + s.networkRecords());
            }
        }
    }

    @Test
    void longRowsArriveInBatches() throws Exception {
        int rows = 10_000;
        try (Cluster c = new Cluster("tcp", 2, 1, b -> b)) {
            List<long[]> got = everyWorker(c, s -> s.longExchange(2, Routing.gather(0)), (ex, w) -> {
                long[] acc = new long[3];
                w.consumeBatches(ex, rv -> {
                    acc[2] = Math.max(acc[2], rv.count());
                    for (int i = 0; i < rv.count(); i++) {
                        acc[0]++;
                        acc[1] += rv.getLong(i, 0);
                    }
                    return rv.count();
                });
                for (long i = 0; i < rows; i++) {
                    long v = (long) w.globalIndex() << 40 | i;
                    offered(w, () -> w.offerLong(ex, v));
                }
                finishAndDrain(w, ex);
                return acc;
            });
            long want = 0;
            for (long g = 0; g < 2; g++) {
                for (long i = 0; i < rows; i++) {
                    want += g << 40 | i;
                }
            }
            assertEquals(2L * rows, got.get(0)[0]);
            assertEquals(want, got.get(0)[1]);
            assertEquals(0, got.get(1)[0], "gathered to worker 0 only");
            assertTrue(got.get(0)[2] > 1, "a batch holds many rows: " + got.get(0)[2]);
        }
    }

    @Test
    void fixedWidthRowsAreWrittenInPlaceAndReadThroughAFlyweightView() throws Exception {
        int rows = 5000;
        try (Cluster c = new Cluster("loopback", 2, 2, b -> b)) {
            List<long[]> got = everyWorker(c, s -> s.fixedExchange(3, 20, Routing.byKey()), (ex, w) -> {
                long[] acc = new long[3];
                w.consumeRows(ex, rv -> {
                    long key = rv.getLong(0);
                    if (rv.getLong(8) != key * 3 || rv.getInt(16) != (int) key || rv.count() != 1) {
                        throw new AssertionError("row " + key + " is torn");
                    }
                    acc[0]++;
                    acc[1] += key;
                    if (Routing.partition(Routing.mix(key), w.totalWorkers()) != w.globalIndex()) {
                        acc[2]++;
                    }
                    return true;
                });
                long[] key = {0};
                Handlers.RowWriter writer = (buf, at) -> {
                    buf.putLong(at, key[0]);
                    buf.putLong(at + 8, key[0] * 3);
                    buf.putInt(at + 16, (int) key[0]);
                };
                for (long i = 0; i < rows; i++) {
                    key[0] = w.globalIndex() * (long) rows + i;
                    offered(w, () -> w.offerRow(ex, key[0], writer));
                }
                finishAndDrain(w, ex);
                return acc;
            });
            long total = 4L * rows;
            assertEquals(total, got.stream().mapToLong(a -> a[0]).sum());
            assertEquals(total * (total - 1) / 2, got.stream().mapToLong(a -> a[1]).sum());
            assertEquals(0, got.stream().mapToLong(a -> a[2]).sum(), "each row reaches the worker its key hashes to");
        }
    }

    @Test
    void objectRowsCanBeReadAsAViewOfTheirBytes() throws Exception {
        try (Cluster c = new Cluster("shm", 2, 1, b -> b)) {
            List<String> got = everyWorker(c, s -> s.exchange(4, Routing.gather(1), RowSerializer.BYTES), (ex, w) -> {
                StringBuilder sb = new StringBuilder();
                w.consumeRows(ex, rv -> {
                    byte[] b = new byte[rv.width()];
                    rv.copy(0, b, 0);
                    sb.append(new String(b, StandardCharsets.UTF_8)).append(';');
                    return true;
                });
                offered(w, () -> w.offer(ex, ("hello from " + w.globalIndex()).getBytes(StandardCharsets.UTF_8)));
                finishAndDrain(w, ex);
                return sb.toString();
            });
            assertEquals("", got.get(0));
            assertTrue(got.get(1).contains("hello from 0;") && got.get(1).contains("hello from 1;"), got.get(1));
        }
    }

    @Test
    void broadcastOfIntsReachesEveryWorkerOnce() throws Exception {
        try (Cluster c = new Cluster("shm", 2, 2, b -> b.bufferSize(4096))) {
            List<Long> got = everyWorker(c, s -> s.intExchange(5, Routing.broadcast()), (ex, w) -> {
                long[] sum = {0};
                w.consumeInts(ex, v -> {
                    sum[0] += v;
                    return true;
                });
                for (int i = 1; i <= 3000; i++) {
                    int v = i;
                    offered(w, () -> w.offerInt(ex, v));
                }
                finishAndDrain(w, ex);
                return sum[0];
            });
            for (long v : got) {
                assertEquals(4L * 3000 * 3001 / 2, v);
            }
        }
    }

    /**
     * One thread drives both workers of one process (deterministic): worker 0's handler refuses every row; the
     * rows it could not take go to its inbox until that is full, then it stops reading and worker 1's offers are
     * back-pressured. Once it accepts, every row arrives exactly once and in order.
     */
    @Test
    void aRefusingHandlerFillsTheBoundedInboxThenBackPressuresTheSender() throws Exception {
        int inbox = 8192;
        // windows far larger than the inbox: the inbox bound, not the per-exchange window, stops the sender here
        // (and worker 1, which never polls, reads no credits)
        try (Cluster c = new Cluster("shm", 1, 2, b -> b.bufferSize(4096).inboxBytes(inbox).windowBytes(1 << 30))) {
            ShuffleService s = c.services.get(0);
            Exchange<RowView> ex = s.intExchange(6, Routing.gather(0));
            Worker w0 = s.worker(0);
            Worker w1 = s.worker(1);
            boolean[] accepting = {false};
            int[] expect = {0};
            w0.consumeInts(ex, v -> {
                if (!accepting[0]) {
                    return false;
                }
                assertEquals(expect[0], v, "rows of one sender arrive in order");
                expect[0]++;
                return true;
            });
            int rows = 100_000;
            int next = 0;
            long maxStashed = 0;
            int stalls = 0;
            long deadline = System.nanoTime() + DEADLINE_NANOS;
            // until the sender is back-pressured and the receiver cannot set anything more aside, twice in a row
            while (stalls < 2 && next < rows) {
                while (next < rows && w1.offerInt(ex, next) == Worker.OK) {
                    next++;
                }
                w1.flush();
                int polled = w0.poll();
                maxStashed = Math.max(maxStashed, w0.stashedBytes());
                stalls = polled == 0 ? stalls + 1 : 0;
                assertTrue(System.nanoTime() < deadline);
            }
            assertTrue(next < rows, "the sender must be stopped by back-pressure, sent " + next);
            assertTrue(w1.backPressured() > 0);
            assertTrue(maxStashed > 0 && maxStashed <= inbox, "inbox used " + maxStashed + " of " + inbox);
            assertEquals(0, expect[0]);
            accepting[0] = true;
            while (next < rows) {
                if (w1.offerInt(ex, next) == Worker.OK) {
                    next++;
                } else {
                    w0.poll();
                }
                assertTrue(System.nanoTime() < deadline);
            }
            while (w1.offerFinish(ex) != Worker.OK) {
                w0.poll();
            }
            assertEquals(Worker.OK, w0.offerFinish(ex));
            while (!w0.done(ex)) {
                w0.poll();
                w1.poll();
                assertTrue(System.nanoTime() < deadline);
            }
            assertEquals(rows, expect[0]);
            assertEquals(rows, w0.rowsReceived(ex));
            assertEquals(0, w0.stashedBytes());
        }
    }

    /**
     * One process (no channel engine): a worker blocked in {@link Worker#await} with a long timeout is woken by
     * its sibling's rows, not by the timeout (a lost wake-up would hold it for an hour, past the test's timeout).
     */
    @Test
    void aWorkerOfASingleProcessBlockedInAwaitIsWokenByItsSibling() throws Exception {
        try (Cluster c = new Cluster("shm", 1, 2, b -> b)) {
            ShuffleService s = c.services.get(0);
            Exchange<RowView> ex = s.intExchange(16, Routing.gather(0));
            Worker w0 = s.worker(0);
            Worker w1 = s.worker(1);
            long[] got = {0};
            w0.consumeInts(ex, v -> {
                got[0] += v;
                return true;
            });
            assertEquals(Worker.OK, w0.offerFinish(ex));
            io.rdmx.transport.testsuite.Blocking.Call<Long> waiter = io.rdmx.transport.testsuite.Blocking.start(
                "worker-0", () -> {
                    while (!w0.done(ex)) {
                        if (w0.poll() == 0) {
                            w0.await(1, TimeUnit.HOURS);
                        }
                    }
                    return got[0];
                });
            io.rdmx.transport.testsuite.Blocking.awaitBlockedIn(waiter, "read", java.time.Duration.ofSeconds(10));
            assertEquals(Worker.OK, w1.offerInt(ex, 41));
            assertEquals(Worker.OK, w1.offerFinish(ex));
            assertEquals(41L, waiter.result().get(60, TimeUnit.SECONDS));
        }
    }

    /**
     * The shuffle runs its channels without the channel's timed flush (its engines' network threads do not wake to
     * scan while workers write), so a worker's own {@link Worker#poll} must send what it offered: one int offered
     * over tcp to the other process reaches it while the sender only polls (no flush, no end-of-stream). Were the
     * poll not to flush, the row would wait in the sender's pack forever and the receiver's deadline would fail.
     */
    @Test
    void aRowOfferedAndThenOnlyPolledReachesTheOtherProcessWithoutTheChannelsTimedFlush() throws Exception {
        ShuffleConfig one = ShuffleConfig.builder(0, 2, 1).provider("tcp").members(Cluster.freePorts(2)).build();
        assertTrue(RingShuffleTransport.channelConfig(one, "tcp").flushInterval().isZero(),
            "the channel's timed flush is off in the shuffle");
        assertTrue(RingShuffleTransport.channelConfig(one, "shm").flushInterval().isZero());
        java.util.concurrent.atomic.AtomicBoolean arrived = new java.util.concurrent.atomic.AtomicBoolean();
        try (Cluster c = new Cluster("tcp", 2, 1, b -> b)) {
            List<Long> got = everyWorker(c, s -> s.intExchange(17, Routing.gather(0)), (ex, w) -> {
                long[] sum = {0};
                w.consumeInts(ex, v -> {
                    sum[0] += v;
                    arrived.set(true);
                    return true;
                });
                long deadline = System.nanoTime() + DEADLINE_NANOS;
                if (w.globalIndex() == 1) {
                    offered(w, () -> w.offerInt(ex, 4242));
                }
                while (!arrived.get()) {
                    w.poll();
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("worker " + w.globalIndex() + ": the row offered by worker 1"
                            + " did not reach worker 0 while both polled");
                    }
                    Thread.onSpinWait();
                }
                finishAndDrain(w, ex);
                return sum[0];
            });
            assertEquals(List.of(4242L, 0L), got);
        }
    }

    @Test
    void rowsOfAnExchangeNobodyConsumesYetWaitInTheInboxWithoutBlockingOthers() throws Exception {
        try (Cluster c = new Cluster("shm", 1, 2, b -> b)) {
            ShuffleService s = c.services.get(0);
            Exchange<RowView> early = s.intExchange(7, Routing.gather(0));
            Exchange<RowView> other = s.intExchange(8, Routing.gather(0));
            Worker w0 = s.worker(0);
            Worker w1 = s.worker(1);
            long[] got = new long[2];
            w0.consumeInts(other, v -> {
                got[1] += v;
                return true;
            });
            assertEquals(Worker.OK, w1.offerInt(early, 5));
            assertEquals(Worker.OK, w1.offerInt(other, 7));
            assertEquals(Worker.OK, w1.offerFinish(other));
            assertEquals(Worker.OK, w0.offerFinish(other));
            long deadline = System.nanoTime() + DEADLINE_NANOS;
            while (!w0.done(other)) {
                w0.poll();
                assertTrue(System.nanoTime() < deadline);
            }
            assertEquals(7, got[1]);
            assertTrue(w0.stashedBytes() > 0, "the early row waits for its consumer");
            w0.consumeInts(early, v -> {
                got[0] += v;
                return true;
            });
            w0.poll();
            assertEquals(5, got[0]);
        }
    }

    /**
     * The inbox compacts in place (overlapping ranges): two delivered records at its front are squeezed out so a
     * record that would run past its end fits, and the records moved keep their bytes and order. Packs of 32 ints
     * (128 bytes, a full pack with 1 KiB buffers) take 148 bytes in the inbox; fourteen of them fit in 2208 bytes
     * only once the 144 bytes of the two delivered records before them are reclaimed (each record moves by 144
     * bytes, less than its own 148), and the worker reads on while the largest record fits (276 bytes, so 2208 is
     * the least that reads the fourteenth). Windows larger than the inbox: the sender (which never polls, so it
     * reads no credits) is not stopped.
     */
    @Test
    void theInboxCompactsInPlaceKeepingTheRecordsItMoves() throws Exception {
        try (Cluster c = new Cluster("shm", 1, 2, b -> b.bufferSize(1024).inboxBytes(2208).windowBytes(1 << 20))) {
            ShuffleService s = c.services.get(0);
            Exchange<RowView> late = s.intExchange(9, Routing.gather(0));
            Exchange<RowView> first = s.intExchange(10, Routing.gather(0));
            Worker w0 = s.worker(0);
            Worker w1 = s.worker(1);
            boolean[] accepting = {false};
            w0.consumeInts(first, v -> accepting[0]);
            for (int r = 0; r < 2; r++) { // two records of 13 ints: 72 bytes each in the inbox
                for (int i = 0; i < 13; i++) {
                    assertEquals(Worker.OK, w1.offerInt(first, i));
                }
                assertEquals(Worker.OK, w1.flush());
            }
            int perRecord = 32;
            int records = 14;
            int next = 0;
            for (int i = 0; i < perRecord; i++) {
                assertEquals(Worker.OK, w1.offerInt(late, next++));
            }
            assertEquals(Worker.OK, w1.flush());
            assertTrue(w0.poll() > 0); // the first records refused, everything after them set aside
            assertEquals(144 + 148, w0.stashedBytes());
            accepting[0] = true;
            w0.poll(); // delivers the two records at the front: 144 bytes free before the late one
            assertEquals(148, w0.stashedBytes());
            for (int r = 1; r < records; r++) {
                for (int i = 0; i < perRecord; i++) {
                    assertEquals(Worker.OK, w1.offerInt(late, next++));
                }
                assertEquals(Worker.OK, w1.flush());
                assertTrue(w0.poll() > 0, "record " + r + " read");
            }
            assertEquals(records * 148L, w0.stashedBytes()); // more than 2208 - 144: the inbox was compacted
            int[] expect = {0};
            w0.consumeInts(late, v -> {
                assertEquals(expect[0], v, "rows moved by the compaction keep their order and value");
                expect[0]++;
                return true;
            });
            w0.poll();
            assertEquals(records * perRecord, expect[0]);
            assertEquals(0, w0.stashedBytes());
        }
    }

    @Test
    void anOfferToALostPeerReturnsClosedAndPollThrowsNamingIt() throws Exception {
        try (Cluster c = new Cluster("tcp", 2, 1, b -> b)) {
            ShuffleService s0 = c.services.get(0);
            Exchange<RowView> ex = s0.intExchange(9, Routing.gather(1));
            Worker w = s0.worker(0);
            c.services.get(1).close();
            long deadline = System.nanoTime() + DEADLINE_NANOS;
            int rc = Worker.OK;
            for (int i = 0; rc != Worker.CLOSED; i++) {
                rc = w.offerInt(ex, i);
                if (rc == Worker.BACK_PRESSURED) {
                    w.flush();
                    Thread.onSpinWait();
                }
                assertTrue(System.nanoTime() < deadline, "offers never saw the loss");
            }
            assertNotNull(w.failure());
            assertEquals(Worker.CLOSED, w.offerInt(ex, 0), "stays closed");
            RdmxException e = assertThrows(RdmxException.class, w::poll);
            assertInstanceOf(ConnectionClosedException.class, e);
            String peer = s0.config().nodeName(1);
            assertTrue(e.getMessage().contains(peer), e.getMessage());
        }
    }

    /**
     * Rank 1 ends every stream and closes while rank 0 still waits for its own second worker: rank 0 goes on (a
     * rank that ended what the others consume may leave), and the loss is no failure.
     */
    @Test
    void aRankThatEndedEveryStreamMayLeaveBeforeTheOthersFinish() throws Exception {
        try (Cluster c = new Cluster("shm", 2, 2, b -> b)) {
            List<Worker> all = new ArrayList<>();
            List<Exchange<RowView>> as = new ArrayList<>();
            List<Exchange<RowView>> bs = new ArrayList<>();
            for (ShuffleService s : c.services) {
                as.add(s.intExchange(20, Routing.byKey()));
                bs.add(s.intExchange(21, Routing.gather(0)));
                all.add(s.worker(0));
                all.add(s.worker(1));
            }
            long[] sumA = new long[4];
            long[] sumB = {0};
            for (int g = 0; g < 4; g++) {
                int gi = g;
                all.get(g).consumeInts(as.get(g / 2), v -> {
                    sumA[gi] += v;
                    return true;
                });
            }
            all.get(0).consumeInts(bs.get(0), v -> {
                sumB[0] += v;
                return true;
            });
            long deadline = System.nanoTime() + DEADLINE_NANOS;
            for (int g = 0; g < 4; g++) {
                Worker w = all.get(g);
                for (int i = 0; i < 100; i++) {
                    int v = g * 100 + i;
                    while (w.offerInt(as.get(g / 2), v) != Worker.OK) {
                        all.forEach(ShuffleApiTest::pollQuietly);
                        assertTrue(System.nanoTime() < deadline);
                    }
                }
                while (w.offerFinish(as.get(g / 2)) != Worker.OK) {
                    all.forEach(ShuffleApiTest::pollQuietly);
                }
            }
            // rank 1 also ends stage B (it sends nothing there), then waits for stage A and leaves
            for (int g = 2; g < 4; g++) {
                assertEquals(Worker.OK, all.get(g).offerFinish(bs.get(1)));
            }
            while (!all.get(2).done(as.get(1)) || !all.get(3).done(as.get(1))) {
                all.forEach(ShuffleApiTest::pollQuietly);
                assertTrue(System.nanoTime() < deadline);
            }
            c.services.get(1).close();
            Worker w0 = all.get(0);
            while (w0.ranksGone() == 0) {
                w0.await(10, TimeUnit.MILLISECONDS); // reads the loss of rank 1; must not throw
                assertTrue(System.nanoTime() < deadline, "rank 1's departure never seen");
            }
            // only now does rank 0's second worker send stage B
            Worker w1 = all.get(1);
            assertEquals(Worker.OK, w1.offerInt(bs.get(0), 7));
            assertEquals(Worker.OK, w1.offerFinish(bs.get(0)));
            assertEquals(Worker.OK, w0.offerFinish(bs.get(0)));
            while (!w0.done(bs.get(0)) || !w0.done(as.get(0)) || !w1.done(as.get(0))) {
                w0.poll();
                w1.poll();
                assertTrue(System.nanoTime() < deadline);
            }
            assertEquals(7, sumB[0]);
            assertEquals(400L * 399 / 2, sumA[0] + sumA[1] + sumA[2] + sumA[3]);
            assertEquals(null, w0.failure());
        }
    }

    private static void pollQuietly(Worker w) {
        try {
            w.poll();
        } catch (RdmxException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void autoChoosesShmForPeersOnThisHostAndTcpOrVerbsForOthers() throws Exception {
        try (Cluster c = new Cluster("auto", 2, 1, b -> b)) {
            assertEquals("shm", c.services.get(0).provider(1));
            assertEquals("shm", c.services.get(1).provider(0));
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> c.services.get(0).provider(0));
            assertTrue(e.getMessage().contains("rank=0"), e.getMessage());
        }
        ShuffleConfig cfg = ShuffleConfig.builder(0, 3, 1).provider("auto")
            .members(List.of("127.0.0.1:7000", "localhost:7001", "192.0.2.1:7000")).build();
        String[] chosen = RingShuffleTransport.choose(cfg);
        assertEquals(null, chosen[0]);
        assertEquals("shm", chosen[1]);
        // no RDMA provider on this module's class path: another host is reached over tcp
        assertEquals("tcp", chosen[2]);
        String[] fixed = RingShuffleTransport.choose(ShuffleConfig.builder(1, 3, 1).provider("verbs")
            .members(List.of("127.0.0.1:7000", "localhost:7001", "192.0.2.1:7000")).build());
        assertEquals(List.of("verbs", "verbs"), List.of(fixed[0], fixed[2]));
    }

    /**
     * A member entry names the provider of its rank ({@code tcp://}); {@code auto} chooses shm for the others:
     * ranks 0 and 1 run two engines (shm between them, tcp to rank 2) and read both.
     */
    @Test
    void aMemberMayPinItsProviderAndWorkersReadPeersOnSeveralProviders() throws Exception {
        List<String> ports = Cluster.freePorts(3);
        List<String> members = List.of(ports.get(0), ports.get(1), "tcp://" + ports.get(2));
        long rows = 20_000;
        try (Cluster c = new Cluster("auto", 3, 2, b -> b.members(members))) {
            assertEquals("shm", c.services.get(0).provider(1));
            assertEquals("tcp", c.services.get(0).provider(2));
            assertEquals("tcp", c.services.get(1).provider(2));
            assertEquals("tcp", c.services.get(2).provider(0));
            assertEquals(java.util.Arrays.asList(null, "shm", "tcp"), c.services.get(0).metrics().providers());
            List<TwoStagePlan.Result> rs = c.spmd(s -> TwoStagePlan.run(s, rows, 30));
            TwoStagePlan.Result total = rs.get(0).plus(rs.get(1)).plus(rs.get(2));
            long[] want = TwoStagePlan.expected(3, rows);
            assertEquals(want[0], total.count1());
            assertEquals(want[1], total.sum1());
            assertEquals(want[0], total.count2());
            assertEquals(want[2], total.sum2());
        }
    }

    @Test
    void anUnknownProviderFailsNamingIt() {
        ShuffleConfig cfg = ShuffleConfig.builder(0, 2, 1).provider("disni")
            .members(List.of("127.0.0.1:1", "127.0.0.1:2")).build();
        RdmxException e = assertThrows(RdmxException.class, () -> ShuffleService.open(cfg));
        assertTrue(e.getMessage().contains("provider=disni"), e.getMessage());
    }

    @Test
    void membershipComesFromAFile(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("members");
        Files.writeString(f, "# rank order\nhostA:7000\n\n  hostB:7000  \n");
        ShuffleConfig cfg = ShuffleConfig.builder(1, 2, 1).provider("tcp").membersFile(f).build();
        assertEquals(List.of("hostA:7000", "hostB:7000"), cfg.members());
        assertEquals("hostB", cfg.host(1));
    }

    @Test
    void badConfigurationFailsNamingTheValue() {
        assertMessage("provider=bogus", () -> ShuffleConfig.builder(0, 1, 1).provider("bogus").build());
        assertMessage("'nohost' is not host:port", () -> ShuffleConfig.builder(0, 1, 1).provider("tcp")
            .members(List.of("nohost")).build());
        assertMessage("no numeric port", () -> ShuffleConfig.builder(0, 1, 1).provider("tcp")
            .members(List.of("h:x")).build());
        assertMessage("port=70000", () -> ShuffleConfig.builder(0, 1, 1).provider("tcp")
            .members(List.of("h:70000")).build());
        assertMessage("listed twice", () -> ShuffleConfig.builder(0, 2, 1).provider("tcp")
            .members(List.of("h:1", "h:1")).build());
        assertMessage("members=1, processes=2", () -> ShuffleConfig.builder(0, 2, 1).provider("tcp")
            .members(List.of("h:1")).build());
        assertMessage("provider=foo", () -> ShuffleConfig.builder(0, 1, 1).provider("tcp")
            .members(List.of("foo://h:1")).build());
        assertMessage("name different providers (shm, tcp)", () -> ShuffleConfig.builder(0, 2, 1).provider("auto")
            .members(List.of("shm://h:1", "tcp://h:2")).build());
        assertMessage("packBytes=4", () -> ShuffleConfig.builder(0, 1, 1).packBytes(4).build());
        assertMessage("inboxBytes=1000", () -> ShuffleConfig.builder(0, 1, 1).inboxBytes(1000).build());
        assertMessage("workers=0", () -> ShuffleConfig.builder(0, 1, 0).build());
        assertMessage("job=a b", () -> ShuffleConfig.builder(0, 1, 1).job("a b").build());
    }

    @Test
    void misusedExchangesFailNamingTheValue() throws Exception {
        try (Cluster c = new Cluster("shm", 1, 1, b -> b)) {
            ShuffleService s = c.services.get(0);
            Worker w = s.worker(0);
            Exchange<RowView> longs = s.longExchange(10, Routing.byKey());
            Exchange<Integer> objects = s.exchange(11, Routing.hash(x -> x), RowSerializer.INT);
            Exchange<Integer> bad = s.exchange(12, (row, n) -> n + 3, RowSerializer.INT);
            assertMessage("width=8", () -> w.consumeInts(longs, v -> true));
            assertMessage("width=8", () -> w.offerInt(longs, 1));
            assertMessage("width=0", () -> w.offerRow(objects, 1, (b, at) -> { }));
            assertMessage("width=0", () -> w.consumeBatches(objects, rv -> 0));
            assertMessage("width=4", () -> w.consume(s.intExchange(13, Routing.byKey()), x -> { }));
            assertMessage("worker=4", () -> w.offer(bad, 1));
            assertMessage("width=0", () -> s.fixedExchange(14, 0, Routing.byKey()));
            assertMessage("id=32768", () -> s.intExchange(Exchange.MAX_ID + 1, Routing.byKey()));
            assertMessage("id=10 is already declared", () -> s.intExchange(10, Routing.byKey()));
            assertMessage("handler=null", () -> w.consumeLongs(longs, null));
            w.consumeLongs(longs, v -> true);
            IllegalStateException twice = assertThrows(IllegalStateException.class,
                () -> w.consumeLongs(longs, v -> true));
            assertTrue(twice.getMessage().contains("already consumes exchange 10"), twice.getMessage());
        }
    }

    /**
     * A consumer that only polls (the loop of {@link ShuffleService}'s javadoc) learns that a rank it waits for
     * was lost: its poll throws naming the rank's node. Before, only a blocking read reported a loss, so this
     * loop polled forever.
     */
    @Test
    void aConsumerThatOnlyPollsIsToldOfALostRankNamingIt() throws Exception {
        try (Cluster c = new Cluster("tcp", 2, 1, b -> b)) {
            ShuffleService s0 = c.services.get(0);
            Exchange<RowView> ex = s0.intExchange(9, Routing.gather(0));
            Worker w = s0.worker(0);
            w.consumeInts(ex, v -> true);
            offered(w, () -> w.offerFinish(ex));
            c.services.get(1).close(); // rank 1 never ended its stream
            long deadline = System.nanoTime() + DEADLINE_NANOS;
            RdmxException lost = null;
            while (lost == null && !w.done(ex)) {
                try {
                    w.poll();
                } catch (RdmxException e) {
                    lost = e;
                }
                assertTrue(System.nanoTime() < deadline, "polls never saw the loss");
            }
            assertInstanceOf(ConnectionClosedException.class, lost);
            String peer = s0.config().nodeName(1);
            assertTrue(lost.getMessage().contains(peer), lost.getMessage());
            assertTrue(!w.done(ex));
        }
    }

    /**
     * A handler that polls would read the record it is handling again (rows delivered twice): the poll is refused
     * with a clear error, and the rows are delivered once.
     */
    @Test
    void pollInsideARowHandlerIsRefusedAndNoRowArrivesTwice() throws Exception {
        try (Cluster c = new Cluster("shm", 1, 2, b -> b)) {
            ShuffleService s = c.services.get(0);
            Exchange<RowView> ex = s.intExchange(17, Routing.gather(0));
            Worker w0 = s.worker(0);
            Worker w1 = s.worker(1);
            List<Integer> got = new ArrayList<>();
            List<String> refused = new ArrayList<>();
            w0.consumeInts(ex, v -> {
                if (v == 0) {
                    try {
                        w0.poll();
                    } catch (IllegalStateException e) {
                        refused.add(e.getMessage());
                    } catch (RdmxException e) {
                        throw new AssertionError(e);
                    }
                    try {
                        w0.release(ex);
                    } catch (IllegalStateException e) {
                        refused.add(e.getMessage());
                    }
                }
                got.add(v);
                return true;
            });
            for (int i = 0; i < 10; i++) {
                assertEquals(Worker.OK, w1.offerInt(ex, i));
            }
            assertEquals(Worker.OK, w1.offerFinish(ex));
            finishAndDrain(w0, ex);
            assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), got);
            assertEquals(10, w0.rowsReceived(ex));
            assertEquals(2, refused.size());
            assertTrue(refused.get(0).contains("poll() inside a row handler"), refused.get(0));
            assertTrue(refused.get(1).contains("release() inside a row handler"), refused.get(1));
        }
    }

    /**
     * A worker that abandons an exchange (releases it before it is done) while rows of it are set aside: they are
     * dropped, and so are rows of it that come later, instead of holding inbox space for good; another exchange
     * goes on.
     */
    @Test
    void anAbandonedExchangesRowsAreDroppedNotKeptInTheInbox() throws Exception {
        try (Cluster c = new Cluster("shm", 1, 2, b -> b)) {
            ShuffleService s = c.services.get(0);
            Exchange<RowView> abandoned = s.intExchange(18, Routing.gather(0));
            Exchange<RowView> other = s.intExchange(19, Routing.gather(0));
            Worker w0 = s.worker(0);
            Worker w1 = s.worker(1);
            w0.consumeInts(abandoned, v -> false); // refuses: what arrives is set aside
            long[] otherSum = {0};
            w0.consumeInts(other, v -> {
                otherSum[0] += v;
                return true;
            });
            for (int i = 0; i < 1000; i++) {
                assertEquals(Worker.OK, w1.offerInt(abandoned, i));
            }
            w1.flush();
            w0.poll();
            assertTrue(w0.stashedBytes() > 0, "nothing was set aside");
            w0.release(abandoned);
            w0.release(abandoned); // twice, as cleanup code may: the second keeps what the first decided
            assertEquals(0, w0.stashedBytes());
            for (int i = 0; i < 1000; i++) {
                assertEquals(Worker.OK, w1.offerInt(abandoned, i)); // still in flight after the release
            }
            for (int i = 0; i < 1000; i++) {
                assertEquals(Worker.OK, w1.offerInt(other, 1));
            }
            assertEquals(Worker.OK, w1.offerFinish(abandoned));
            assertEquals(Worker.OK, w1.offerFinish(other));
            finishAndDrain(w0, other);
            assertEquals(1000, otherSum[0]);
            assertEquals(0, w0.stashedBytes());
        }
    }

    /**
     * An abandoned exchange's rows still in a partly filled pack are dropped, as {@link Worker#release} says, also
     * when the release owes its senders a credit (a credit is sent with a flush, which emitted every pack before
     * the release dropped them: worker 1 received the row).
     */
    @Test
    void anAbandonedExchangesPackedRowsAreNotSentByTheReleasesCreditFlush() throws Exception {
        try (Cluster c = new Cluster("shm", 1, 2, b -> b)) {
            ShuffleService s = c.services.get(0);
            Exchange<RowView> ex = s.intExchange(22, TestRings.BY_VALUE);
            Worker w0 = s.worker(0);
            Worker w1 = s.worker(1);
            w0.consumeInts(ex, v -> true);
            List<Integer> atOne = new ArrayList<>();
            w1.consumeInts(ex, atOne::add);
            assertEquals(Worker.OK, w1.offerInt(ex, 0)); // to worker 0: taken there, below the credit threshold
            assertEquals(Worker.OK, w1.flush());
            assertEquals(1, w0.poll());
            assertEquals(1, w0.rowsReceived(ex));
            assertEquals(Worker.OK, w0.offerInt(ex, 1)); // to worker 1: in worker 0's pack, not sent
            w0.release(ex); // not done: abandoned, and worker 1 is owed a credit
            w1.poll();
            assertEquals(List.of(), atOne, "the abandoned pack went out");
        }
    }

    /**
     * One process has no channel engine to close: closing the service wakes its worker parked in a long
     * {@link Worker#await}, which fails naming the closed service instead of sleeping out the hour.
     */
    @Test
    void closingASingleProcessServiceWakesItsParkedWorker() throws Exception {
        try (Cluster c = new Cluster("shm", 1, 2, b -> b)) {
            ShuffleService s = c.services.get(0);
            Exchange<RowView> ex = s.intExchange(20, Routing.gather(0));
            Worker w0 = s.worker(0);
            w0.consumeInts(ex, v -> true);
            io.rdmx.transport.testsuite.Blocking.Call<Integer> waiter = io.rdmx.transport.testsuite.Blocking.start(
                "worker-0", () -> w0.await(1, TimeUnit.HOURS));
            io.rdmx.transport.testsuite.Blocking.awaitBlockedIn(waiter, "read", java.time.Duration.ofSeconds(10));
            s.close();
            Throwable e = waiter.failure(java.time.Duration.ofSeconds(10));
            assertInstanceOf(RdmxException.class, e);
            assertTrue(e.getMessage().contains("closed"), e.getMessage());
            assertThrows(RdmxException.class, w0::poll);
        }
    }

    /** A service that cannot be built over a joined transport closes that transport (nothing is left behind). */
    @Test
    void aServiceThatCannotBeBuiltClosesItsTransport() {
        boolean[] closed = {false};
        ShuffleConfig cfg = ShuffleConfig.builder(0, 2, 1).build(); // a worker asks for its outbox to rank 1
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> ShuffleService.open(cfg,
            x -> (ShuffleTransport) java.lang.reflect.Proxy.newProxyInstance(ShuffleTransport.class.getClassLoader(),
                new Class<?>[] {ShuffleTransport.class}, (proxy, m, args) -> {
                    if (m.getName().equals("close")) {
                        closed[0] = true;
                        return null;
                    }
                    throw new IllegalStateException("no " + m.getName() + " here");
                })));
        assertTrue(e.getMessage().startsWith("no "), e.getMessage());
        assertTrue(closed[0], "the transport was left open");
    }

    /**
     * A null object row is refused naming it (it went out as the bytes left in the buffer), and a row writer that
     * throws offers no row (its slot went out with what it held before).
     */
    @Test
    void aNullRowOrAThrowingRowWriterOffersNothing() throws Exception {
        try (Cluster c = new Cluster("shm", 1, 1, b -> b)) {
            ShuffleService s = c.services.get(0);
            Worker w = s.worker(0);
            Exchange<Integer> objects = s.exchange(21, Routing.gather(0), RowSerializer.INT);
            assertMessage("row=null", () -> w.offer(objects, null));
            Exchange<RowView> fixed = s.fixedExchange(22, 8, Routing.gather(0));
            long[] rows = {0};
            w.consumeRows(fixed, r -> {
                rows[0]++;
                return true;
            });
            assertThrows(ArithmeticException.class, () -> w.offerRow(fixed, 1, (b, at) -> {
                throw new ArithmeticException("the writer failed");
            }));
            assertEquals(Worker.OK, w.offerRow(fixed, 2, (b, at) -> b.putLong(at, 2)));
            finishAndDrain(w, fixed);
            assertEquals(1, rows[0]);
            assertEquals(1, w.rowsReceived(fixed));
        }
    }

    /**
     * A row whose serializer throws is not sent, and later rows to that destination go (the claim it opened was
     * left open: every later offer there failed "a claim is already open").
     */
    @Test
    void aRowWhoseSerializerThrowsIsNotSentAndLaterRowsGo() throws Exception {
        try (Cluster c = new Cluster("shm", 1, 1, b -> b)) {
            ShuffleService s = c.services.get(0);
            Worker w = s.worker(0);
            RowSerializer<Integer> refuses13 = new RowSerializer<>() {
                @Override
                public int size(Integer row) {
                    return 4;
                }

                @Override
                public void write(Integer row, java.nio.ByteBuffer buf, int offset) {
                    if (row == 13) {
                        throw new ArithmeticException("cannot write row 13");
                    }
                    buf.putInt(offset, row);
                }

                @Override
                public Integer read(java.nio.ByteBuffer buf, int offset, int length) {
                    return buf.getInt(offset);
                }
            };
            Exchange<Integer> ex = s.exchange(24, Routing.gather(0), refuses13);
            List<Integer> got = new ArrayList<>();
            w.consume(ex, got::add);
            assertEquals(Worker.OK, w.offer(ex, 12));
            assertThrows(ArithmeticException.class, () -> w.offer(ex, 13));
            assertEquals(Worker.OK, w.offer(ex, 14));
            finishAndDrain(w, ex);
            assertEquals(List.of(12, 14), got);
        }
    }

    /**
     * A broadcast row's writer is called once, before any destination's pack holds the row: if it throws, no worker
     * gets the row, and the next row reaches every worker once. (It was called per destination: one that threw at
     * the second left the row at the first, and the exchange's next offer resumed at the second.)
     */
    @Test
    void aBroadcastRowWhoseWriterThrowsReachesNoWorker() throws Exception {
        try (Cluster c = new Cluster("shm", 1, 2, b -> b)) {
            ShuffleService s = c.services.get(0);
            Worker w0 = s.worker(0);
            Worker w1 = s.worker(1);
            Exchange<RowView> all = s.fixedExchange(23, 8, Routing.broadcast());
            List<List<Long>> got = List.of(new ArrayList<>(), new ArrayList<>());
            w0.consumeRows(all, r -> got.get(0).add(r.getLong(0)));
            w1.consumeRows(all, r -> got.get(1).add(r.getLong(0)));
            int[] calls = {0};
            Handlers.RowWriter failsAtSecondCall = (b, at) -> {
                b.putLong(at, 77);
                if (++calls[0] == 2) {
                    throw new ArithmeticException("the writer failed at its second call");
                }
            };
            assertEquals(Worker.OK, w0.offerRow(all, 0, failsAtSecondCall));
            assertEquals(1, calls[0], "the writer is called once for every destination");
            assertThrows(ArithmeticException.class, () -> w0.offerRow(all, 0, failsAtSecondCall));
            assertEquals(Worker.OK, w0.offerRow(all, 0, (b, at) -> b.putLong(at, 78)));
            ExecutorService ex = Executors.newSingleThreadExecutor();
            try {
                Future<?> drain1 = ex.submit(() -> {
                    finishAndDrain(w1, all);
                    return null;
                });
                finishAndDrain(w0, all);
                drain1.get(60, TimeUnit.SECONDS);
            } finally {
                ex.shutdownNow();
            }
            assertEquals(List.of(77L, 78L), got.get(0));
            assertEquals(List.of(77L, 78L), got.get(1));
        }
    }

    /**
     * Issue 42: a fixed-width exchange routes by the key offered with each row ({@link Routing#routeKey}), so a
     * routing that defines only {@link Routing#route} ({@link Routing#hash}, a lambda) was silently ignored
     * ({@code Routing.hash(rv -> 0L)} spread rows over every worker): it is refused at declaration.
     */
    @Test
    void aFixedWidthExchangeRefusesARoutingItWouldNotCall() throws Exception {
        try (Cluster c = new Cluster("shm", 1, 1, b -> b)) {
            ShuffleService s = c.services.get(0);
            assertMessage("Routing.hash(key) defines only route(row)",
                () -> s.intExchange(30, Routing.<RowView>hash(rv -> 0L)));
            assertMessage("defines only route(row)", () -> s.longExchange(31, (row, n) -> 0));
            assertMessage("defines only route(row)", () -> s.fixedExchange(32, 16, (row, n) -> 0));
            // none of them was declared: the ids are free
            s.intExchange(30, Routing.byKey());
            s.longExchange(31, Routing.broadcast());
            s.fixedExchange(32, 16, Routing.gather(0));
            s.fixedExchange(33, 16, new Routing<>() {
                @Override
                public int route(RowView row, int workers) {
                    throw new UnsupportedOperationException("fixed-width rows are routed by key");
                }

                @Override
                public int routeKey(long key, int workers) {
                    return 0;
                }
            });
            // object exchanges call route(row): a lambda and Routing.hash are theirs
            s.exchange(34, (row, n) -> 0, RowSerializer.INT);
            s.exchange(35, Routing.hash(x -> x), RowSerializer.LONG);
        }
    }

    /**
     * Issue 42: {@link Routing#byKey} on object rows routed by {@code hashCode()}, the identity hash of the arrays
     * of {@link RowSerializer#BYTES} and {@link RowSerializer#LONGS}: equal keys went to different workers,
     * differently in each process. Every worker of two processes offers the same keys (new arrays each time); each
     * key must reach one worker only, all its copies.
     */
    @Test
    void byKeyRoutesEqualArrayRowsToOneWorkerInEveryProcess() throws Exception {
        int keys = 64;
        try (Cluster c = new Cluster("loopback", 2, 2, b -> b)) {
            List<java.util.Map<String, Integer>> got = everyWorker(c,
                s -> s.exchange(36, Routing.byKey(), RowSerializer.LONGS), (ex, w) -> {
                    java.util.Map<String, Integer> seen = new java.util.TreeMap<>();
                    w.consume(ex, row -> seen.merge(java.util.Arrays.toString(row), 1, Integer::sum));
                    for (long k = 0; k < keys; k++) {
                        long[] row = {k, k * 31};
                        offered(w, () -> w.offer(ex, row));
                    }
                    finishAndDrain(w, ex);
                    return seen;
                });
            java.util.Map<String, List<Integer>> where = new java.util.TreeMap<>();
            for (int g = 0; g < got.size(); g++) {
                for (java.util.Map.Entry<String, Integer> e : got.get(g).entrySet()) {
                    assertEquals(4, e.getValue(), "copies of key " + e.getKey() + " at worker " + g);
                    where.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).add(g);
                }
            }
            assertEquals(keys, where.size());
            where.forEach((k, ws) -> assertEquals(1, ws.size(), "workers that received key " + k + ": " + ws));
        }
        Routing<byte[]> bytes = Routing.byKey();
        for (int n : new int[] {2, 3, 8}) {
            for (byte k = 0; k < 32; k++) {
                assertEquals(bytes.route(new byte[] {k, 1, 2}, n), bytes.route(new byte[] {k, 1, 2}, n));
            }
        }
    }

    /**
     * {@link Routing#byKey} on object rows: an int or long row goes where the same key offered to a fixed-width
     * exchange goes; a row whose class keeps the identity hash, or an array of objects, is refused naming it.
     */
    @Test
    void byKeyRoutesBoxedKeysAsFixedWidthRowsAndRefusesIdentityHashes() {
        Routing<Object> r = Routing.byKey();
        for (long k : new long[] {0, 1, -1, 5L << 40, Long.MIN_VALUE}) {
            assertEquals(r.routeKey(k, 7), r.route(k, 7), "long key " + k);
            assertEquals(r.routeKey((int) k, 7), r.route((int) k, 7), "int key " + (int) k);
        }
        assertMessage("java.lang.Object: it does not override hashCode()", () -> r.route(new Object(), 4));
        assertMessage("java.lang.String[]: an array of objects", () -> r.route(new String[] {"a"}, 4));
        assertEquals(r.route("key", 4), r.route(new StringBuilder("k").append("ey").toString(), 4));
    }

    @Test
    void partitionCoversTheRangeWithoutDivision() {
        for (int n : new int[] {1, 2, 3, 7, 8, 64, 1000}) {
            int[] hits = new int[n];
            for (long k = 0; k < 100_000; k++) {
                int p = Routing.partition(Routing.mix(k), n);
                assertTrue(p >= 0 && p < n, "partition " + p + " of n=" + n);
                hits[p]++;
            }
            for (int h : hits) {
                assertTrue(h > 100_000 / n / 2, "partitions are even for n=" + n);
            }
        }
        assertEquals(0, Routing.partition(-1L, 1));
        assertEquals(6, Routing.partition(-1L, 7));
    }

    /**
     * Zero allocation per row on the in-process path (packing, the ring, delivery to an int handler): one thread
     * sends a million rows to its own worker and receives them; its allocation counter barely moves.
     */
    @Test
    void steadyStateAllocatesNothingPerRow() throws Exception {
        try (Cluster c = new Cluster("shm", 1, 1, b -> b)) {
            ShuffleService s = c.services.get(0);
            Worker w = s.worker(0);
            Exchange<RowView> ex = s.intExchange(15, Routing.byKey());
            long[] sum = {0};
            w.consumeInts(ex, v -> {
                sum[0] += v;
                return true;
            });
            com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            pump(w, ex, 1_000_000); // warm-up
            // the least of five rounds: on a loaded machine the JIT may finish compiling the path during one (code
            // not yet compiled by C2 allocates what escape analysis removes); an allocation per row shows in all
            int rows = 1_000_000;
            long least = Long.MAX_VALUE;
            for (int round = 0; round < 5; round++) {
                long before = mx.getCurrentThreadAllocatedBytes();
                pump(w, ex, rows);
                least = Math.min(least, mx.getCurrentThreadAllocatedBytes() - before);
            }
            assertTrue(least < rows / 100, "allocated " + least + " bytes for " + rows + " rows in the best round");
            assertEquals(6_000_000L * (6_000_000L - 1) / 2, sum[0], "every row delivered once");
        }
    }

    private int base;

    private void pump(Worker w, Exchange<RowView> ex, int rows) throws RdmxException {
        for (int i = 0; i < rows; i++) {
            while (w.offerInt(ex, base + i) != Worker.OK) {
                w.poll();
            }
        }
        base += rows;
        // the last pack is emitted by a poll that found nothing, and read by the next
        for (int idle = 0; idle < 2; ) {
            idle = w.poll() == 0 ? idle + 1 : 0;
        }
    }

    private static void assertMessage(String part, org.junit.jupiter.api.function.Executable e) {
        Throwable t = assertThrows(Throwable.class, e);
        assertTrue(t instanceof IllegalArgumentException || t instanceof IllegalStateException, t.toString());
        assertTrue(t.getMessage().contains(part), "message without '" + part + "': " + t.getMessage());
    }
}
