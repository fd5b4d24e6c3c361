package io.rdmx.bench.transport;

import io.rdmx.bench.report.Report;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.annotations.Mode;

/**
 * The transport benchmark: WRITE bandwidth and SEND round trip per provider (JMH), against a memory copy and
 * a NIO socket ping-pong measured in the same run.
 */
public final class TransportBench {
    private TransportBench() {
    }

    /**
     * JMH options shared by the runners.
     *
     * @param quick fewer, shorter iterations
     * @return the builder
     */
    public static ChainedOptionsBuilder jmh(boolean quick) {
        ChainedOptionsBuilder b = new OptionsBuilder().forks(1)
            .warmupIterations(quick ? 2 : 3).warmupTime(TimeValue.seconds(1))
            .measurementIterations(quick ? 3 : 5).measurementTime(TimeValue.seconds(quick ? 1 : 2))
            .jvmArgsAppend("-Drdmx.leakDetection=disabled", "-Xmx1g");
        if (Runtime.version().feature() >= 23) {
            b = b.jvmArgsAppend("--sun-misc-unsafe-memory-access=allow");
        }
        return b;
    }

    /**
     * @param r a round-trip run with {@link Switches}
     * @return context switches and CPU microseconds of the process per round trip (NaN without the counters)
     */
    static double[] perRoundTrip(RunResult r) {
        var sec = r.getSecondaryResults();
        if (!sec.containsKey("roundTrips") || !sec.containsKey("contextSwitches") || !sec.containsKey("cpuNanos")) {
            return new double[] {Double.NaN, Double.NaN};
        }
        double trips = sec.get("roundTrips").getScore();
        if (trips <= 0) {
            return new double[] {Double.NaN, Double.NaN};
        }
        return new double[] {sec.get("contextSwitches").getScore() / trips,
            sec.get("cpuNanos").getScore() / 1e3 / trips};
    }

    /**
     * Runs it and writes {@code transport.json} and {@code transport.svg}.
     *
     * @param quick fewer, shorter iterations
     * @param results the results directory
     * @throws Exception on failure
     */
    public static void run(boolean quick, Path results) throws Exception {
        System.out.println("rdmx bench transport" + (quick ? " --quick" : "") + ": JMH, 1 fork; this takes about "
            + (quick ? "1" : "2") + " minute(s)");
        Collection<RunResult> bw = new Runner(jmh(quick)
            .include(TransportWriteBandwidth.class.getName() + ".*")
            .include(Baselines.Memcpy.class.getName().replace('$', '.') + ".*")
            .mode(Mode.Throughput).timeUnit(TimeUnit.SECONDS).build()).run();
        Collection<RunResult> rtt = new Runner(jmh(quick)
            .include(TransportSendRoundTrip.class.getName() + ".*")
            .include(Baselines.NioRoundTrip.class.getName().replace('$', '.') + ".*")
            .mode(Mode.AverageTime).timeUnit(TimeUnit.MICROSECONDS).build()).run();

        Report report = new Report("transport", quick).context("writeSize", 65536).context("sendSize", 64)
            .context("window", TransportWriteBandwidth.WINDOW);
        double memcpy = 0;
        List<Report.Bar> bwBars = new ArrayList<>();
        List<String[]> providersBw = new ArrayList<>();
        for (RunResult r : bw) {
            String label = r.getParams().getBenchmark();
            double opsPerSec = r.getPrimaryResult().getScore();
            double mibs = opsPerSec * 65536 / (1 << 20);
            double err = r.getPrimaryResult().getScoreError() * 65536 / (1 << 20);
            if (label.contains("Memcpy")) {
                memcpy = mibs;
                report.add(new Report.Result("memcpy 64 KiB (baseline)", "-", mibs, err, "MiB/s"));
            } else {
                String p = r.getParams().getParam("provider");
                report.add(new Report.Result("WRITE 64 KiB bandwidth", p, mibs, err, "MiB/s"));
                providersBw.add(new String[] {p, Double.toString(mibs)});
                bwBars.add(new Report.Bar(p, mibs, false));
            }
        }
        bwBars.add(new Report.Bar("memcpy", memcpy, true));
        double nio = 0;
        List<Report.Bar> rttBars = new ArrayList<>();
        List<String[]> providersRtt = new ArrayList<>();
        double nioSwitches = Double.NaN;
        double nioCpu = Double.NaN;
        List<String[]> providersCost = new ArrayList<>();
        for (RunResult r : rtt) {
            String label = r.getParams().getBenchmark();
            double us = r.getPrimaryResult().getScore();
            double err = r.getPrimaryResult().getScoreError();
            double[] cost = perRoundTrip(r);
            if (label.contains("NioRoundTrip")) {
                nio = us;
                nioSwitches = cost[0];
                nioCpu = cost[1];
                report.add(new Report.Result("NIO socket round trip 64 B (baseline)", "-", us, err, "us"));
                report.add(new Report.Result("NIO socket context switches per round trip", "-", cost[0], 0,
                    "switches"));
                report.add(new Report.Result("NIO socket CPU per round trip", "-", cost[1], 0, "us"));
            } else {
                String p = r.getParams().getParam("provider");
                report.add(new Report.Result("SEND round trip 64 B", p, us, err, "us"));
                report.add(new Report.Result("SEND context switches per round trip", p, cost[0], 0, "switches"));
                report.add(new Report.Result("SEND CPU per round trip", p, cost[1], 0, "us"));
                providersRtt.add(new String[] {p, Double.toString(us)});
                providersCost.add(new String[] {p, Double.toString(cost[0]), Double.toString(cost[1])});
                rttBars.add(new Report.Bar(p, us, false));
            }
            System.out.printf("%s: %.1f us, %.2f context switches and %.1f us CPU per round trip (whole process)%n",
                label.contains("NioRoundTrip") ? "NIO socket" : r.getParams().getParam("provider"), us, cost[0],
                cost[1]);
        }
        rttBars.add(new Report.Bar("NIO socket", nio, true));
        for (String[] p : providersBw) {
            report.higherIsBetter(p[0] + " WRITE bandwidth vs memcpy", Double.parseDouble(p[1]), memcpy, "MiB/s",
                null);
        }
        for (String[] p : providersRtt) {
            report.lowerIsBetter(p[0] + " SEND round trip vs NIO socket", Double.parseDouble(p[1]), nio, "us", null);
        }
        for (String[] p : providersCost) {
            report.lowerIsBetter(p[0] + " SEND context switches per round trip vs NIO socket", Double.parseDouble(p[1]),
                nioSwitches, "switches", null);
            report.lowerIsBetter(p[0] + " SEND CPU per round trip vs NIO socket", Double.parseDouble(p[2]), nioCpu,
                "us", null);
        }
        report.panel(new Report.Panel("WRITE 64 KiB bandwidth", "MiB/s", bwBars));
        report.panel(new Report.Panel("SEND 64 B round trip", "us, lower is better", rttBars));
        report.finish(System.out, results);
    }
}
