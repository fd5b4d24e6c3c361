package io.rdmx.shuffle;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One process of a two-process shuffle check (2 processes x 2 workers), run as its own JVM: the two-stage plan on
 * the given provider, then each process's counts and checksums gathered to rank 0, which verifies exactly-once
 * delivery against what both generated and prints {@code SHUFFLE OK}. The entry point of
 * {@link TwoJvmShuffleTest} and of a run over {@code verbs} on Soft-RoCE.
 */
public final class ShuffleCheck {
    private ShuffleCheck() {
    }

    /**
     * @param args provider, rank, members (comma separated), rows per process, job, and optionally how long to wait
     *     for the other process to connect, in seconds (the configuration's default unless given: the Soft-RoCE
     *     job's two VMs start their JVMs a minute or more apart)
     * @throws Exception on failure (exit code 1)
     */
    public static void main(String[] args) throws Exception {
        int rank = Integer.parseInt(args[1]);
        long rows = Long.parseLong(args[3]);
        ShuffleConfig.Builder b = ShuffleConfig.builder(rank, 2, 2).provider(args[0])
            .members(List.of(args[2].split(","))).job(args[4]);
        if (args.length > 5) {
            b.connectTimeout(java.time.Duration.ofSeconds(Long.parseLong(args[5])));
        }
        ShuffleConfig cfg = b.build();
        try (ShuffleService svc = ShuffleService.open(cfg)) {
            System.out.println("JOINED rank " + rank + " over " + svc.provider(1 - rank));
            TwoStagePlan.Result mine = TwoStagePlan.run(svc, rows, 1);
            Exchange<RowView> results = svc.fixedExchange(3, 32, Routing.gather(0));
            Worker w = svc.worker(0);
            long[] total = new long[4];
            w.consumeRows(results, r -> {
                for (int i = 0; i < 4; i++) {
                    total[i] += r.getLong(8 * i);
                }
                return true;
            });
            long[] row = {mine.count1(), mine.sum1(), mine.count2(), mine.sum2()};
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (w.offerRow(results, 0, (buf, at) -> {
                for (int i = 0; i < 4; i++) {
                    buf.putLong(at + 8 * i, row[i]);
                }
            }) != Worker.OK) {
                w.poll();
                check(deadline);
            }
            while (w.offerFinish(results) != Worker.OK) {
                w.poll();
                check(deadline);
            }
            Worker w1 = svc.worker(1);
            while (w1.offerFinish(results) != Worker.OK) {
                w1.poll();
                check(deadline);
            }
            while (!w.done(results)) {
                if (w.poll() == 0) {
                    w.await(100, TimeUnit.MILLISECONDS);
                }
                check(deadline);
            }
            if (rank == 0) {
                long[] want = TwoStagePlan.expected(2, rows);
                boolean ok = total[0] == want[0] && total[1] == want[1] && total[2] == want[0]
                    && total[3] == want[2];
                System.out.println((ok ? "SHUFFLE OK" : "SHUFFLE FAILED") + " over " + svc.provider(1)
                    + ": 2 processes x 2 workers, stage 1 rows=" + total[0] + " checksum=" + total[1]
                    + ", stage 2 rows=" + total[2] + " checksum=" + total[3] + "; expected rows=" + want[0]
                    + " checksums " + want[1] + " / " + want[2]);
                System.out.flush();
                if (!ok) {
                    System.exit(1);
                }
            } else {
                System.out.println("SHUFFLE DONE rank 1");
            }
        }
    }

    private static void check(long deadline) {
        if (System.nanoTime() > deadline) {
            throw new IllegalStateException("the result exchange did not complete in 120 s");
        }
    }
}
