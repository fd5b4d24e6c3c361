package io.rdmx.transport.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rdmx.transport.Opcode;
import io.rdmx.transport.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The FIFO in which a connection's completions wait for the lock they were produced under to be released. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class CompletionBacklogTest {
    @Test
    void theCompletionBacklogKeepsItsOrderWhileItGrowsAndWraps() {
        CompletionBacklog b = new CompletionBacklog();
        long next = 0;
        long expected = 0;
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 50 + 100 * round; i++) { // 50, 150, 250 at once: past 64 and 128, not aligned
                b.append(i % 2 == 0 ? Opcode.RECV : Opcode.SEND, next, Status.SUCCESS, (int) next, (int) -next,
                    i % 3 == 0, i % 5 == 0 ? "d" + next : null);
                next++;
            }
            for (int i = 0; i < 30 + 100 * round; i++) { // leave some behind, so the next round wraps
                int slot = b.first();
                assertEquals(expected, b.wrId(slot));
                assertEquals((int) expected, b.length(slot));
                assertEquals((int) -expected, b.imm(slot));
                assertEquals(Status.SUCCESS, b.status(slot));
                b.remove();
                expected++;
            }
        }
        assertEquals(next - expected, b.size());
        while (!b.isEmpty()) {
            assertEquals(expected++, b.wrId(b.first()));
            b.remove();
        }
        assertEquals(next, expected);
    }

    /** A sink that adds and emits from within sees its completion handed over after it returns, in order. */
    @Test
    void aCompletionAddedByTheSinkGoesOutAfterItInOrder() {
        CompletionBacklog b = new CompletionBacklog();
        List<Long> out = new ArrayList<>();
        int[] depth = {0};
        CompletionBacklog.Sink sink = new CompletionBacklog.Sink() {
            @Override
            public void handOver(Opcode op, long wrId, Status status, int len, int imm, boolean hasImm,
                                 String detail) {
                assertEquals(0, depth[0]++, "a hand-over inside a hand-over");
                out.add(wrId);
                if (wrId < 5) {
                    b.add(Opcode.SEND, wrId + 10, Status.SUCCESS, 0, 0, false, null); // a post failing at once
                    b.emit(this);
                }
                depth[0]--;
            }
        };
        for (long i = 0; i < 5; i++) {
            b.add(Opcode.RECV, i, Status.SUCCESS, 0, 0, false, null);
        }
        b.emit(sink);
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 10L, 11L, 12L, 13L, 14L), out);
        assertEquals(0, b.waiting());
    }

    /**
     * Four threads add and emit at once: every completion is handed over exactly once, never two at a time, and
     * each thread's completions in the order it added them (no thread waits for another: one that finds another
     * handing over leaves its completions to it).
     */
    @Test
    void concurrentEmittersHandEveryCompletionOverOnceOneAtATime() throws Exception {
        CompletionBacklog b = new CompletionBacklog();
        int threads = 4;
        int each = 50_000;
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        long[] last = new long[threads];
        java.util.Arrays.fill(last, -1);
        AtomicInteger outOfOrder = new AtomicInteger();
        AtomicInteger count = new AtomicInteger();
        CompletionBacklog.Sink sink = (op, wrId, status, len, imm, hasImm, detail) -> {
            if (inside.incrementAndGet() != 1) {
                overlaps.incrementAndGet();
            }
            int t = (int) (wrId >>> 32);
            long seq = wrId & 0xffff_ffffL;
            if (seq != last[t] + 1) {
                outOfOrder.incrementAndGet();
            }
            last[t] = seq;
            count.incrementAndGet();
            inside.decrementAndGet();
        };
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                long id = (long) t << 32;
                done.add(pool.submit(() -> {
                    for (int i = 0; i < each; i++) {
                        b.add(Opcode.RECV, id | i, Status.SUCCESS, 0, 0, false, null);
                        b.emit(sink);
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        b.emit(sink); // hands over nothing: the last emitter drained before it returned
        assertEquals(threads * each, count.get());
        assertEquals(0, overlaps.get());
        assertEquals(0, outOfOrder.get());
        assertEquals(0, b.waiting());
    }
}
