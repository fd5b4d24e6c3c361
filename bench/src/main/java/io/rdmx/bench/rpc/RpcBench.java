package io.rdmx.bench.rpc;

import io.rdmx.bench.channel.ProcStat;
import io.rdmx.bench.report.Report;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;

/**
 * {@code scripts/rdmx bench rpc [--quick]}: the OSU HiBD RPC micro-benchmarks on unmodified Hadoop RPC: echo
 * latency of 1 B to 512 KiB payloads (20 000 calls per size, quick 2 000 in each of 3 rounds; the first half
 * warm-up; mean, p50, p99 of the rest) and the throughput of 6 client threads at 1 KiB, for a {@code bytes} payload
 * (OHB's byte arrays: {@link BytesEcho}; the targets) and a {@code string} payload (Hadoop's test
 * protocol), with {@code RdmxRpcEngine} (over {@code shm} and over {@code tcp}, each with the server's
 * {@code queue} and {@code direct} dispatch, and over {@code shm} with {@code reader} dispatch) against Hadoop's
 * {@code ProtobufRpcEngine2}, client and server in separate JVMs, all in the same run. The protocols are
 * {@link BytesEcho} and Hadoop's own {@code TestRpcBase.TestRpcService} (hadoop-common test-jar), both served by
 * one {@code RPC.Server}: same messages, same server code, only {@code rpc.engine.<protocol>} differs. Each client
 * JVM first makes 20 000 calls of JIT warm-up per payload kind. CPU seconds and context switches of both processes
 * are sampled from {@code /proc} at the edges of each phase.
 *
 * <p>Hadoop 3.4 does not run on JDK 23+, so the child JVMs run on the JDK 17 given by
 * {@code -Drdmx.bench.java17} (scripts/rdmx sets it), with {@code benchmarks.jar} plus the Hadoop class path the
 * build wrote to {@code bench/target/hadoop.classpath}.
 */
public final class RpcBench {
    /** System property: the {@code java} of a JDK 17 for the Hadoop JVMs. */
    public static final String JAVA17_PROP = "rdmx.bench.java17";
    static final String PROTOCOL_KEY = "rpc.engine.org.apache.hadoop.ipc.TestRpcBase$TestRpcService";
    static final String BYTES_PROTOCOL_KEY = "rpc.engine." + BytesEcho.Protocol.class.getName();
    /** The payload kinds, the first the faithful one (OHB sends byte arrays), the targets' subject. */
    static final String[] KINDS = {"bytes", "string"};
    static final String RDMX = "io.rdmx.rpc.hadoop.RdmxRpcEngine";
    static final String STOCK = "org.apache.hadoop.ipc.ProtobufRpcEngine2";
    static final int[] SIZES = {1, 1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 512 << 10};
    static final int THREADS = 6;
    static final int HANDLERS = 8;

    private RpcBench() {
    }

    /** One engine under test. */
    record Variant(String name, String engine, String provider, String dispatch, boolean baseline) {
    }

    /** What one variant measured. */
    static final class Run {
        final Map<String, Map<Integer, double[]>> latency = new LinkedHashMap<>(); // kind -> size -> mean/p50/p99 us
        final Map<String, Double> tput = new LinkedHashMap<>();                     // kind -> calls/s
        final Map<String, double[]> cost = new LinkedHashMap<>();       // phase -> cpu s, ctx switches, calls
    }

    /**
     * The Hadoop configuration of both sides of a variant.
     *
     * @param engine the engine class name
     * @param provider rdmx provider of the server's listener
     * @param dispatch the server's rdmx dispatch (queue or direct)
     * @return the configuration
     */
    static Configuration conf(String engine, String provider, String dispatch) {
        Configuration c = new Configuration();
        c.set(PROTOCOL_KEY, engine);
        c.set(BYTES_PROTOCOL_KEY, engine);
        c.set("rdmx.rpc.hadoop.provider", provider);
        c.set("rdmx.rpc.hadoop.dispatch", dispatch);
        c.setInt("ipc.client.connect.max.retries", 3);
        return c;
    }

    /**
     * @param quick fewer calls
     * @param results where the report goes
     * @throws Exception on failure
     */
    public static void run(boolean quick, Path results) throws Exception {
        String java = System.getProperty(JAVA17_PROP);
        if (java == null || java.isBlank()) {
            if (Runtime.version().feature() >= 23) {
                throw new IllegalStateException("bench rpc needs a JDK 17 for Hadoop 3.4 (it cannot run on JDK "
                    + Runtime.version().feature() + "): set -D" + JAVA17_PROP + "=<jdk17>/bin/java (scripts/rdmx"
                    + " bench rpc does)");
            }
            java = ProcessHandle.current().info().command().orElse("java");
        }
        Path cpFile = Paths.get(System.getProperty("rdmx.bench.hadoopClasspath", "bench/target/hadoop.classpath"));
        if (!Files.isRegularFile(cpFile)) {
            throw new IllegalStateException("no Hadoop class path at " + cpFile.toAbsolutePath()
                + " (the bench module's build writes it: mvn -pl bench package)");
        }
        String cp = System.getProperty("java.class.path") + File.pathSeparator
            + Files.readString(cpFile, StandardCharsets.UTF_8).trim();
        int calls = quick ? 2_000 : 20_000;
        int perThread = quick ? 2_000 : 20_000;
        int warmup = 20_000;
        int rounds = quick ? 3 : 1;
        List<Variant> variants = List.of(
            new Variant("rdmx-shm", RDMX, "shm", "queue", false),
            new Variant("rdmx-shm-direct", RDMX, "shm", "direct", false),
            new Variant("rdmx-shm-reader", RDMX, "shm", "reader", false),
            new Variant("rdmx-tcp", RDMX, "tcp", "queue", false),
            new Variant("rdmx-tcp-direct", RDMX, "tcp", "direct", false),
            new Variant("ProtobufRpcEngine2", STOCK, "none", "queue", true));
        Report report = new Report("rpc", quick).printResults(false)
            .context("calls per size", calls).context("warm-up", "first half")
            .context("throughput", THREADS + " threads x " + perThread + " calls of 1 KiB")
            .context("server handlers", HANDLERS).context("child java", java)
            .context("rounds", rounds + " per size (mean: the median round's; p50/p99: all rounds' calls)")
            .context("JIT warm-up", warmup + " calls of 1 KiB per payload kind before measuring")
            .context("protocols", "bytes: BytesEcho (protobuf bytes field, OHB's byte-array payload); string: "
                + "TestRpcBase.TestRpcService.echo (hadoop-common test-jar)");
        Map<String, Run> runs = new LinkedHashMap<>();
        for (Variant v : variants) {
            System.out.println("rpc: " + v.name() + " ...");
            runs.put(v.name(), measure(java, cp, v, calls, perThread, warmup, rounds));
        }
        print(runs, variants);
        record(report, runs, variants);
        report.finish(System.out, results);
    }

    private static Run measure(String java, String cp, Variant v, int calls, int perThread, int warmup,
        int rounds) throws Exception {
        List<String> jvm = new ArrayList<>(List.of(java, "-Xms512m", "-Xmx512m",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-Drdmx.leakDetection=disabled"));
        // rdmx's own settings given to this JVM (RDMX_EXTRA_JAVA_OPTS=-Drdmx.channel.idle=spin-park, ...) go to
        // both children; the JDK 23+ flags of this JVM do not (the children are a JDK 17)
        ProcessHandle.current().info().arguments().ifPresent(a -> {
            for (String x : a) {
                if (x.startsWith("-Drdmx.") && !x.startsWith("-D" + JAVA17_PROP)) {
                    jvm.add(x);
                }
            }
        });
        jvm.addAll(List.of("-cp", cp));
        List<String> scmd = new ArrayList<>(jvm);
        scmd.addAll(List.of(RpcBenchServer.class.getName(), v.engine(), v.provider(), Integer.toString(HANDLERS),
            v.dispatch()));
        Process server = new ProcessBuilder(scmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        Process client = null;
        try {
            BufferedReader sin = new BufferedReader(new InputStreamReader(server.getInputStream(),
                StandardCharsets.UTF_8));
            String port = null;
            for (String line; (line = sin.readLine()) != null; ) {
                if (line.startsWith("PORT ")) {
                    port = line.substring(5).trim();
                    break;
                }
            }
            if (port == null) {
                throw new IOException(v.name() + ": the server JVM exited before giving its port (exit "
                    + server.waitFor() + ")");
            }
            StringBuilder sizes = new StringBuilder();
            for (int s : SIZES) {
                sizes.append(sizes.length() == 0 ? "" : ",").append(s);
            }
            List<String> ccmd = new ArrayList<>(jvm);
            ccmd.addAll(List.of(RpcBenchClient.class.getName(), v.engine(), v.provider() + "/" + v.dispatch(), port,
                Integer.toString(calls), sizes.toString(), Integer.toString(THREADS), Integer.toString(perThread),
                Integer.toString(1 << 10), Integer.toString(warmup),
                Integer.toString(rounds)));
            client = new ProcessBuilder(ccmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            Run r = new Run();
            BufferedReader cin = new BufferedReader(new InputStreamReader(client.getInputStream(),
                StandardCharsets.UTF_8));
            OutputStream ack = client.getOutputStream();
            Map<String, ProcStat[]> begin = new LinkedHashMap<>();
            for (String line; (line = cin.readLine()) != null; ) {
                String[] f = line.trim().split(" ");
                if (f[0].equals("MARK")) {
                    ProcStat c = ProcStat.of(client.pid());
                    ProcStat s = ProcStat.of(server.pid());
                    if (f[2].equals("begin")) {
                        begin.put(f[1], new ProcStat[] {c, s});
                    } else {
                        ProcStat[] b = begin.get(f[1]);
                        double cpu = (c.cpuNanos() - b[0].cpuNanos() + s.cpuNanos() - b[1].cpuNanos()) / 1e9;
                        long ctx = c.contextSwitches() - b[0].contextSwitches() + s.contextSwitches()
                            - b[1].contextSwitches();
                        double n = f[1].startsWith("tput") ? (double) THREADS * perThread
                            : f[1].equals("warmup") ? 0 : calls;
                        if (n > 0) {                // summed over the rounds of a size
                            r.cost.merge(f[1], new double[] {cpu, ctx, n},
                                (x, y) -> new double[] {x[0] + y[0], x[1] + y[1], x[2] + y[2]});
                        }
                    }
                    ack.write('k');
                    ack.flush();
                } else if (f[0].equals("LAT")) {
                    double[] l = new double[5];
                    for (int i = 0; i < 5; i++) {
                        l[i] = Double.parseDouble(f[3 + i]);
                    }
                    r.latency.computeIfAbsent(f[1], k -> new LinkedHashMap<>()).put(Integer.parseInt(f[2]), l);
                    System.out.printf(Locale.ROOT, "  %-20s %-6s %7s  mean %9.1f us (rounds %.1f-%.1f)  p50 %9.1f"
                        + "  p99 %9.1f%n", v.name(), f[1], size(Integer.parseInt(f[2])), l[0], l[3], l[4], l[1], l[2]);
                } else if (f[0].equals("TPUT")) {
                    r.tput.put(f[1], Double.parseDouble(f[4]));
                    System.out.printf(Locale.ROOT, "  %-20s %-6s throughput %d threads x 1 KiB: %.0f calls/s%n",
                        v.name(), f[1], THREADS, r.tput.get(f[1]));
                } else {
                    System.out.println("  client: " + line);
                }
            }
            int exit = client.waitFor();
            boolean all = r.tput.size() == KINDS.length && r.latency.size() == KINDS.length
                && r.latency.values().stream().allMatch(m -> m.size() == SIZES.length);
            if (exit != 0 || !all) {
                throw new IOException(v.name() + ": the client JVM failed (exit " + exit + ")");
            }
            return r;
        } finally {
            server.getOutputStream().close();
            if (!server.waitFor(20, TimeUnit.SECONDS)) {
                server.destroyForcibly();
            }
            if (client != null && client.isAlive()) {
                client.destroyForcibly();
            }
        }
    }

    static String size(int b) {
        return b >= 1 << 10 ? (b >> 10) + " KiB" : b + " B";
    }

    private static void print(Map<String, Run> runs, List<Variant> variants) {
        for (String kind : KINDS) {
            System.out.println();
            System.out.println(kind.equals("bytes") ? "bytes payload (protobuf bytes field: OHB's byte arrays; the"
                + " targets' table), latency us:" : "string payload (Hadoop's TestRpcService: protobuf string, UTF-8"
                + " encoded and validated on both sides), latency us:");
            System.out.printf(Locale.ROOT, "%-9s", "payload");
            for (Variant v : variants) {
                System.out.printf(Locale.ROOT, " %28s", v.name() + " mean/p50/p99");
            }
            System.out.println();
            for (int s : SIZES) {
                System.out.printf(Locale.ROOT, "%-9s", size(s));
                for (Variant v : variants) {
                    double[] l = runs.get(v.name()).latency.get(kind).get(s);
                    System.out.printf(Locale.ROOT, " %28s", String.format(Locale.ROOT, "%.0f / %.0f / %.0f", l[0],
                        l[1], l[2]));
                }
                System.out.println();
            }
            System.out.printf(Locale.ROOT, "%-9s", "tput");
            for (Variant v : variants) {
                System.out.printf(Locale.ROOT, " %28s", String.format(Locale.ROOT, "%.0f calls/s",
                    runs.get(v.name()).tput.get(kind)));
            }
            System.out.println();
        }
        System.out.println();
        System.out.println("CPU seconds and context switches per 1000 calls, client + server processes:");
        for (Variant v : variants) {
            Run r = runs.get(v.name());
            StringBuilder sb = new StringBuilder();
            for (Map.Entry<String, double[]> e : r.cost.entrySet()) {
                double[] c = e.getValue();
                sb.append(String.format(Locale.ROOT, " %s %.3fs/%.0f", e.getKey(), c[0] / c[2] * 1000,
                    c[1] / c[2] * 1000));
            }
            System.out.printf(Locale.ROOT, "  %-20s%s%n", v.name(), sb);
        }
    }

    private static void record(Report report, Map<String, Run> runs, List<Variant> variants) {
        Run stock = runs.get("ProtobufRpcEngine2");
        for (Variant v : variants) {
            Run r = runs.get(v.name());
            for (String kind : KINDS) {
                for (int s : SIZES) {
                    double[] l = r.latency.get(kind).get(s);
                    report.add(new Report.Result(kind + " latency mean " + size(s), v.name(), l[0], 0, "us"));
                    report.add(new Report.Result(kind + " latency p50 " + size(s), v.name(), l[1], 0, "us"));
                    report.add(new Report.Result(kind + " latency p99 " + size(s), v.name(), l[2], 0, "us"));
                }
                report.add(new Report.Result(kind + " throughput 6 threads 1 KiB", v.name(), r.tput.get(kind), 0,
                    "calls/s"));
            }
            for (Map.Entry<String, double[]> e : r.cost.entrySet()) {
                double[] c = e.getValue();
                report.add(new Report.Result("cpu per 1000 calls " + e.getKey(), v.name(), c[0] / c[2] * 1000, 0,
                    "s"));
                report.add(new Report.Result("context switches per 1000 calls " + e.getKey(), v.name(),
                    c[1] / c[2] * 1000, 0, "switches"));
            }
        }
        for (Variant v : variants) {
            if (v.baseline()) {
                continue;
            }
            Run r = runs.get(v.name());
            for (String kind : KINDS) {
                boolean targets = kind.equals("bytes");      // the targets are OHB's, a bytes payload
                Map<Integer, double[]> lat = r.latency.get(kind);
                Map<Integer, double[]> base = stock.latency.get(kind);
                for (int s : SIZES) {
                    String target = !targets ? null : s == 1 << 10 ? ">= 2x lower mean latency" : s == 512 << 10
                        ? ">= 2.73x lower mean latency" : null;
                    report.lowerIsBetter(v.name() + " vs ProtobufRpcEngine2: " + kind + " mean latency " + size(s),
                        lat.get(s)[0], base.get(s)[0], "us", target);
                }
                for (int s : new int[] {1 << 10, 512 << 10}) {
                    report.lowerIsBetter(v.name() + " vs ProtobufRpcEngine2: " + kind + " p50 latency " + size(s),
                        lat.get(s)[1], base.get(s)[1], "us", null);
                }
                report.higherIsBetter(v.name() + " vs ProtobufRpcEngine2: " + kind + " throughput 6 threads 1 KiB",
                    r.tput.get(kind), stock.tput.get(kind), "calls/s", targets ? ">= 2x" : null);
                double[] c = r.cost.get("tput-" + kind);
                double[] b = stock.cost.get("tput-" + kind);
                report.lowerIsBetter(v.name() + " vs ProtobufRpcEngine2: " + kind + " CPU per call, throughput",
                    c[0] / c[2] * 1e6, b[0] / b[2] * 1e6, "us", null);
                report.lowerIsBetter(v.name() + " vs ProtobufRpcEngine2: " + kind
                    + " context switches per call, throughput", c[1] / c[2], b[1] / b[2], "switches", null);
            }
        }
        for (String kind : KINDS) {
            for (int s : new int[] {1, 1 << 10, 64 << 10, 512 << 10}) {
                List<Report.Bar> bars = new ArrayList<>();
                for (Variant v : variants) {
                    bars.add(new Report.Bar(v.name(), runs.get(v.name()).latency.get(kind).get(s)[0], v.baseline()));
                }
                report.panel(new Report.Panel(kind + " mean latency " + size(s), "us", bars));
            }
            List<Report.Bar> bars = new ArrayList<>();
            for (Variant v : variants) {
                bars.add(new Report.Bar(v.name(), runs.get(v.name()).tput.get(kind), v.baseline()));
            }
            report.panel(new Report.Panel(kind + " throughput 6 threads x 1 KiB", "calls/s", bars));
        }
    }
}
