package io.rdmx.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The wake-up for space in a same-process ring: a worker blocked because its ring to a sibling is full is woken
 * when that sibling reads that ring, and only then (a sibling reading another of its rings does not wake it).
 *
 * <p>The service runs over {@link SleepUntilWoken}, a one-process transport whose blocking read returns only when
 * {@link ShuffleTransport#wakeup} is called for that worker (it ignores the read's timeout), so a blocked writer
 * makes progress through that wake-up alone: without it the writer stays blocked past the test's timeout.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WakeOnSpaceTest {
    /** The longest a blocked read waits for its wake-up before failing the test (past the test's timeout). */
    private static final long WAKE_BOUND_SECONDS = 120;

    /** One process, no network: {@link #read} blocks until woken; counts the wake-ups per worker. */
    static final class SleepUntilWoken implements ShuffleTransport {
        final Semaphore[] permits;
        final AtomicIntegerArray wakeups;
        final AtomicIntegerArray blockedReads;
        /** Released each time a worker enters the blocking read (it armed its wait before). */
        final Semaphore entered = new Semaphore(0);

        SleepUntilWoken(ShuffleConfig cfg) {
            permits = new Semaphore[cfg.workers()];
            for (int i = 0; i < permits.length; i++) {
                permits[i] = new Semaphore(0);
            }
            wakeups = new AtomicIntegerArray(cfg.workers());
            blockedReads = new AtomicIntegerArray(cfg.workers());
        }

        @Override
        public Outbox outbox(int localWorker, int rank, int remoteWorker) {
            throw new IllegalStateException("one process: no outbox to rank " + rank);
        }

        @Override
        public int poll(int localWorker, Receiver d, int limit) {
            return 0;
        }

        @Override
        public int read(int localWorker, Receiver d, int limit, long timeoutNanos)
            throws InterruptedException {
            blockedReads.incrementAndGet(localWorker);
            entered.release();
            if (!permits[localWorker].tryAcquire(WAKE_BOUND_SECONDS, TimeUnit.SECONDS)) {
                throw new IllegalStateException("worker " + localWorker + " was never woken");
            }
            return 0;
        }

        /** As {@link #read}: returns only when woken. */
        @Override
        public void park(int localWorker, long timeoutNanos) throws InterruptedException {
            read(localWorker, null, 0, timeoutNanos);
        }

        @Override
        public void wakeup(int localWorker) {
            wakeups.incrementAndGet(localWorker);
            permits[localWorker].release();
        }

        @Override
        public String provider(int rank) {
            return null;
        }

        @Override
        public long networkRecords() {
            return 0;
        }

        @Override
        public void close() {
        }
    }

    /** Offers ints to {@code ex} (all routed to one worker) until the ring there is full; returns how many. */
    private static int fill(Worker w, Exchange<?> ex) {
        int n = 0;
        while (w.offerInt(ex, n) == Worker.OK) {
            n++;
        }
        return n;
    }

    @Test
    void aWriterBlockedOnAFullLocalRingIsWokenWhenThatRingIsReadAndNotWhenAnotherIs() throws Exception {
        ShuffleConfig cfg = ShuffleConfig.builder(0, 1, 3).job("wake-on-space").bufferSize(1024).build();
        SleepUntilWoken[] t = new SleepUntilWoken[1];
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (ShuffleService s = ShuffleService.open(cfg, c -> t[0] = new SleepUntilWoken(c))) {
            SleepUntilWoken transport = t[0];
            Exchange<RowView> toOne = s.intExchange(1, Routing.gather(1));
            Exchange<RowView> toTwo = s.intExchange(2, Routing.gather(2));
            Worker w0 = s.worker(0);
            Worker w1 = s.worker(1);
            Worker w2 = s.worker(2);
            long[] sum1 = {0};
            long[] sum2 = {0};
            w1.consumeInts(toOne, v -> {
                sum1[0] += v;
                return true;
            });
            w2.consumeInts(toTwo, v -> {
                sum2[0] += v;
                return true;
            });

            // rows for worker 2 sit in ring 0->2; then ring 0->1 is filled until an offer is back-pressured
            assertEquals(Worker.OK, w0.offerInt(toTwo, 7));
            assertEquals(Worker.OK, w0.flush());
            int offered = fill(w0, toOne);
            assertTrue(offered > 0, "offered=" + offered);

            // worker 0 blocks until its last pack fits into ring 0->1 (flushAll waits for space)
            Future<?> writer = pool.submit(() -> {
                w0.flushAll();
                return null;
            });
            assertTrue(transport.entered.tryAcquire(30, TimeUnit.SECONDS), "worker 0 never blocked");
            assertFalse(writer.isDone());

            // worker 2 reads ring 0->2: worker 0 waits for ring 0->1, so it is not woken
            assertTrue(w2.poll() > 0);
            assertEquals(7, sum2[0]);
            assertEquals(0, transport.wakeups.get(0), "a read of another ring woke the writer");
            assertFalse(writer.isDone());

            // worker 1 reads ring 0->1: that wakes worker 0, whose pack then fits
            assertTrue(w1.poll() > 0);
            writer.get(30, TimeUnit.SECONDS);
            assertTrue(transport.wakeups.get(0) >= 1, "wakeups=" + transport.wakeups.get(0));

            // every row offered arrives exactly once
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (w1.rowsReceived(toOne) < offered && System.nanoTime() < deadline) {
                w1.poll();
            }
            assertEquals(offered, w1.rowsReceived(toOne));
            assertEquals((long) offered * (offered - 1) / 2, sum1[0]);
        } finally {
            pool.shutdownNow(); // a writer never woken is interrupted
        }
    }

    @Test
    void aWriterBlockedInAwaitOnAFullLocalRingIsWokenWhenThatRingIsRead() throws Exception {
        ShuffleConfig cfg = ShuffleConfig.builder(0, 1, 2).job("wake-on-space-await").bufferSize(1024).build();
        SleepUntilWoken[] t = new SleepUntilWoken[1];
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (ShuffleService s = ShuffleService.open(cfg, c -> t[0] = new SleepUntilWoken(c))) {
            SleepUntilWoken transport = t[0];
            Exchange<RowView> toOne = s.intExchange(1, Routing.gather(1));
            Worker w0 = s.worker(0);
            Worker w1 = s.worker(1);
            w1.consumeInts(toOne, v -> true);
            int offered = fill(w0, toOne);
            // the engine's scheduler has nothing else to do: it awaits space for the back-pressured offer
            Future<Integer> writer = pool.submit(() -> w0.await(1, TimeUnit.HOURS));
            assertTrue(transport.entered.tryAcquire(30, TimeUnit.SECONDS), "worker 0 never blocked");
            assertFalse(writer.isDone());
            assertTrue(w1.poll() > 0);
            assertEquals(0, writer.get(30, TimeUnit.SECONDS)); // woken for space: no record was read
            assertEquals(1, transport.blockedReads.get(0));
            assertEquals(Worker.OK, w0.offerInt(toOne, offered)); // the offer that was back-pressured fits now
        } finally {
            pool.shutdownNow();
        }
    }
}
