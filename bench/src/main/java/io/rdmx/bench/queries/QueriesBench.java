package io.rdmx.bench.queries;

import io.rdmx.bench.report.Report;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code rdmx bench queries}: the DAIS 2016 paper's application benchmark (its Fig. 5). The three queries over a
 * generated TPC-C database run as SPMD plans in P processes of W workers, on rdmx (shm) and on the sockets
 * middleware, in the same run; each configuration runs every query {@code runs} times in the same processes and
 * the first run is a warm-up (the paper ran 5 and averaged the last 4). Every answer is checked against the
 * single-process evaluation. Reported: seconds per query, speed-up over one worker (P=1, W=1, the same plan
 * with no communication between processes), rdmx against sockets, CPU seconds and context switches.
 */
public final class QueriesBench {
    private QueriesBench() {
    }

    /**
     * @param quick a smaller database and fewer configurations
     * @param results the results directory
     * @throws Exception on failure
     */
    public static void run(boolean quick, Path results) throws Exception {
        int warehouses = Integer.getInteger("rdmx.bench.queries.warehouses", quick ? 10 : 30);
        int runs = quick ? 3 : 5;
        int[][] configs = quick ? new int[][] {{2, 1}, {2, 2}, {4, 1}}
            : new int[][] {{2, 1}, {2, 2}, {4, 1}, {4, 2}, {8, 1}};
        List<String> transports = List.of("shm", Shuffles.SOCKETS);
        System.out.println("rdmx bench queries" + (quick ? " --quick" : "") + ": TPC-C scale factor " + warehouses
            + " (warehouses), queries 1-3 of the DAIS 2016 paper, " + runs + " runs each (the first a warm-up);"
            + " every answer checked against a single-process evaluation");
        long t0 = System.nanoTime();
        Tpcc.Tables all = Tpcc.generate(warehouses, 0, 1);
        String[] expected = new String[4];
        for (int q = 1; q <= 3; q++) {
            expected[q] = TpccQueries.digest(TpccQueries.render(q, all));
        }
        System.out.printf(Locale.ROOT, "  database: %,d rows (order_line %,d); reference answers in %.1f s%n",
            all.rows(), all.olO.size(), (System.nanoTime() - t0) / 1e9);
        Report report = new Report("queries", quick).context("warehouses", warehouses).context("rows", all.rows())
            .context("runs", runs).context("warmUpRuns", 1);
        Map<String, double[]> secs = new LinkedHashMap<>();
        measure(report, secs, "shm", 1, 1, warehouses, runs, expected);
        for (int[] pw : configs) {
            for (String t : transports) {
                measure(report, secs, t, pw[0], pw[1], warehouses, runs, expected);
            }
        }
        double[] one = secs.get("shm/1/1");
        System.out.println();
        System.out.println("  query  P x W   sockets s   rdmx s   speed-up sockets   speed-up rdmx   rdmx vs sockets");
        for (int q = 1; q <= 3; q++) {
            List<Report.Bar> bars = new ArrayList<>();
            bars.add(new Report.Bar("1x1", one[q], true));
            for (int[] pw : configs) {
                String k = pw[0] + "/" + pw[1];
                double sock = secs.get(Shuffles.SOCKETS + "/" + k)[q];
                double rdmx = secs.get("shm/" + k)[q];
                System.out.printf(Locale.ROOT, "  Q%d     %d x %d   %9.3f   %6.3f   %16.2fx   %13.2fx   %14.2fx%n", q,
                    pw[0], pw[1], sock, rdmx, one[q] / sock, one[q] / rdmx, sock / rdmx);
                report.lowerIsBetter("Q" + q + " P=" + pw[0] + " W=" + pw[1] + " rdmx shm vs sockets", rdmx, sock,
                    "s", "never slower than sockets");
                bars.add(new Report.Bar(pw[0] + "x" + pw[1] + " sockets", sock, true));
                bars.add(new Report.Bar(pw[0] + "x" + pw[1] + " rdmx", rdmx, false));
            }
            report.panel(new Report.Panel("Q" + q + " (TPC-C SF " + warehouses + ")", "s, lower is better", bars));
        }
        report.finish(System.out, results);
    }

    private static void measure(Report report, Map<String, double[]> secs, String transport, int p, int w,
                                int warehouses, int runs, String[] expected) throws Exception {
        double[] mean = new double[4];
        try (QueriesRunner r = new QueriesRunner(transport, p, w, warehouses)) {
            double[] cpu = new double[4];
            long[] cs = new long[4];
            for (int run = 0; run < runs; run++) {
                for (int q = 1; q <= 3; q++) {
                    QueriesRunner.Timing t = r.run(q, run, expected[q]);
                    if (run > 0) {
                        mean[q] += t.seconds() / (runs - 1);
                        cpu[q] += t.cpuSeconds() / (runs - 1);
                        cs[q] += t.contextSwitches() / (runs - 1);
                    }
                }
            }
            for (int q = 1; q <= 3; q++) {
                System.out.printf(Locale.ROOT, "  %-8s P=%d W=%d Q%d %8.3f s  cpu %6.2f s  %,9d context switches"
                    + "  (answer ok)%n", transport, p, w, q, mean[q], cpu[q], cs[q]);
                report.add(new Report.Result("Q" + q + " P=" + p + " W=" + w, transport, mean[q], 0, "s"));
                report.add(new Report.Result("Q" + q + " P=" + p + " W=" + w + " cpu", transport, cpu[q], 0,
                    "cpu s"));
                report.add(new Report.Result("Q" + q + " P=" + p + " W=" + w + " context switches", transport, cs[q],
                    0, "switches"));
            }
        }
        secs.put(transport + "/" + p + "/" + w, mean);
    }
}
