package io.rdmx.bench.affinity;

import io.rdmx.bench.report.ChildJvm;
import io.rdmx.bench.report.Report;
import io.rdmx.channel.ChannelConfig;
import io.rdmx.channel.ChannelEngine;
import io.rdmx.channel.ChannelReader;
import io.rdmx.channel.ChannelWriter;
import io.rdmx.channel.PeerChannel;
import io.rdmx.spi.Platform;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code rdmx bench affinity}: ring-channel round-trip latency (shm, 64 B) with a CPU-bound background load,
 * once per placement policy (each in its own JVM, since the policy is read once), side by side: p50, p99,
 * standard deviation.
 */
public final class AffinityBench {
    static final List<String> POLICIES = List.of("NONE", "O2NTS(1)", "O2ACS", "O2OCS", "O2NTC(1)", "O2OCC");

    private AffinityBench() {
    }

    /**
     * Runs every policy and writes {@code affinity.json} and {@code affinity.svg}.
     *
     * @param quick fewer round trips
     * @param results the results directory
     * @throws Exception on failure
     */
    public static void run(boolean quick, Path results) throws Exception {
        int iterations = quick ? 3000 : 20000;
        System.out.println("rdmx bench affinity" + (quick ? " --quick" : "") + ": " + iterations
            + " ring-channel round trips per policy, with one busy background thread per CPU");
        Report report = new Report("affinity", quick).context("iterations", iterations).context("record", 64)
            .context("provider", "shm").context("backgroundThreads", Runtime.getRuntime().availableProcessors());
        Map<String, double[]> stats = new LinkedHashMap<>();
        for (String policy : POLICIES) {
            List<String> cmd = ChildJvm.command(AffinityBench.class.getName(),
                List.of("-Drdmx.affinity.policy=" + policy), Integer.toString(iterations));
            Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            String line;
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
                StandardCharsets.UTF_8))) {
                line = r.readLine();
            }
            if (!p.waitFor(300, TimeUnit.SECONDS) || p.exitValue() != 0 || line == null) {
                p.destroyForcibly();
                throw new IllegalStateException("policy " + policy + " run failed: " + line);
            }
            double[] v = Arrays.stream(line.trim().split(" ")).mapToDouble(Double::parseDouble).toArray();
            stats.put(policy, v);
            System.out.printf(Locale.ROOT, "  %-10s p50 %8.1f us   p99 %8.1f us   stdev %8.1f us%n", policy, v[0],
                v[1], v[2]);
            report.add(new Report.Result("round trip p50", policy, v[0], 0, "us"));
            report.add(new Report.Result("round trip p99", policy, v[1], 0, "us"));
            report.add(new Report.Result("round trip stdev", policy, v[2], 0, "us"));
        }
        double[] none = stats.get("NONE");
        String best = null;
        for (Map.Entry<String, double[]> e : stats.entrySet()) {
            if (!e.getKey().equals("NONE") && (best == null || e.getValue()[1] < stats.get(best)[1])) {
                best = e.getKey();
            }
        }
        for (Map.Entry<String, double[]> e : stats.entrySet()) {
            if (!e.getKey().equals("NONE")) {
                report.lowerIsBetter(e.getKey() + " p99 vs NONE", e.getValue()[1], none[1], "us",
                    e.getKey().equals(best) ? "best policy: p99 -25% (ratio >= 1.33x)" : null);
            }
        }
        List<Report.Bar> p50 = new ArrayList<>();
        List<Report.Bar> p99 = new ArrayList<>();
        for (Map.Entry<String, double[]> e : stats.entrySet()) {
            p50.add(new Report.Bar(e.getKey(), e.getValue()[0], e.getKey().equals("NONE")));
            p99.add(new Report.Bar(e.getKey(), e.getValue()[1], e.getKey().equals("NONE")));
        }
        report.panel(new Report.Panel("round trip p50", "us, lower is better", p50));
        report.panel(new Report.Panel("round trip p99", "us, lower is better", p99));
        report.finish(System.out, results);
    }

    /**
     * One policy's run (child JVM): prints {@code p50 p99 stdev} in microseconds.
     *
     * @param args round trips
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        int iterations = Integer.parseInt(args[0]);
        List<Thread> load = new ArrayList<>();
        volatileStop = false;
        for (int i = 0; i < Runtime.getRuntime().availableProcessors(); i++) {
            Thread t = new Thread(() -> {
                long x = 1;
                while (!volatileStop) {
                    x = x * 6364136223846793005L + 1442695040888963407L;
                }
                sink = x;
            }, "load-" + i);
            t.setDaemon(true);
            t.start();
            load.add(t);
        }
        Platform.hooks();
        long pid = ProcessHandle.current().pid();
        ChannelConfig cfg = ChannelConfig.builder(1).batchThreshold(1).build();
        try (Node a = Fabrics.get("shm").open(NodeOptions.builder().name("aff-a-" + pid).build());
             Node b = Fabrics.get("shm").open(NodeOptions.builder().name("aff-b-" + pid).build());
             ChannelEngine ea = ChannelEngine.open(a, cfg);
             ChannelEngine eb = ChannelEngine.open(b, cfg)) {
            PeerChannel ab = ea.connect(b.address(), Duration.ofSeconds(30));
            PeerChannel ba = eb.accept(Duration.ofSeconds(30));
            ChannelWriter ping = ab.writer(0, 0);
            ChannelWriter pong = ba.writer(0, 0);
            ChannelReader ra = ea.reader(0);
            ChannelReader rb = eb.reader(0);
            Thread echo = new Thread(() -> {
                ByteBuffer buf = ByteBuffer.allocate(64);
                try {
                    for (int i = 0; i < iterations + iterations / 5; i++) {
                        while (rb.read((s, bb, o, l, src) -> { }, 1, 10, TimeUnit.SECONDS) == 0) {
                            Thread.onSpinWait();
                        }
                        pong.write(1, buf, 10, TimeUnit.SECONDS);
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, "echo");
            echo.start();
            ByteBuffer buf = ByteBuffer.allocate(64);
            long[] t = new long[iterations];
            for (int i = -iterations / 5; i < iterations; i++) {
                long t0 = System.nanoTime();
                ping.write(1, buf, 10, TimeUnit.SECONDS);
                while (ra.read((s, bb, o, l, src) -> { }, 1, 10, TimeUnit.SECONDS) == 0) {
                    Thread.onSpinWait();
                }
                if (i >= 0) {
                    t[i] = System.nanoTime() - t0;
                }
            }
            echo.join(10_000);
            volatileStop = true;
            Arrays.sort(t);
            double mean = Arrays.stream(t).average().orElse(0);
            double var = Arrays.stream(t).mapToDouble(x -> (x - mean) * (x - mean)).sum() / t.length;
            System.out.printf(Locale.ROOT, "%.2f %.2f %.2f%n", t[t.length / 2] / 1e3,
                t[(int) (t.length * 0.99)] / 1e3, Math.sqrt(var) / 1e3);
        }
        System.exit(0);
    }

    private static volatile boolean volatileStop;
    @SuppressWarnings("unused")
    private static volatile long sink;
}
