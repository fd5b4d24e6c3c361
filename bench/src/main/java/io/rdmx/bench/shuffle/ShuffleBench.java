package io.rdmx.bench.shuffle;

import io.rdmx.bench.report.Hosts;
import io.rdmx.bench.report.Report;
import io.rdmx.bench.transport.TransportBench;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * {@code rdmx bench shuffle}: the DAIS 2016 paper's synthetic benchmark on this host. Fig. 3: P processes x W
 * workers, two stages, rows per process, rdmx on shm and tcp against the sockets middleware. Fig. 4: the
 * batching threshold from 1 KiB to 256 KiB at P=4 W=2. Every run has a warm-up pass and untimed full passes until
 * the JIT is quiet ({@link ShuffleRunner#warmUpRule()}) in the same processes before its timed passes (the median of
 * three is reported), each verified exactly-once;
 * beside wall time it reports CPU time per row (user + system of all processes, from /proc), context switches,
 * read/write system calls and garbage collections of the timed pass, and the allocation per row of the row path
 * (JMH with -prof gc).
 */
public final class ShuffleBench {
    private static final List<String> TRANSPORTS = List.of("shm", "tcp", "sockets");

    private ShuffleBench() {
    }

    /**
     * @param quick fewer rows, sizes and thresholds
     * @param results the results directory
     * @throws Exception on failure
     */
    public static void run(boolean quick, Path results) throws Exception {
        long rows = quick ? 1_000_000 : 5_000_000;
        long warm = quick ? 300_000 : 1_000_000;
        int[] ps = quick ? new int[] {4} : new int[] {4, 8};
        int[] ws = quick ? new int[] {1, 2} : new int[] {1, 2, 4};
        int buffer = 64 << 10;
        int threshold = 16 << 10;
        System.out.println("rdmx bench shuffle" + (quick ? " --quick" : "") + ": " + rows
            + " ints per process, two stages, 64 KiB buffers, threshold 16 KiB; a warm-up pass of " + warm
            + " rows and " + ShuffleRunner.warmUpRule() + " in the same processes (the first one is shown as "
            + "'1st pass s', their count and how they ended (quiet, cap, fixed) as 'warm', their wall time as "
            + "'warm s', the compiler threads' CPU in them as 'JIT s', -1 if not observable), then "
            + ShuffleRunner.REPEATS + " timed passes (the median is "
            + "reported); every pass verified exactly-once");
        Report report = new Report("shuffle", quick).printResults(false).context("rowsPerProcess", rows)
            .context("timedPasses", ShuffleRunner.REPEATS + " per configuration, median by wall time")
            .context("warmUpRowsPerProcess", warm)
            .context("untimedFullPasses", ShuffleRunner.warmUpRule()).context("bufferSize", buffer)
            .context("batchThreshold", threshold)
            .context("stages", 2).context("cpuAndSwitches", "CPU-time clock (clock_gettime, ns) and /proc "
                + "task/*/status of every process, timed pass only")
            .context("readWriteSystemCalls", "syscr and syscw of /proc/<pid>/io of every process, timed pass only "
                + "(read and write families on sockets, pipes, files and selectors' event descriptors; not futex, "
                + "epoll_wait or sendmsg)");
        allocation(quick, report);
        System.out.printf(Locale.ROOT, "%n  %-4s %-3s %-8s %8s %14s %12s %10s %9s %9s %6s %8s %11s %11s %7s %6s%n",
            "P", "W", "transport", "wall s", "rows/s", "cpu ns/row", "ctx sw", "reads", "writes", "GCs", "blocked",
            "1st pass s", "warm", "warm s", "JIT s");
        Map<String, ShuffleRunner.Run> runs = new LinkedHashMap<>();
        for (int p : ps) {
            for (int w : ws) {
                for (String t : TRANSPORTS) {
                    ShuffleRunner.Run r = ShuffleRunner.run(t, p, w, rows, buffer, threshold, warm, null);
                    runs.put(t + "/" + p + "/" + w, r);
                    print(r);
                    String name = "synthetic P=" + p + " W=" + w;
                    report.add(new Report.Result(name, t, r.seconds(), 0, "s"));
                    report.add(new Report.Result(name + " rows/s", t, r.rowsPerSecond(), 0, "rows/s"));
                    report.add(new Report.Result(name + " cpu", t, r.cpuNanosPerRow(), 0, "ns/row"));
                    report.add(new Report.Result(name + " context switches", t, r.contextSwitches(), 0, "switches"));
                    report.add(new Report.Result(name + " read system calls", t, r.readCalls(), 0, "calls"));
                    report.add(new Report.Result(name + " write system calls", t, r.writeCalls(), 0, "calls"));
                    report.add(new Report.Result(name + " GCs", t, r.gcCount(), 0, "collections"));
                    report.add(new Report.Result(name + " first full pass", t, r.firstPassSeconds(), 0, "s"));
                    report.add(new Report.Result(name + " untimed passes until the JIT was quiet", t,
                        r.untimedPasses(), 0, "passes"));
                    report.add(new Report.Result(name + " warm-up wall time", t, r.warmUpSeconds(), 0, "s"));
                    report.add(new Report.Result(name + " warm-up JIT compiler CPU", t, r.warmUpCompileSeconds(), 0,
                        "s"));
                    report.add(new Report.Result(name + " warm-up ended with the JIT quiet (1) or not (0)", t,
                        r.warmUpQuiet() ? 1 : 0, 0, r.warmUpEnd()));
                }
            }
        }
        // the plan's own work without communication: one process, one worker, every row stays in the process;
        // 8x the rows, as when the CPU time came in 10 ms ticks of /proc: a longer pass, steadier figures
        ShuffleRunner.Run floor = ShuffleRunner.run("shm", 1, 1, 8 * rows, buffer, threshold, warm, null);
        print(floor);
        System.out.println("  (P=1 W=1: the plan's own CPU per row with no communication, the floor the"
            + " communication cost below is counted from)");
        report.add(new Report.Result("synthetic P=1 W=1 (no communication) cpu", "shm", floor.cpuNanosPerRow(), 0,
            "ns/row"));
        int[] sweep = quick ? new int[] {1 << 10, 16 << 10, 256 << 10}
            : new int[] {1 << 10, 2 << 10, 4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10};
        List<String> sweepTransports = quick ? List.of("shm") : List.of("shm", "sockets");
        List<Report.Bar> sweepBars = new ArrayList<>();
        System.out.println();
        System.out.println("  Fig. 4: batching threshold at P=4 W=2 (buffer: 64 KiB, or 4x the threshold above "
            + "16 KiB)");
        for (int t : sweep) {
            for (String tr : sweepTransports) {
                int buf = Math.max(buffer, 4 * t);
                ShuffleRunner.Run r = ShuffleRunner.run(tr, 4, 2, rows, buf, t, warm, null);
                System.out.printf(Locale.ROOT, "  threshold %3d KiB %-8s %8.2f s %14.0f rows/s %8.1f cpu ns/row%n",
                    t >> 10, tr, r.seconds(), r.rowsPerSecond(), r.cpuNanosPerRow());
                report.add(new Report.Result("threshold sweep P=4 W=2 t=" + (t >> 10) + " KiB", tr, r.seconds(), 0,
                    "s"));
                sweepBars.add(new Report.Bar((t >> 10) + "K " + tr, r.seconds(), tr.equals("sockets")));
            }
        }
        for (int p : ps) {
            for (int w : ws) {
                ShuffleRunner.Run sock = runs.get("sockets/" + p + "/" + w);
                ShuffleRunner.Run shm = runs.get("shm/" + p + "/" + w);
                ShuffleRunner.Run tcp = runs.get("tcp/" + p + "/" + w);
                report.lowerIsBetter("shm vs sockets P=" + p + " W=" + w, shm.seconds(), sock.seconds(), "s",
                    p == 4 && w == 2 ? ">= 4x (the paper's 75% less communication cost)" : ">= 1x");
                report.lowerIsBetter("tcp vs sockets P=" + p + " W=" + w, tcp.seconds(), sock.seconds(), "s", null);
                if (w == 2) {
                    // a short job's view: the first full pass, the JIT still compiling (the longer path compiles
                    // longer)
                    report.lowerIsBetter("shm vs sockets first full pass P=" + p + " W=2", shm.firstPassSeconds(),
                        sock.firstPassSeconds(), "s", null);
                    report.lowerIsBetter("tcp vs sockets first full pass P=" + p + " W=2", tcp.firstPassSeconds(),
                        sock.firstPassSeconds(), "s", null);
                }
                // what reaching that speed costs: the untimed passes' wall time, until the JIT was quiet
                report.lowerIsBetter("tcp vs sockets warm-up until the JIT is quiet P=" + p + " W=" + w,
                    tcp.warmUpSeconds(), sock.warmUpSeconds(), "s", null);
                report.lowerIsBetter("shm vs sockets warm-up until the JIT is quiet P=" + p + " W=" + w,
                    shm.warmUpSeconds(), sock.warmUpSeconds(), "s", null);
                report.lowerIsBetter("shm vs sockets CPU per row P=" + p + " W=" + w, shm.cpuNanosPerRow(),
                    sock.cpuNanosPerRow(), "ns/row", null);
                report.lowerIsBetter("tcp vs sockets CPU per row P=" + p + " W=" + w, tcp.cpuNanosPerRow(),
                    sock.cpuNanosPerRow(), "ns/row", null);
                if (tcp.writeCalls() > 0 && sock.writeCalls() > 0) {
                    // every write call of a pass: frames on sockets, and the selectors' wake-ups (eventfd writes)
                    report.lowerIsBetter("tcp vs sockets write system calls P=" + p + " W=" + w,
                        tcp.writeCalls(), sock.writeCalls(), "calls/pass", null);
                }
                if (p == 4 && w == 2) {
                    report.higherIsBetter("shm rows/s (total) vs sockets P=4 W=2", shm.rowsPerSecond(),
                        sock.rowsPerSecond(), "rows/s", "rdmx >= 20M rows/s");
                    // the paper's "communication cost": what a row costs beyond the plan's own work
                    report.lowerIsBetter("shm vs sockets communication CPU/row (minus P=1 W=1 floor) P=4 W=2",
                        Math.max(0.01, shm.cpuNanosPerRow() - floor.cpuNanosPerRow()),
                        Math.max(0.01, sock.cpuNanosPerRow() - floor.cpuNanosPerRow()), "ns/row",
                        ">= 4x (the paper's 75% less communication cost)");
                }
            }
        }
        ShuffleRunner.Run sock42 = runs.get("sockets/4/2");
        if (sock42 != null) {
            // what no transport can beat here: the plan's own work is in every row's cost
            double ceiling = sock42.cpuNanosPerRow() / floor.cpuNanosPerRow();
            System.out.println();
            System.out.printf(Locale.ROOT, "  ceiling at P=4 W=2: the sockets middleware spends %.1f ns of CPU per "
                + "row, the plan alone %.1f (P=1 W=1), so a transport whose communication cost nothing would be "
                + "%.2fx sockets in CPU per row%n", sock42.cpuNanosPerRow(), floor.cpuNanosPerRow(), ceiling);
            report.add(new Report.Result("ceiling P=4 W=2: sockets CPU/row over the P=1 W=1 floor", "sockets",
                ceiling, 0, "x"));
        }
        for (int p : ps) {
            // the paper's own measure: the fastest time of each middleware over the worker counts
            double bestShm = Double.MAX_VALUE;
            double bestSock = Double.MAX_VALUE;
            for (int w : ws) {
                bestShm = Math.min(bestShm, runs.get("shm/" + p + "/" + w).seconds());
                bestSock = Math.min(bestSock, runs.get("sockets/" + p + "/" + w).seconds());
            }
            report.lowerIsBetter("fastest shm vs fastest sockets over W, P=" + p, bestShm, bestSock, "s",
                ">= 4x (the paper's measure)");
        }
        // the same plan with 256 KiB buffers for both (the channel layer's default ring; the paper used 64 KiB)
        System.out.println();
        System.out.println("  P=4 W=2 with 256 KiB buffers (both transports):");
        ShuffleRunner.Run bigShm = ShuffleRunner.run("shm", 4, 2, rows, 256 << 10, threshold, warm, null);
        print(bigShm);
        ShuffleRunner.Run bigSock = ShuffleRunner.run("sockets", 4, 2, rows, 256 << 10, threshold, warm, null);
        print(bigSock);
        report.add(new Report.Result("synthetic P=4 W=2 256 KiB buffers", "shm", bigShm.seconds(), 0, "s"));
        report.add(new Report.Result("synthetic P=4 W=2 256 KiB buffers", "sockets", bigSock.seconds(), 0, "s"));
        report.lowerIsBetter("shm vs sockets P=4 W=2, 256 KiB buffers", bigShm.seconds(), bigSock.seconds(), "s",
            null);
        for (int p : ps) {
            List<Report.Bar> bars = new ArrayList<>();
            for (int w : ws) {
                for (String t : TRANSPORTS) {
                    bars.add(new Report.Bar("W" + w + " " + t, runs.get(t + "/" + p + "/" + w).seconds(),
                        t.equals("sockets")));
                }
            }
            report.panel(new Report.Panel("Fig. 3: synthetic, P=" + p, "s, lower is better", bars));
        }
        report.panel(new Report.Panel("Fig. 4: P=4 W=2 by batching threshold", "s, lower is better", sweepBars));
        report.finish(System.out, results);
    }

    /**
     * {@code rdmx bench shuffle --hosts}: the synthetic plan with each process in a host of its own (a network
     * namespace of scripts/hosts.sh), unshaped and shaped to {@value Hosts#SHAPED_RATE}: rdmx with provider
     * {@code auto} (which must choose tcp between hosts, and the run says what it chose) against the sockets
     * middleware on the same link. Writes {@code shuffle-hosts.json}.
     *
     * @param quick fewer rows, P=4 W=1 and 2 only
     * @param results the results directory
     * @throws Exception on failure
     */
    public static void runHosts(boolean quick, Path results) throws Exception {
        long rows = quick ? 1_000_000 : 5_000_000;
        long warm = quick ? 300_000 : 1_000_000;
        int p = 4;
        int[] ws = quick ? new int[] {1, 2} : new int[] {1, 2, 4};
        int buffer = 64 << 10;
        int threshold = 16 << 10;
        System.out.println("rdmx bench shuffle --hosts" + (quick ? " --quick" : "") + ": P=" + p + " processes, "
            + "each in a host (network namespace) of its own, " + rows + " ints per process, two stages, 64 KiB "
            + "buffers, threshold 16 KiB; " + ShuffleRunner.warmUpRule() + ", then the median "
            + "of " + ShuffleRunner.REPEATS + " timed passes, every pass verified exactly-once");
        Report report = new Report("shuffle-hosts", quick).printResults(false).context("rowsPerProcess", rows)
            .context("hosts", p + " network namespaces on one bridge (scripts/hosts.sh), one process each")
            .context("links", "unshaped veth pairs, and tc tbf at " + Hosts.SHAPED_RATE + " on each host's egress")
            .context("untimedFullPasses", ShuffleRunner.warmUpRule()).context("bufferSize", buffer)
            .context("batchThreshold", threshold).context("loadAverageAtStart", load());
        System.out.printf(Locale.ROOT, "%n  %-9s %-3s %-3s %-16s %8s %14s %12s %10s %9s %9s %11s %7s %6s%n", "link",
            "P", "W", "transport", "wall s", "rows/s", "cpu ns/row", "ctx sw", "reads", "writes", "warm", "warm s",
            "JIT s");
        List<Report.Bar> bars = new ArrayList<>();
        for (String rate : List.of("", Hosts.SHAPED_RATE)) {
            Hosts.up(p, rate);
            try {
                for (int w : ws) {
                    ShuffleRunner.Run rdmx = ShuffleRunner.run("auto", p, w, rows, buffer, threshold, warm, null);
                    printHosts(rdmx);
                    ShuffleRunner.Run sock = ShuffleRunner.run("sockets", p, w, rows, buffer, threshold, warm, null);
                    printHosts(sock);
                    if (!rdmx.providers().equals("tcp")) {
                        System.out.println("  NOTE: auto chose " + rdmx.providers() + " between hosts, not tcp");
                    }
                    String name = Hosts.link() + " P=" + p + " W=" + w;
                    String label = "rdmx (auto: " + rdmx.providers() + ")";
                    for (ShuffleRunner.Run r : List.of(rdmx, sock)) {
                        String t = r == rdmx ? label : "sockets";
                        report.add(new Report.Result(name, t, r.seconds(), 0, "s"));
                        report.add(new Report.Result(name + " cpu", t, r.cpuNanosPerRow(), 0, "ns/row"));
                        report.add(new Report.Result(name + " write system calls", t, r.writeCalls(), 0, "calls"));
                        report.add(new Report.Result(name + " untimed passes until the JIT was quiet", t,
                            r.untimedPasses(), 0, "passes"));
                        report.add(new Report.Result(name + " warm-up wall time", t, r.warmUpSeconds(), 0, "s"));
                        report.add(new Report.Result(name + " warm-up JIT compiler CPU", t, r.warmUpCompileSeconds(),
                            0, "s"));
                        report.add(new Report.Result(name + " warm-up ended with the JIT quiet (1) or not (0)", t,
                            r.warmUpQuiet() ? 1 : 0, 0, r.warmUpEnd()));
                        bars.add(new Report.Bar(Hosts.link() + " W" + w + " " + (r == rdmx ? "rdmx" : "sockets"),
                            r.seconds(), r == sock));
                    }
                    report.lowerIsBetter("rdmx " + rdmx.providers() + " vs sockets, " + name, rdmx.seconds(),
                        sock.seconds(), "s", ">= 1x (never slower than the baseline)");
                    report.lowerIsBetter("rdmx " + rdmx.providers() + " vs sockets CPU per row, " + name,
                        rdmx.cpuNanosPerRow(), sock.cpuNanosPerRow(), "ns/row", null);
                    report.lowerIsBetter("rdmx " + rdmx.providers() + " vs sockets write system calls, " + name,
                        Math.max(1, rdmx.writeCalls()), Math.max(1, sock.writeCalls()), "calls/pass", null);
                    report.lowerIsBetter("rdmx " + rdmx.providers() + " vs sockets warm-up until the JIT is quiet, "
                        + name, rdmx.warmUpSeconds(), sock.warmUpSeconds(), "s", null);
                }
            } finally {
                Hosts.down();
            }
        }
        report.context("loadAverageAtEnd", load());
        report.panel(new Report.Panel("synthetic across hosts, P=" + p, "s, lower is better", bars));
        report.finish(System.out, results);
    }

    private static String load() {
        try {
            String[] f = java.nio.file.Files.readString(java.nio.file.Paths.get("/proc/loadavg")).split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (java.io.IOException e) {
            return "unknown";
        }
    }

    private static void printHosts(ShuffleRunner.Run r) {
        System.out.printf(Locale.ROOT, "  %-9s %-3d %-3d %-16s %8.2f %14.0f %12.1f %10d %9d %9d %11s %7.2f %6.2f%n",
            Hosts.link(), r.processes(), r.workers(),
            r.transport().equals("auto") ? "rdmx auto:" + r.providers() : r.transport(), r.seconds(),
            r.rowsPerSecond(), r.cpuNanosPerRow(), r.contextSwitches(), r.readCalls(), r.writeCalls(),
            r.untimedPasses() + " " + r.warmUpEnd(), r.warmUpSeconds(), r.warmUpCompileSeconds());
    }

    /** The row path in steady state under JMH with {@code -prof gc}: bytes allocated per offer and per poll. */
    private static void allocation(boolean quick, Report report) throws Exception {
        System.out.println("  allocation per row (JMH ShuffleRowsBenchmark, -prof gc):");
        java.util.Collection<RunResult> rs = new Runner(TransportBench.jmh(quick)
            .include(ShuffleRowsBenchmark.class.getName() + ".*").addProfiler(GCProfiler.class)
            .verbosity(VerboseMode.SILENT).build()).run();
        for (RunResult r : rs) {
            String path = r.getParams().getParam("path");
            double ops = r.getAggregatedResult().getPrimaryResult().getScore();
            Result<?> norm = r.getAggregatedResult().getSecondaryResults().get("gc.alloc.rate.norm");
            Result<?> offers = r.getAggregatedResult().getSecondaryResults().get("offer");
            double bytes = norm == null ? Double.NaN : norm.getScore();
            double rows = offers == null ? Double.NaN : offers.getScore();
            System.out.printf(Locale.ROOT, "    %-6s %8.2f M offer calls/s (one may end back-pressured), %8.2f ops/us "
                + "(offers + polls), %8.4f B/op allocated%n", path, rows, ops, bytes);
            report.add(new Report.Result("row path " + path + " offer calls", "rdmx", rows, 0, "ops/us"));
            report.add(new Report.Result("row path " + path + " offers+polls", "rdmx", ops, 0, "ops/us"));
            report.add(new Report.Result("row path " + path + " gc.alloc.rate.norm", "rdmx", bytes, 0, "B/op"));
        }
    }

    private static void print(ShuffleRunner.Run r) {
        System.out.printf(Locale.ROOT, "  %-4d %-3d %-8s %8.2f %14.0f %12.1f %10d %9d %9d %6d %8d %11.2f %11s %7.2f "
            + "%6.2f%n", r.processes(), r.workers(), r.transport(), r.seconds(), r.rowsPerSecond(),
            r.cpuNanosPerRow(), r.contextSwitches(), r.readCalls(), r.writeCalls(), r.gcCount(), r.blocked(),
            r.firstPassSeconds(), r.untimedPasses() + " " + r.warmUpEnd(), r.warmUpSeconds(),
            r.warmUpCompileSeconds());
    }
}
