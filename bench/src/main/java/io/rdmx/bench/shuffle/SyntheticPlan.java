package io.rdmx.bench.shuffle;

import io.rdmx.shuffle.Exchange;
import io.rdmx.shuffle.Routing;
import io.rdmx.shuffle.RowView;
import io.rdmx.shuffle.ShuffleService;
import io.rdmx.shuffle.Worker;

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
        ExecutorService ex = Executors.newFixedThreadPool(svc.config().workers());
        try {
            return run(svc, rowsPerProcess, firstExchange, progress, ex);
        } finally {
            ex.shutdownNow();
            ex.awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    /**
     * Runs this process's part on the caller's threads: a benchmark keeps the same worker threads from pass to
     * pass, so that counters sampled per thread before and after a pass (context switches in {@code /proc}) see
     * them; threads that exit within a pass drop out of such a sum.
     *
     * @param svc the shuffle service
     * @param rowsPerProcess rows this process generates
     * @param firstExchange the id of stage 1 (stage 2 is the next id)
     * @param progress incremented by every row generated (for progress output), or null
     * @param ex runs one task per worker, all at once (at least {@code workers} threads)
     * @return what this process received
     * @throws Exception if a worker fails (for example a lost peer, named in the exception)
     */
    public static Result run(ShuffleService svc, long rowsPerProcess, int firstExchange, AtomicLong progress,
                             ExecutorService ex) throws Exception {
        int workers = svc.config().workers();
        int rank = svc.config().rank();
        Exchange<RowView> s1 = svc.intExchange(firstExchange, Routing.byKey());
        Exchange<RowView> s2 = svc.intExchange(firstExchange + 1, Routing.byKey());
        long start = System.nanoTime();
        List<Future<Result>> fs = new ArrayList<>();
        try {
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
        } catch (Exception | Error e) {
            for (Future<Result> f : fs) {
                f.cancel(true); // the other workers are interrupted (they stop at their next wait; not awaited)
            }
            throw e;
        } finally {
            svc.release(s1);
            svc.release(s2);
        }
    }

    /** One worker's part, on the non-blocking API: its own scheduler, no allocation per row. */
    private static final class Part {
        final Worker w;
        final Exchange<RowView> s1;
        final Exchange<RowView> s2;
        final int rank;
        final AtomicLong progress;
        long next;
        final long to;
        long count1;
        long sum1;
        long count2;
        long sum2;
        boolean finished1;
        boolean finished2;

        Part(Worker w, Exchange<RowView> s1, Exchange<RowView> s2, int rank, long rows, int workers,
             AtomicLong progress) {
            this.w = w;
            this.s1 = s1;
            this.s2 = s2;
            this.rank = rank;
            this.progress = progress;
            this.next = rows * w.localIndex() / workers;
            this.to = rows * (w.localIndex() + 1) / workers;
        }

        /** Stage 1's consumer transforms each row and offers it to stage 2 (refusing it while that is full). */
        boolean onStage1(int x) {
            if (w.offerInt(s2, transform(x)) != Worker.OK) {
                return false;
            }
            count1++;
            sum1 += check(x);
            return true;
        }

        boolean onStage2(int x) {
            count2++;
            sum2 += check(x);
            return true;
        }

        /** One step of local work: generate a slice of rows, then end both stages in turn. */
        boolean step() {
            if (next < to) {
                long end = Math.min(to, next + 4096);
                long i = next;
                while (i < end && w.offerInt(s1, value(rank, i)) == Worker.OK) {
                    i++;
                }
                if (progress != null) {
                    progress.addAndGet(i - next);
                }
                boolean moved = i > next;
                next = i;
                return moved;
            }
            if (!finished1) {
                finished1 = w.offerFinish(s1) == Worker.OK;
                return finished1;
            }
            if (!finished2 && w.done(s1)) {
                finished2 = w.offerFinish(s2) == Worker.OK;
                return finished2;
            }
            return false;
        }

        boolean finished() {
            return finished2 && w.done(s2);
        }
    }

    private static Result worker(Worker w, Exchange<RowView> s1, Exchange<RowView> s2, int rank, long rows,
                                 int workers, AtomicLong progress) throws Exception {
        Part p = new Part(w, s1, s2, rank, rows, workers, progress);
        w.consumeInts(s1, p::onStage1);
        w.consumeInts(s2, p::onStage2);
        w.run(p::step, p::finished);
        if (w.failure() != null) {
            throw w.failure();
        }
        w.release(s1);
        w.release(s2);
        return new Result(p.count1, p.sum1, p.count2, p.sum2, 0);
    }
}
