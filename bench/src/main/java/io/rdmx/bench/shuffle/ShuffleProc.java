package io.rdmx.bench.shuffle;

import io.rdmx.shuffle.ShuffleConfig;
import io.rdmx.shuffle.ShuffleService;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One process of a synthetic shuffle run: joins and prints READY; on GO runs a warm-up pass (the same plan,
 * fewer rows) and prints WARM; on each RUN runs a timed pass (printing PROGRESS lines) and prints RESULT with
 * its counts, checksums and the garbage collections of the pass; closes on EXIT (so no process leaves while
 * others still receive).
 */
public final class ShuffleProc {
    private ShuffleProc() {
    }

    /**
     * @param args transport rank processes workers rowsPerProcess members(or -) job bufferSize threshold warmRows
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        int rank = Integer.parseInt(args[1]);
        boolean sockets = args[0].equals("sockets");
        ShuffleConfig.Builder b = ShuffleConfig.builder(rank, Integer.parseInt(args[2]), Integer.parseInt(args[3]))
            .provider(sockets ? "tcp" : args[0]).job(args[6]).bufferSize(Integer.parseInt(args[7]))
            .batchThreshold(Integer.parseInt(args[8]));
        if (!args[5].equals("-")) {
            b.members(List.of(args[5].split(",")));
        }
        long rows = Long.parseLong(args[4]);
        long warmRows = Long.parseLong(args[9]);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        // one worker thread per worker for the process's life: the runner samples context switches per thread in
        // /proc before and after each pass, and a pool made per pass had its threads exit before the second sample
        // (their switches were never counted)
        AtomicInteger made = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(Integer.parseInt(args[3]),
            r -> new Thread(r, "shuffle-worker-" + made.getAndIncrement()));
        try (ShuffleService svc = sockets ? ShuffleService.open(b.build(), NioShuffleTransport::open)
            : ShuffleService.open(b.build())) {
            StringBuilder via = new StringBuilder();
            for (int r = 0; !sockets && r < svc.config().processes(); r++) {
                if (r != rank) {
                    via.append(via.length() == 0 ? "" : ",").append(svc.provider(r));
                }
            }
            // what this rank reaches the others over (auto's choice, or the provider asked for)
            System.out.println("PROVIDERS " + (sockets ? "sockets" : via));
            System.out.println("READY");
            System.out.flush();
            if (!"GO".equals(in.readLine())) {
                return;
            }
            if (warmRows > 0) {
                // with a progress counter like the timed passes: a warm-up without one compiled the generator
                // loop for progress == null, and the first timed pass deoptimized it (unstable_if) and ran it
                // interpreted until C2 compiled it again
                SyntheticPlan.run(svc, warmRows, 1, new AtomicLong(), pool);
            }
            System.out.println("WARM");
            System.out.flush();
            for (int pass = 0; "RUN".equals(in.readLine()); pass++) {
                timedPass(svc, rows, 3 + 2 * pass, pool);
            }
        } finally {
            pool.shutdownNow();
            pool.awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private static void timedPass(ShuffleService svc, long rows, int firstExchange, ExecutorService pool)
        throws Exception {
        AtomicLong progress = new AtomicLong();
        Thread reporter = new Thread(() -> {
            try {
                while (true) {
                    Thread.sleep(500);
                    System.out.println("PROGRESS " + progress.get());
                    System.out.flush();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "progress");
        reporter.setDaemon(true);
        reporter.start();
        long[] gc0 = gc();
        long blocked0 = svc.blockedSends();
        SyntheticPlan.Result r = SyntheticPlan.run(svc, rows, firstExchange, progress, pool);
        long[] gc1 = gc();
        reporter.interrupt();
        reporter.join(); // gone before the runner's next sample (it started after this pass's first)
        System.out.println("RESULT " + r.count1() + " " + r.sum1() + " " + r.count2() + " " + r.sum2() + " "
            + r.nanos() + " " + (svc.blockedSends() - blocked0) + " " + (gc1[0] - gc0[0]) + " "
            + (gc1[1] - gc0[1]));
        System.out.flush();
    }

    /** @return collections and milliseconds spent in them, over every collector */
    private static long[] gc() {
        long n = 0;
        long ms = 0;
        for (GarbageCollectorMXBean g : ManagementFactory.getGarbageCollectorMXBeans()) {
            n += Math.max(0, g.getCollectionCount());
            ms += Math.max(0, g.getCollectionTime());
        }
        return new long[] {n, ms};
    }
}
