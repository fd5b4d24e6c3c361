package io.rdmx.shuffle;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * A two-stage test plan on object rows and the convenience loop: every process generates ints, stage 1 hashes
 * them to workers, its consumer (a flyweight row handler that refuses while stage 2 is back-pressured)
 * transforms each and offers it to stage 2. Counts and checksums verify exactly-once delivery.
 */
final class TwoStagePlan {
    /** What one process received, per stage. */
    record Result(long count1, long sum1, long count2, long sum2) {
        Result plus(Result o) {
            return new Result(count1 + o.count1, sum1 + o.sum1, count2 + o.count2, sum2 + o.sum2);
        }
    }

    private TwoStagePlan() {
    }

    static int value(int rank, long i) {
        return (int) Routing.mix(((long) rank << 40) + i);
    }

    static int transform(int x) {
        return x * 0x9E3779B1 + 7;
    }

    static long check(int x) {
        return Routing.mix(x);
    }

    /** @return count, stage-1 checksum, stage-2 checksum */
    static long[] expected(int processes, long rows) {
        long s1 = 0;
        long s2 = 0;
        for (int r = 0; r < processes; r++) {
            for (long i = 0; i < rows; i++) {
                s1 += check(value(r, i));
                s2 += check(transform(value(r, i)));
            }
        }
        return new long[] {processes * rows, s1, s2};
    }

    static Result run(ShuffleService svc, long rows, int first) throws Exception {
        Exchange<Integer> s1 = svc.exchange(first, Routing.hash(x -> x), RowSerializer.INT);
        Exchange<Integer> s2 = svc.exchange(first + 1, Routing.hash(x -> x), RowSerializer.INT);
        int workers = svc.config().workers();
        ExecutorService ex = Executors.newFixedThreadPool(workers);
        try {
            List<Future<Result>> fs = new ArrayList<>();
            for (int w = 0; w < workers; w++) {
                Worker wk = svc.worker(w);
                fs.add(ex.submit(() -> worker(wk, s1, s2, svc.config().rank(), rows, workers)));
            }
            Result total = new Result(0, 0, 0, 0);
            for (Future<Result> f : fs) {
                try {
                    total = total.plus(f.get(100, TimeUnit.SECONDS));
                } catch (ExecutionException e) {
                    throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
                }
            }
            return total;
        } finally {
            ex.shutdownNow();
            svc.release(s1);
            svc.release(s2);
        }
    }

    private static Result worker(Worker w, Exchange<Integer> s1, Exchange<Integer> s2, int rank, long rows,
                                 int workers) throws Exception {
        long[] acc = new long[4];
        w.consumeRows(s1, row -> {
            int x = row.getInt(0);
            if (w.offer(s2, transform(x)) != Worker.OK) {
                return false;
            }
            acc[0]++;
            acc[1] += check(x);
            return true;
        });
        w.consume(s2, x -> {
            acc[2]++;
            acc[3] += check(x);
        });
        long[] next = {rows * w.localIndex() / workers};
        long to = rows * (w.localIndex() + 1) / workers;
        boolean[] finished = new boolean[2];
        w.run(() -> {
            if (next[0] < to) {
                long end = Math.min(to, next[0] + 512);
                for (long i = next[0]; i < end; i++) {
                    w.send(s1, value(rank, i));
                }
                next[0] = end;
                return true;
            }
            if (!finished[0]) {
                w.finish(s1);
                finished[0] = true;
                return true;
            }
            if (!finished[1] && w.done(s1)) {
                w.finish(s2);
                finished[1] = true;
                return true;
            }
            return false;
        }, () -> finished[1] && w.done(s2));
        w.release(s1);
        w.release(s2);
        return new Result(acc[0], acc[1], acc[2], acc[3]);
    }
}
