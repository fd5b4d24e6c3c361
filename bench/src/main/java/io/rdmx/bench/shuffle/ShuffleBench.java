package io.rdmx.bench.shuffle;

import io.rdmx.bench.report.Report;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code rdmx bench shuffle}: the DAIS 2016 paper's synthetic benchmark (Figures 3 and 4) on this host, rdmx on
 * shm and tcp against the sockets middleware, plus a batching-threshold sweep. Every run is verified
 * exactly-once.
 */
public final class ShuffleBench {
    private ShuffleBench() {
    }

    /**
     * @param quick fewer rows and configurations
     * @param results the results directory
     * @throws Exception on failure
     */
    public static void run(boolean quick, Path results) throws Exception {
        long rows = quick ? 300_000 : 5_000_000;
        int[] ps = quick ? new int[] {4} : new int[] {4, 8};
        int[] ws = quick ? new int[] {1, 2} : new int[] {1, 2, 4};
        int buffer = 64 << 10;
        int threshold = 16 << 10;
        System.out.println("rdmx bench shuffle" + (quick ? " --quick" : "") + ": " + rows
            + " integers per process, two stages, 64 KiB buffers, threshold 16 KiB; every run verified");
        Report report = new Report("shuffle", quick).context("rowsPerProcess", rows).context("bufferSize", buffer)
            .context("batchThreshold", threshold).context("stages", 2);
        Map<String, Double> secs = new LinkedHashMap<>();
        for (int p : ps) {
            for (int w : ws) {
                for (String t : List.of("shm", "tcp", "sockets")) {
                    ShuffleRunner.Run r = ShuffleRunner.run(t, p, w, rows, buffer, threshold, null);
                    secs.put(t + "/" + p + "/" + w, r.seconds());
                    System.out.printf(Locale.ROOT, "  P=%d W=%d %-8s %8.2f s  %12.0f rows/s  (blocked sends %d)%n",
                        p, w, t, r.seconds(), r.rowsPerSecond(), r.blocked());
                    report.add(new Report.Result("synthetic P=" + p + " W=" + w, t, r.seconds(), 0, "s"));
                }
            }
        }
        int[] sweep = quick ? new int[] {1 << 10, 4 << 10, 16 << 10} : new int[] {1 << 10, 2 << 10, 4 << 10,
            8 << 10, 16 << 10};
        List<Report.Bar> sweepBars = new ArrayList<>();
        for (int t : sweep) {
            ShuffleRunner.Run r = ShuffleRunner.run("shm", 4, 2, rows, buffer, t, null);
            System.out.printf(Locale.ROOT, "  sweep P=4 W=2 shm threshold %3d KiB %8.2f s%n", t >> 10, r.seconds());
            report.add(new Report.Result("threshold sweep P=4 W=2 shm t=" + (t >> 10) + " KiB", "shm", r.seconds(),
                0, "s"));
            sweepBars.add(new Report.Bar((t >> 10) + " KiB", r.seconds(), false));
        }
        for (int p : ps) {
            for (int w : ws) {
                double sock = secs.get("sockets/" + p + "/" + w);
                report.lowerIsBetter("shm vs sockets P=" + p + " W=" + w, secs.get("shm/" + p + "/" + w), sock, "s",
                    p == 4 && w == 2 ? ">= 4x (the paper's 75% reduction)" : null);
                report.lowerIsBetter("tcp vs sockets P=" + p + " W=" + w, secs.get("tcp/" + p + "/" + w), sock, "s",
                    null);
            }
        }
        for (int p : ps) {
            List<Report.Bar> bars = new ArrayList<>();
            for (int w : ws) {
                for (String t : List.of("shm", "tcp", "sockets")) {
                    bars.add(new Report.Bar("W" + w + " " + t, secs.get(t + "/" + p + "/" + w), t.equals("sockets")));
                }
            }
            report.panel(new Report.Panel("synthetic, P=" + p, "s, lower is better", bars));
        }
        report.panel(new Report.Panel("shm P=4 W=2 by threshold", "s, lower is better", sweepBars));
        report.finish(System.out, results);
    }
}
