package io.rdmx.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.RdmxException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Issue 42: a broadcast object row that fits some destinations and not others. The largest record was 16,376 bytes
 * to a worker of the same process and 28,664 (shm, loopback) or 24,568 (tcp) to another process, so a 20,000-byte
 * broadcast row went to the other processes' workers, then its offer threw at the local one; the exchange's next
 * row then went only to the workers after that one, and a row whose serializer threw at the second destination
 * was likewise left at the first only. Now one limit per exchange, known before any offer, refuses such a row
 * before any copy is written, a broadcast row is serialized once, and the next rows and the end-of-stream reach
 * every worker.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class BroadcastRowLimitTest {
    private static final long DEADLINE_NANOS = TimeUnit.SECONDS.toNanos(60);
    private static final int EXCHANGE = 42;
    private static final int OVERSIZED = 20_000;

    /** A row: a kind, the sending worker, and padding to its size; counts the serializer's writes of it. */
    private static final class Row {
        final byte kind;
        final int sender;
        final int size;
        /** Whether its serializer throws at its second write (a serializer that fails once it has written one copy). */
        final boolean failsAtSecondWrite;
        int writes;

        Row(char kind, int sender, int size, boolean failsAtSecondWrite) {
            this.kind = (byte) kind;
            this.sender = sender;
            this.size = size;
            this.failsAtSecondWrite = failsAtSecondWrite;
        }
    }

    private static final RowSerializer<Row> ROWS = new RowSerializer<>() {
        @Override
        public int size(Row row) {
            return row.size;
        }

        @Override
        public void write(Row row, ByteBuffer buf, int offset) {
            if (++row.writes == 2 && row.failsAtSecondWrite) {
                throw new ArithmeticException("the serializer failed at its second write of row " + (char) row.kind);
            }
            buf.put(offset, row.kind);
            buf.putInt(offset + 1, row.sender);
        }

        @Override
        public Row read(ByteBuffer buf, int offset, int length) {
            return new Row((char) buf.get(offset), buf.getInt(offset + 1), length, false);
        }
    };

    @ParameterizedTest(name = "{0}, {1} process(es)")
    @CsvSource({"loopback, 1", "loopback, 2", "loopback, 3", "shm, 1", "shm, 2", "shm, 3",
        "tcp, 1", "tcp, 2", "tcp, 3"})
    void anOversizedBroadcastRowIsRefusedEverywhereAndLaterRowsReachEveryWorker(String provider, int processes)
        throws Exception {
        // one process: two workers, so that a broadcast has more than one destination (no provider is then used)
        int workers = processes == 1 ? 2 : 1;
        int total = processes * workers;
        try (Cluster c = new Cluster(provider, processes, workers, b -> b)) {
            List<Result> got = new ArrayList<>();
            for (List<Result> perProcess : c.spmd(s -> everyWorker(s, total))) {
                got.addAll(perProcess);
            }
            TreeSet<String> want = new TreeSet<>();
            for (int g = 0; g < total; g++) {
                // the small row after the refused one, the row whose serializer throws at a second write (written
                // once now), and the row after it, from every worker
                want.add("s" + g);
                want.add("f" + g);
                want.add("a" + g);
            }
            // what was delivered first (the old code lost rows here), then how the row was refused
            for (int g = 0; g < total; g++) {
                assertEquals(new ArrayList<>(want), got.get(g).rows, "rows worker " + g + " received");
            }
            int limit = c.services.get(0).config().bufferSize() / 4 - 8;
            for (int g = 0; g < total; g++) {
                Result r = got.get(g);
                r.refusals.forEach((id, m) -> assertTrue(m.contains("row of " + OVERSIZED + " bytes")
                    && m.contains("maxRowBytes=" + limit) && m.contains("exchange " + id % 100), m));
                assertEquals(3, r.refusals.size(), "offers of the oversized row refused by worker " + g);
                assertEquals(0, r.oversizedWrites, "writes of the refused row by worker " + g);
                assertEquals(1, r.failingRowWrites, "a broadcast row is serialized once, whatever its destinations");
            }
        }
    }

    /**
     * A broadcast row back-pressured after some workers took it resumes, offered again, with the bytes it was
     * written as (kept: the scratch buffer serves other rows meanwhile), and its serializer is not called again:
     * with small rings (1 KiB, 248-byte records), worker 0 broadcasts to itself (it drains that ring when
     * back-pressured) and to worker 1, which starts draining only once worker 0 was back-pressured 20 times, so
     * offers stop at worker 1 after worker 0 took the row.
     */
    @Test
    void aBroadcastRowBackPressuredMidwayResumesWithTheBytesItWasWrittenAs() throws Exception {
        int rows = 2000;
        try (Cluster c = new Cluster("shm", 1, 2, b -> b.bufferSize(1024).batchThreshold(64))) {
            ShuffleService s = c.services.get(0);
            assertEquals(1024 / 4 - 8, s.maxRowBytes());
            Exchange<Row> ex = s.exchange(43, Routing.broadcast(), ROWS);
            Worker w0 = s.worker(0);
            Worker w1 = s.worker(1);
            List<List<Integer>> got = List.of(new ArrayList<>(), new ArrayList<>());
            w0.consume(ex, r -> got.get(0).add(r.sender));
            w1.consume(ex, r -> got.get(1).add(r.sender));
            ExecutorService pool = Executors.newSingleThreadExecutor();
            java.util.concurrent.CountDownLatch stalled = new java.util.concurrent.CountDownLatch(1);
            try {
                Future<?> drain = pool.submit(() -> {
                    assertTrue(stalled.await(60, TimeUnit.SECONDS), "worker 0 was never back-pressured");
                    offered(w1, () -> w1.offerFinish(ex));
                    long deadline = System.nanoTime() + DEADLINE_NANOS;
                    while (!w1.done(ex)) {
                        w1.poll();
                        assertTrue(System.nanoTime() < deadline, "worker 1 never saw every end-of-stream");
                    }
                    return null;
                });
                int[] writes = {0};
                for (int i = 0; i < rows; i++) {
                    Row row = new Row('r', i, 200, false);
                    long deadline = System.nanoTime() + DEADLINE_NANOS;
                    while (w0.offer(ex, row) != Worker.OK) {
                        w0.poll();
                        if (w0.backPressured() >= 20) {
                            stalled.countDown();
                        }
                        assertTrue(System.nanoTime() < deadline, "worker 0 stayed back-pressured");
                    }
                    writes[0] += row.writes;
                }
                offered(w0, () -> w0.offerFinish(ex));
                long deadline = System.nanoTime() + DEADLINE_NANOS;
                while (!w0.done(ex)) {
                    w0.poll();
                    assertTrue(System.nanoTime() < deadline, "worker 0 never saw every end-of-stream");
                }
                drain.get(60, TimeUnit.SECONDS);
                assertEquals(rows, writes[0], "each row serialized once");
                assertTrue(w0.backPressured() >= 20, "the rings filled: " + w0.backPressured());
            } finally {
                pool.shutdownNow();
            }
            List<Integer> want = new ArrayList<>();
            for (int i = 0; i < rows; i++) {
                want.add(i);
            }
            assertEquals(want, got.get(0));
            assertEquals(want, got.get(1));
        }
    }

    /** What one worker saw. */
    private static final class Result {
        /** The rows it received, sorted. */
        final List<String> rows = new ArrayList<>();
        /** The messages its offers of the oversized row threw, by exchange id (+ 100 for a second offer). */
        final java.util.Map<Integer, String> refusals = new java.util.TreeMap<>();
        int oversizedWrites;
        /** Writes of the row whose serializer throws at its second write; -1 if its offer threw. */
        int failingRowWrites;
    }

    /** One process: every worker on its own thread; what each saw. */
    private static List<Result> everyWorker(ShuffleService s, int total) throws Exception {
        Exchange<Row> ex = s.exchange(EXCHANGE, Routing.broadcast(), ROWS);
        // refused, then straight to end-of-stream (the old code sent it only to the workers after the refusing one)
        Exchange<Row> endsAfterRefusal = s.exchange(EXCHANGE + 1, Routing.broadcast(), ROWS);
        // one number for the exchange, known before any offer: the in-process rings' largest record (16,376)
        int limit = s.config().bufferSize() / 4 - 8;
        assertEquals(limit, s.maxRowBytes());
        assertEquals(limit, ex.maxRowBytes());
        ExecutorService pool = Executors.newFixedThreadPool(s.config().workers());
        try {
            List<Future<Result>> fs = new ArrayList<>();
            for (int i = 0; i < s.config().workers(); i++) {
                Worker w = s.worker(i);
                fs.add(pool.submit(() -> broadcastFromOneWorker(w, ex, endsAfterRefusal, total)));
            }
            List<Result> out = new ArrayList<>();
            for (Future<Result> f : fs) {
                out.add(f.get(100, TimeUnit.SECONDS));
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }

    private static Result broadcastFromOneWorker(Worker w, Exchange<Row> ex, Exchange<Row> endsAfterRefusal,
                                                 int total) throws RdmxException {
        Result out = new Result();
        List<String> got = out.rows;
        w.consume(ex, r -> got.add((char) r.kind + "" + r.sender));
        w.consume(endsAfterRefusal, r -> got.add("e" + (char) r.kind + r.sender));
        int g = w.globalIndex();
        Row big = new Row('b', g, OVERSIZED, false);
        for (int attempt = 0; attempt < 2; attempt++) {
            out.refusals.put(EXCHANGE + attempt * 100, assertThrows(IllegalArgumentException.class,
                () -> w.offer(ex, big)).getMessage());
        }
        out.refusals.put(EXCHANGE + 1, assertThrows(IllegalArgumentException.class,
            () -> w.offer(endsAfterRefusal, big)).getMessage());
        offered(w, () -> w.offerFinish(endsAfterRefusal));
        out.oversizedWrites = big.writes;
        offered(w, () -> w.offer(ex, new Row('s', g, 100, false)));
        Row failing = new Row('f', g, 64, true);
        try {
            offered(w, () -> w.offer(ex, failing));
            out.failingRowWrites = failing.writes;
        } catch (ArithmeticException e) {
            out.failingRowWrites = -1; // written to some destinations, then its offer threw
        }
        offered(w, () -> w.offer(ex, new Row('a', g, 100, false)));
        offered(w, () -> w.offerFinish(ex));
        long deadline = System.nanoTime() + DEADLINE_NANOS;
        while (!w.done(ex) || !w.done(endsAfterRefusal)) {
            w.poll();
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("worker " + g + " never saw every end-of-stream; got " + got);
            }
        }
        assertEquals(got.size(), w.rowsReceived(ex) + w.rowsReceived(endsAfterRefusal));
        got.sort(null);
        return out;
    }

    /** The engine's side of an offer: poll while back-pressured, bounded by a deadline. */
    private static void offered(Worker w, IntSupplier offer) throws RdmxException {
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
}
