package io.rdmx.bench.shuffle;

import io.rdmx.shuffle.ShuffleConfig;
import io.rdmx.shuffle.ShuffleService;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One process of a synthetic shuffle run: joins, prints READY, waits for GO on stdin, runs the plan (printing
 * PROGRESS lines), prints RESULT, and closes after EXIT (so no process leaves while others still receive).
 */
public final class ShuffleProc {
    private ShuffleProc() {
    }

    /**
     * @param args transport rank processes workers rowsPerProcess endpoints(or -) job bufferSize threshold
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
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (ShuffleService svc = sockets ? ShuffleService.open(b.build(), NioShuffleTransport::open)
            : ShuffleService.open(b.build())) {
            System.out.println("READY");
            System.out.flush();
            if (!"GO".equals(in.readLine())) {
                return;
            }
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
            SyntheticPlan.Result r = SyntheticPlan.run(svc, rows, 1, progress);
            reporter.interrupt();
            System.out.println("RESULT " + r.count1() + " " + r.sum1() + " " + r.count2() + " " + r.sum2() + " "
                + r.nanos() + " " + svc.blockedSends());
            System.out.flush();
            in.readLine();
        }
    }
}
