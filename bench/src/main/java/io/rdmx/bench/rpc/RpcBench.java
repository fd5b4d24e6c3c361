package io.rdmx.bench.rpc;

import io.rdmx.bench.channel.ProcStat;
import io.rdmx.bench.report.Hosts;
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
 * (OHB's byte arrays: {@link BytesEcho}; the issue's targets) and a {@code string} payload (Hadoop's test
 * protocol), with {@code RdmxRpcEngine} (over {@code shm} and over {@code tcp}, each with the server's
 * {@code queue} and {@code direct} dispatch, and over {@code shm} with {@code reader} dispatch) against Hadoop's
 * {@code ProtobufRpcEngine2}, client and server in separate JVMs, all in the same run. The protocols are
 * {@link BytesEcho} and Hadoop's own {@code TestRpcBase.TestRpcService} (hadoop-common test-jar), both served by
 * one {@code RPC.Server}: same messages, same server code, only {@code rpc.engine.<protocol>} differs. Each client
 * JVM first makes 20 000 calls of JIT warm-up per payload kind. CPU seconds and context switches of both processes
 * are sampled from {@code /proc} at the edges of each phase.
 *
 * <p>Kerberos rows (the bytes payload; {@code -Drdmx.bench.rpc.kerberos=false} leaves them out): both engines again
 * with {@code hadoop.security.authentication=kerberos} and {@code hadoop.rpc.protection} {@code authentication}
 * and {@code privacy}, against a KDC the benchmark starts ({@link RpcKdc}); server and client log in from keytabs.
 * Each secure rdmx row is compared with the stock engine of the same protection and with rdmx without security,
 * measured right before it. Every client JVM of an rdmx row must have made all its calls over rdmx (Kerberos
 * that failed over rdmx would fall back to TCP and measure the stock path), every stock one none.
 *
 * <p>Hadoop 3.4 does not run on JDK 23+, so the child JVMs run on the JDK 17 given by
 * {@code -Drdmx.bench.java17} (scripts/rdmx sets it), with {@code benchmarks.jar} plus the Hadoop class path the
 * build wrote to {@code bench/target/hadoop.classpath}.
 */
public final class RpcBench {
    /** System property: the {@code java} of a JDK 17 for the Hadoop JVMs. */
    public static final String JAVA17_PROP = "rdmx.bench.java17";
    static final String PROTOCOL_KEY = "rpc.engine.org.apache.hadoop.ipc.TestRpcBase$TestRpcService";
    /** The server principal key both protocols' {@code @KerberosInfo} name (TestRpcService's own). */
    static final String SERVER_PRINCIPAL_KEY = "test.ipc.server.principal";
    /** System property: {@code false} leaves the Kerberos rows out. */
    static final String KERBEROS_PROP = "rdmx.bench.rpc.kerberos";
    /** The payload kinds of the Kerberos rows. */
    static final String[] SECURE_KINDS = {"bytes"};
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

    /**
     * One engine under test.
     *
     * @param protection {@code hadoop.rpc.protection} under Kerberos, or null: simple authentication
     */
    record Variant(String name, String engine, String provider, String dispatch, boolean baseline,
        String protection) {
        Variant(String name, String engine, String provider, String dispatch, boolean baseline) {
            this(name, engine, provider, dispatch, baseline, null);
        }

        String[] kinds() {
            return protection == null ? KINDS : SECURE_KINDS;
        }

        /** @return the stock engine's row of the same security */
        String stock() {
            // across hosts: the stock row of the same link (the name's "@link")
            String link = name.contains("@") ? name.substring(name.indexOf('@')) : "";
            return (protection == null ? "ProtobufRpcEngine2" : "ProtobufRpcEngine2-krb-" + brief(protection)) + link;
        }

        static String brief(String protection) {
            return protection.equals("authentication") ? "auth" : protection;
        }
    }

    /** The KDC's realm, its krb5.conf and the keytabs of the server's and the caller's principals. */
    record Kdc(String realm, String krb5conf, String serverKeytab, String clientKeytab) {
        String server() {
            return RpcKdc.SERVER + "@" + realm;
        }

        String client() {
            return RpcKdc.CLIENT + "@" + realm;
        }
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
     * Kerberos with a protection, on a configuration of {@link #conf}.
     *
     * @param c the configuration
     * @param protection {@code hadoop.rpc.protection}
     * @param serverPrincipal the server's principal with its realm
     * @return {@code c}
     */
    static Configuration kerberos(Configuration c, String protection, String serverPrincipal) {
        c.set("hadoop.security.authentication", "kerberos");
        c.set("hadoop.rpc.protection", protection);
        c.set(SERVER_PRINCIPAL_KEY, serverPrincipal);
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
        String cp = childClasspath();
        int calls = quick ? 2_000 : 20_000;
        int perThread = quick ? 2_000 : 20_000;
        int warmup = 20_000;
        int rounds = quick ? 3 : 1;
        boolean kerberos = Boolean.parseBoolean(System.getProperty(KERBEROS_PROP, "true"));
        List<Variant> variants = new ArrayList<>();
        variants.add(new Variant("rdmx-shm", RDMX, "shm", "queue", false));
        if (kerberos) {          // right after rdmx-shm: the cost of security is measured at the same moment
            for (String p : new String[] {"authentication", "privacy"}) {
                variants.add(new Variant("rdmx-shm-krb-" + Variant.brief(p), RDMX, "shm", "queue", false, p));
            }
        }
        variants.addAll(List.of(
            new Variant("rdmx-shm-direct", RDMX, "shm", "direct", false),
            new Variant("rdmx-shm-reader", RDMX, "shm", "reader", false),
            new Variant("rdmx-tcp", RDMX, "tcp", "queue", false),
            new Variant("rdmx-tcp-direct", RDMX, "tcp", "direct", false),
            new Variant("ProtobufRpcEngine2", STOCK, "none", "queue", true)));
        if (kerberos) {
            for (String p : new String[] {"authentication", "privacy"}) {
                variants.add(new Variant("ProtobufRpcEngine2-krb-" + Variant.brief(p), STOCK, "none", "queue", true,
                    p));
            }
        }
        Report report = new Report("rpc", quick).printResults(false)
            .context("calls per size", calls).context("warm-up", "first half")
            .context("throughput", THREADS + " threads x " + perThread + " calls of 1 KiB")
            .context("server handlers", HANDLERS).context("child java", java)
            .context("rounds", rounds + " per size (mean: the median round's; p50/p99: all rounds' calls)")
            .context("JIT warm-up", warmup + " calls of 1 KiB per payload kind before measuring")
            .context("protocols", "bytes: BytesEcho (protobuf bytes field, OHB's byte-array payload); string: "
                + "TestRpcBase.TestRpcService.echo (hadoop-common test-jar)");
        if (kerberos) {
            report.context("kerberos", "MiniKdc (Apache Kerby) in a JVM of its own; server " + RpcKdc.SERVER
                + ", caller " + RpcKdc.CLIENT + ", both logged in from keytabs; hadoop.rpc.protection authentication"
                + " (SASL GSSAPI at connection setup) and privacy (every call and answer wrapped: auth-conf); "
                + String.join(",", SECURE_KINDS) + " payload");
        }
        Map<String, Run> runs = new LinkedHashMap<>();
        Process kdcProcess = null;
        try {
            Kdc kdc = null;
            if (kerberos) {
                kdcProcess = startKdc(java, cp);
                kdc = readKdc(kdcProcess);
            }
            for (Variant v : variants) {
                System.out.println("rpc: " + v.name() + " ...");
                runs.put(v.name(), measure(java, cp, v, calls, perThread, warmup, rounds, kdc));
            }
        } finally {
            if (kdcProcess != null) {
                kdcProcess.getOutputStream().close();
                if (!kdcProcess.waitFor(20, TimeUnit.SECONDS)) {
                    kdcProcess.destroyForcibly();
                }
            }
        }
        print(runs, variants);
        record(report, runs, variants);
        report.finish(System.out, results);
    }

    /**
     * {@code rdmx bench rpc --hosts}: the server JVM in host 1, the client JVM in host 2 (network namespaces of
     * scripts/hosts.sh), unshaped and shaped to {@value Hosts#SHAPED_RATE}: RdmxRpcEngine with provider {@code auto}
     * (the client says which provider it found the server's calls over) against ProtobufRpcEngine2 on the same link,
     * without Kerberos. Writes {@code rpc-hosts.json}.
     *
     * @param quick fewer calls
     * @param results where the report goes
     * @throws Exception on failure
     */
    public static void runHosts(boolean quick, Path results) throws Exception {
        String java = System.getProperty(JAVA17_PROP);
        if (java == null || java.isBlank()) {
            throw new IllegalStateException("bench rpc needs a JDK 17 for Hadoop 3.4: set -D" + JAVA17_PROP
                + "=<jdk17>/bin/java");
        }
        String cp = childClasspath();
        int calls = quick ? 2_000 : 20_000;
        int perThread = quick ? 2_000 : 20_000;
        int warmup = 20_000;
        int rounds = quick ? 3 : 1;
        Report report = new Report("rpc-hosts", quick).printResults(false)
            .context("hosts", "server JVM in host 1, client JVM in host 2 (network namespaces, scripts/hosts.sh)")
            .context("links", "unshaped veth pairs, and tc tbf at " + Hosts.SHAPED_RATE + " on each host's egress")
            .context("calls per size", calls).context("warm-up", "first half")
            .context("throughput", THREADS + " threads x " + perThread + " calls of 1 KiB")
            .context("server handlers", HANDLERS).context("child java", java).context("rounds", rounds)
            .context("kerberos", "none (simple authentication)");
        List<Variant> variants = new ArrayList<>();
        Map<String, Run> runs = new LinkedHashMap<>();
        for (String rate : List.of("", Hosts.SHAPED_RATE)) {
            Hosts.up(2, rate);
            try {
                String link = "@" + Hosts.link();
                for (Variant v : List.of(new Variant("rdmx-auto" + link, RDMX, "auto", "queue", false),
                    new Variant("rdmx-auto-direct" + link, RDMX, "auto", "direct", false),
                    new Variant("ProtobufRpcEngine2" + link, STOCK, "none", "queue", true))) {
                    System.out.println("rpc: " + v.name() + " ...");
                    variants.add(v);
                    runs.put(v.name(), measure(java, cp, v, calls, perThread, warmup, rounds, null));
                }
            } finally {
                Hosts.down();
            }
        }
        print(runs, variants);
        record(report, runs, variants);
        report.finish(System.out, results);
    }

    private static Process startKdc(String java, String cp) throws IOException {
        Path dir = Paths.get(System.getProperty("java.io.tmpdir"));
        return new ProcessBuilder(java, "-Xmx256m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", cp,
            RpcKdc.class.getName(), dir.toString()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    }

    private static Kdc readKdc(Process p) throws IOException, InterruptedException {
        BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            if (line.startsWith("KDC ")) {
                String[] f = line.split(" ");
                return new Kdc(f[1], f[2], f[3], f[4]);
            }
        }
        throw new IOException("the KDC's JVM (" + RpcKdc.class.getName() + ") exited before giving its realm (exit "
            + p.waitFor() + ")");
    }

    private static Run measure(String java, String cp, Variant v, int calls, int perThread, int warmup,
        int rounds, Kdc kdc) throws Exception {
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
        if (v.protection() != null) {
            jvm.add("-Djava.security.krb5.conf=" + kdc.krb5conf());
        }
        jvm.addAll(List.of("-cp", cp));
        List<String> scmd = new ArrayList<>(Hosts.prefix(1));
        scmd.addAll(jvm);
        scmd.addAll(List.of(RpcBenchServer.class.getName(), v.engine(), v.provider(), Integer.toString(HANDLERS),
            v.dispatch()));
        if (v.protection() != null) {
            scmd.addAll(List.of(v.protection(), kdc.server(), kdc.serverKeytab()));
        }
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
            List<String> ccmd = new ArrayList<>(Hosts.prefix(2));
            ccmd.addAll(jvm);
            if (Hosts.enabled()) {
                // the server's host; the client says which rdmx provider it found the calls over
                ccmd.add(ccmd.indexOf("-cp"), "-D" + RpcBenchClient.SERVER_PROP + "=" + Hosts.address(1));
                ccmd.add(ccmd.indexOf("-cp"), "-Dorg.slf4j.simpleLogger.log.io.rdmx.rpc.hadoop.Endpoints=info");
            }
            ccmd.addAll(List.of(RpcBenchClient.class.getName(), v.engine(), v.provider() + "/" + v.dispatch(), port,
                Integer.toString(calls), sizes.toString(), Integer.toString(THREADS), Integer.toString(perThread),
                Integer.toString(1 << 10), Integer.toString(warmup),
                Integer.toString(rounds), String.join(",", v.kinds())));
            if (v.protection() != null) {
                ccmd.addAll(List.of(v.protection(), kdc.server(), kdc.client(), kdc.clientKeytab()));
            }
            client = new ProcessBuilder(ccmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            Run r = new Run();
            BufferedReader cin = new BufferedReader(new InputStreamReader(client.getInputStream(),
                StandardCharsets.UTF_8));
            OutputStream ack = client.getOutputStream();
            Map<String, ProcStat[]> begin = new LinkedHashMap<>();
            long[] paths = null;                                    // calls over rdmx, over Hadoop's TCP client
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
                } else if (f[0].equals("PATHS")) {
                    paths = new long[] {Long.parseLong(f[1]), Long.parseLong(f[2])};
                } else if (f[0].equals("TPUT")) {
                    r.tput.put(f[1], Double.parseDouble(f[4]));
                    System.out.printf(Locale.ROOT, "  %-20s %-6s throughput %d threads x 1 KiB: %.0f calls/s%n",
                        v.name(), f[1], THREADS, r.tput.get(f[1]));
                } else {
                    System.out.println("  client: " + line);
                }
            }
            int exit = client.waitFor();
            int kinds = v.kinds().length;
            boolean all = r.tput.size() == kinds && r.latency.size() == kinds
                && r.latency.values().stream().allMatch(m -> m.size() == SIZES.length);
            if (exit != 0 || !all || paths == null) {
                throw new IOException(v.name() + ": the client JVM failed (exit " + exit + ")");
            }
            // a row measures its engine's path only: an rdmx proxy that fell back to TCP (Kerberos refused over
            // rdmx, no listener found) would measure Hadoop's TCP client under rdmx's name
            long measured = (long) kinds * (rounds * (long) calls * SIZES.length + (long) THREADS * perThread);
            boolean overRdmx = v.engine().equals(RDMX);
            if (overRdmx ? paths[1] != 0 || paths[0] < measured : paths[0] != 0) {
                throw new IOException(v.name() + ": the client made " + paths[0] + " calls over rdmx and " + paths[1]
                    + " over Hadoop's TCP client; expected " + (overRdmx ? "at least " + measured + " and 0"
                    : "0 over rdmx"));
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
        List<Variant> plain = variants.stream().filter(v -> v.protection() == null).toList();
        for (String kind : KINDS) {
            System.out.println();
            System.out.println(kind.equals("bytes") ? "bytes payload (protobuf bytes field: OHB's byte arrays; the"
                + " targets' table), latency us:" : "string payload (Hadoop's TestRpcService: protobuf string, UTF-8"
                + " encoded and validated on both sides), latency us:");
            table(runs, plain, kind);
        }
        if (plain.size() < variants.size()) {
            // the secure rows, with the plain rdmx-shm and stock rows they are compared with
            List<Variant> secure = variants.stream().filter(v -> v.protection() != null
                || v.name().equals("rdmx-shm") || v.name().equals("ProtobufRpcEngine2")).toList();
            for (String kind : SECURE_KINDS) {
                System.out.println();
                System.out.println("Kerberos (krb-auth: hadoop.rpc.protection=authentication, krb-privacy: privacy),"
                    + " " + kind + " payload, beside the rows without security, latency us:");
                table(runs, secure, kind);
            }
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
            System.out.printf(Locale.ROOT, "  %-30s%s%n", v.name(), sb);
        }
    }

    private static void table(Map<String, Run> runs, List<Variant> variants, String kind) {
        System.out.printf(Locale.ROOT, "%-9s", "payload");
        for (Variant v : variants) {
            System.out.printf(Locale.ROOT, " %" + width(v) + "s", v.name() + " mean/p50/p99");
        }
        System.out.println();
        for (int s : SIZES) {
            System.out.printf(Locale.ROOT, "%-9s", size(s));
            for (Variant v : variants) {
                double[] l = runs.get(v.name()).latency.get(kind).get(s);
                System.out.printf(Locale.ROOT, " %" + width(v) + "s", String.format(Locale.ROOT, "%.0f / %.0f / %.0f",
                    l[0], l[1], l[2]));
            }
            System.out.println();
        }
        System.out.printf(Locale.ROOT, "%-9s", "tput");
        for (Variant v : variants) {
            System.out.printf(Locale.ROOT, " %" + width(v) + "s", String.format(Locale.ROOT, "%.0f calls/s",
                runs.get(v.name()).tput.get(kind)));
        }
        System.out.println();
    }

    /** @return the width of a variant's column: its heading */
    private static int width(Variant v) {
        return Math.max(22, v.name().length() + " mean/p50/p99".length());
    }

    private static void record(Report report, Map<String, Run> runs, List<Variant> variants) {
        for (Variant v : variants) {
            Run r = runs.get(v.name());
            for (String kind : v.kinds()) {
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
            Run stock = runs.get(v.stock());
            boolean secure = v.protection() != null;
            for (String kind : v.kinds()) {
                boolean targets = kind.equals("bytes");      // the issue's targets are OHB's, a bytes payload
                Map<Integer, double[]> lat = r.latency.get(kind);
                Map<Integer, double[]> base = stock.latency.get(kind);
                String vs = v.name() + " vs " + v.stock() + ": " + kind;
                for (int s : SIZES) {
                    // with security the target is the lead at 1 KiB (issue 38: as without security)
                    String target = !targets ? null : s == 1 << 10 ? ">= 2x lower mean latency" : s == 512 << 10
                        && !secure ? ">= 2.73x lower mean latency" : null;
                    report.lowerIsBetter(vs + " mean latency " + size(s), lat.get(s)[0], base.get(s)[0], "us", target);
                }
                for (int s : new int[] {1 << 10, 512 << 10}) {
                    report.lowerIsBetter(vs + " p50 latency " + size(s), lat.get(s)[1], base.get(s)[1], "us", null);
                }
                report.higherIsBetter(vs + " throughput 6 threads 1 KiB", r.tput.get(kind), stock.tput.get(kind),
                    "calls/s", targets && !secure ? ">= 2x" : null);
                double[] c = r.cost.get("tput-" + kind);
                double[] b = stock.cost.get("tput-" + kind);
                report.lowerIsBetter(vs + " CPU per call, throughput", c[0] / c[2] * 1e6, b[0] / b[2] * 1e6, "us",
                    null);
                report.lowerIsBetter(vs + " context switches per call, throughput", c[1] / c[2], b[1] / b[2],
                    "switches", null);
            }
        }
        // what security costs rdmx: each secure rdmx row against rdmx-shm, measured just before it (issue 38: at
        // most 10%, i.e. at least 1/1.1 = 0.91x the latency ratio and 0.90x the throughput)
        Run plain = runs.get("rdmx-shm");
        for (Variant v : variants) {
            if (v.baseline() || v.protection() == null) {
                continue;
            }
            Run r = runs.get(v.name());
            for (String kind : v.kinds()) {
                String vs = v.name() + " vs rdmx-shm: " + kind;
                for (int s : SIZES) {
                    report.lowerIsBetter(vs + " mean latency " + size(s), r.latency.get(kind).get(s)[0],
                        plain.latency.get(kind).get(s)[0], "us", s == 1 << 10 ? ">= 0.91x (costs at most 10%)" : null);
                }
                report.higherIsBetter(vs + " throughput 6 threads 1 KiB", r.tput.get(kind), plain.tput.get(kind),
                    "calls/s", ">= 0.90x (costs at most 10%)");
                double[] c = r.cost.get("tput-" + kind);
                double[] b = plain.cost.get("tput-" + kind);
                report.lowerIsBetter(vs + " CPU per call, throughput", c[0] / c[2] * 1e6, b[0] / b[2] * 1e6, "us",
                    null);
            }
        }
        List<Variant> plainRows = variants.stream().filter(v -> v.protection() == null).toList();
        for (String kind : KINDS) {
            for (int s : new int[] {1, 1 << 10, 64 << 10, 512 << 10}) {
                List<Report.Bar> bars = new ArrayList<>();
                for (Variant v : plainRows) {
                    bars.add(new Report.Bar(v.name(), runs.get(v.name()).latency.get(kind).get(s)[0], v.baseline()));
                }
                report.panel(new Report.Panel(kind + " mean latency " + size(s), "us", bars));
            }
            List<Report.Bar> bars = new ArrayList<>();
            for (Variant v : plainRows) {
                bars.add(new Report.Bar(v.name(), runs.get(v.name()).tput.get(kind), v.baseline()));
            }
            report.panel(new Report.Panel(kind + " throughput 6 threads x 1 KiB", "calls/s", bars));
        }
        if (plainRows.size() < variants.size()) {
            List<Variant> rows = variants.stream().filter(v -> v.protection() != null
                || v.name().equals("rdmx-shm") || v.name().equals("ProtobufRpcEngine2")).toList();
            for (String kind : SECURE_KINDS) {
                List<Report.Bar> lat = new ArrayList<>();
                List<Report.Bar> tput = new ArrayList<>();
                for (Variant v : rows) {
                    lat.add(new Report.Bar(v.name(), runs.get(v.name()).latency.get(kind).get(1 << 10)[0],
                        v.baseline()));
                    tput.add(new Report.Bar(v.name(), runs.get(v.name()).tput.get(kind), v.baseline()));
                }
                report.panel(new Report.Panel("Kerberos: " + kind + " mean latency 1 KiB", "us", lat));
                report.panel(new Report.Panel("Kerberos: " + kind + " throughput 6 threads x 1 KiB", "calls/s",
                    tput));
            }
        }
    }

    /** @return this JVM's class path and Hadoop's (the file the bench module's build writes), for the child JVMs */
    private static String childClasspath() throws java.io.IOException {
        Path cpFile = Paths.get(System.getProperty("rdmx.bench.hadoopClasspath", "bench/target/hadoop.classpath"));
        if (!Files.isRegularFile(cpFile)) {
            throw new IllegalStateException("no Hadoop class path at " + cpFile.toAbsolutePath()
                + " (the bench module's build writes it: mvn -pl bench package)");
        }
        return System.getProperty("java.class.path") + File.pathSeparator
            + Files.readString(cpFile, StandardCharsets.UTF_8).trim();
    }
}
