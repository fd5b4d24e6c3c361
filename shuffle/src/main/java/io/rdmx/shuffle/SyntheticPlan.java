package io.rdmx.shuffle;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The DAIS 2016 paper's synthetic benchmark plan, run by every process (SPMD): each process generates integers,
 * a first shuffle stage hashes them to workers, a transformation changes every value (so most rows change
 * worker), a second stage hashes them again. Each stage's delivery is verified exactly-once by count and a
 * checksum of all rows, against what every process generated.
 */
public final class SyntheticPlan {
    /** What one process received, per stage. */
    public record Result(long count1, long sum1, long count2, long sum2, long nanos) {
        /**
         * @param o another process's result
         * @return the sum of both (nanos: the longer)
         */
        public Result plus(Result o) {
            return new Result(count1 + o.count1, sum1 + o.sum1, count2 + o.count2, sum2 + o.sum2,
                Math.max(nanos, o.nanos));
        }
    }

    private SyntheticPlan() {
    }

    /**
     * @param rank the generating process
     * @param i the row number
     * @return the row's value
     */
    public static int value(int rank, long i) {
        return (int) Routing.mix(((long) rank << 40) + i);
    }

    /**
     * @param x a stage-1 value
     * @return its stage-2 value
     */
    public static int transform(int x) {
        return x * 0x9E3779B1 + 7;
    }

    /**
     * @param x a row
     * @return its contribution to a stage checksum
     */
    public static long check(int x) {
        return Routing.mix(x);
    }

    /**
     * What every stage must receive in total, computed without any shuffle.
     *
     * @param processes processes
     * @param rowsPerProcess rows each generates
     * @return count, stage-1 checksum, stage-2 checksum
     */
    public static long[] expected(int processes, long rowsPerProcess) {
        long sum1 = 0;
        long sum2 = 0;
        for (int r = 0; r < processes; r++) {
            for (long i = 0; i < rowsPerProcess; i++) {
                int v = value(r, i);
                sum1 += check(v);
                sum2 += check(transform(v));
            }
        }
        return new long[] {processes * rowsPerProcess, sum1, sum2};
    }

    /**
     * Runs this process's part: one thread per worker.
     *
     * @param svc the shuffle service
     * @param rowsPerProcess rows this process generates
     * @param firstExchange the id of stage 1 (stage 2 is the next id)
     * @param progress incremented by every row generated (for progress output), or null
     * @return what this process received
     * @throws Exception if a worker fails (for example a lost peer, named in the exception)
     */
    public static Result run(ShuffleService svc, long rowsPerProcess, int firstExchange, AtomicLong progress)
        throws Exception {
        int workers = svc.config().workers();
        int rank = svc.config().rank();
        Exchange<Integer> s1 = svc.exchange(firstExchange, Routing.hash(x -> x), RowSerializer.INT);
        Exchange<Integer> s2 = svc.exchange(firstExchange + 1, Routing.hash(x -> x), RowSerializer.INT);
        ExecutorService ex = Executors.newFixedThreadPool(workers);
        long start = System.nanoTime();
        try {
            List<Future<Result>> fs = new ArrayList<>();
            for (int w = 0; w < workers; w++) {
                int me = w;
                fs.add(ex.submit(() -> worker(svc.worker(me), s1, s2, rank, rowsPerProcess, workers, progress)));
            }
            Result total = new Result(0, 0, 0, 0, 0);
            for (Future<Result> f : fs) {
                try {
                    total = total.plus(f.get());
                } catch (ExecutionException e) {
                    Throwable c = e.getCause();
                    if (c instanceof Exception) {
                        throw (Exception) c;
                    }
                    throw e;
                }
            }
            return new Result(total.count1(), total.sum1(), total.count2(), total.sum2(), System.nanoTime() - start);
        } finally {
            ex.shutdownNow();
            ex.awaitTermination(5, TimeUnit.SECONDS);
            svc.release(s1);
            svc.release(s2);
        }
    }

    private static Result worker(Worker w, Exchange<Integer> s1, Exchange<Integer> s2, int rank, long rows,
                                 int workers, AtomicLong progress) throws Exception {
        long[] acc = new long[4];
        w.consume(s1, x -> {
            acc[0]++;
            acc[1] += check(x);
            try {
                w.send(s2, transform(x));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        w.consume(s2, x -> {
            acc[2]++;
            acc[3] += check(x);
        });
        long from = rows * w.localIndex() / workers;
        long to = rows * (w.localIndex() + 1) / workers;
        long[] next = {from};
        boolean[] finished = new boolean[2];
        w.run(() -> {
            if (next[0] < to) {
                long end = Math.min(to, next[0] + 512);
                for (long i = next[0]; i < end; i++) {
                    w.send(s1, value(rank, i));
                }
                if (progress != null) {
                    progress.addAndGet(end - next[0]);
                }
                next[0] = end;
                return true;
            }
            if (!finished[0]) {
                finished[0] = true;
                w.finish(s1);
                return true;
            }
            if (!finished[1] && w.done(s1)) {
                finished[1] = true;
                w.finish(s2);
                return true;
            }
            return false;
        }, () -> finished[1] && w.done(s2));
        w.release(s1);
        w.release(s2);
        return new Result(acc[0], acc[1], acc[2], acc[3], 0);
    }
}
