package io.rdmx.bench.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rdmx.bench.report.Report;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code benchmarks.jar spark-report <dir> [--quick]}: turns the runs of {@code spark/scripts/bench-spark.sh}
 * (the OSU HiBD SortBy and GroupBy jobs, Spark's default shuffle and rdmx's in the same run) into
 * {@code spark.json} and {@code spark.svg}. Reads {@code <manager>-<round>.out} (the job's {@code bench {json}}
 * lines: wall time, shuffle stage time, fetch wait, executor CPU of each job) and {@code <manager>-<round>.time}
 * (/usr/bin/time of the whole spark-submit: elapsed, user and system CPU seconds, voluntary and involuntary
 * context switches of driver and executors). With several rounds each figure is the median. With the runs of
 * {@code spark.authenticate=true} ({@code default-auth}, {@code rdmx-auth}; params' {@code managers} names them),
 * also rdmx against the default shuffle both authenticated, and rdmx authenticated against rdmx without it (the
 * cost of authentication; issue 38: at most 10%). Each run's output must name its manager and its
 * {@code authenticate} setting, or the report refuses it.
 */
public final class SparkReport {
    private static final List<String> PLAIN = List.of("default", "rdmx");
    private static final List<String> AUTH = List.of("default-auth", "rdmx-auth");
    /** rdmx with {@code spark.rdmx.fetch=rpc}: every block asked of the serving executor's block server. */
    private static final String RPC = "rdmx-rpc";
    private static final String RDMX_MANAGER = "io.rdmx.spark.RdmxShuffleManager";
    private static final List<String> JOBS = List.of("SortBy", "GroupBy");
    private static final List<String> JOB_METRICS = List.of("wallMs", "shuffleStageMs", "readStageMs",
        "fetchWaitMs", "shuffleWriteMs", "taskGcMs", "executorCpuMs", "executorProcessCpuMs",
        "executorContextSwitches", "servingCpuMs", "servingIdleCpuMs", "remoteBytes", "readFetches", "rpcFetches");

    private SparkReport() {
    }

    /**
     * @param dir the runs' directory
     * @param quick whether it was a quick run
     * @param results where spark.json and spark.svg go
     * @throws IOException if a run's files are missing or malformed
     */
    public static void run(Path dir, boolean quick, Path results) throws IOException {
        ObjectMapper json = new ObjectMapper();
        // manager -> job -> metric -> values over rounds
        Map<String, Map<String, Map<String, List<Double>>>> jobs = new TreeMap<>();
        // manager -> metric -> values over rounds
        Map<String, Map<String, List<Double>>> procs = new TreeMap<>();
        Map<String, String> params = new LinkedHashMap<>();
        for (String line : Files.readAllLines(dir.resolve("params"))) {
            int sp = line.indexOf(' ');
            params.put(line.substring(0, sp), line.substring(sp + 1));
        }
        int rounds = Integer.parseInt(params.get("rounds"));
        List<String> managers = List.of(params.getOrDefault("managers", "default rdmx").split(" "));
        List<String> known = new ArrayList<>(PLAIN);
        known.addAll(AUTH);
        known.add(RPC);
        List<String> extra = managers.stream().filter(m -> !PLAIN.contains(m) && !RPC.equals(m)).toList();
        if (!managers.containsAll(PLAIN) || !known.containsAll(managers) || !extra.isEmpty()
            && !managers.containsAll(AUTH)) {
            throw new IOException("params names the managers " + managers + "; expected " + PLAIN + ", optionally "
                + RPC + " and, with authentication, " + AUTH);
        }
        boolean rpc = managers.contains(RPC);
        boolean auth = managers.containsAll(AUTH);
        for (String m : managers) {
            for (int r = 1; r <= rounds; r++) {
                Path out = dir.resolve(m + "-" + r + ".out");
                boolean any = false;
                for (String line : Files.readAllLines(out)) {
                    if (!line.startsWith("bench ")) {
                        continue;
                    }
                    JsonNode n = json.readTree(line.substring("bench ".length()));
                    for (String k : JOB_METRICS) {
                        if (n.has(k) && n.get(k).asDouble() >= 0) { // -1: an executor was not reached
                            jobs.computeIfAbsent(m, x -> new TreeMap<>()).computeIfAbsent(n.get("job").asText(),
                                x -> new TreeMap<>()).computeIfAbsent(k, x -> new ArrayList<>())
                                .add(n.get(k).asDouble());
                        }
                    }
                    any = true;
                }
                if (!any) {
                    throw new IOException(out + " has no bench lines");
                }
                // the run is what its name says: its shuffle manager and its spark.authenticate
                List<String> lines = Files.readAllLines(out);
                boolean rdmx = lines.stream().anyMatch(l -> l.equals("shuffleManager=" + RDMX_MANAGER));
                boolean authenticated = lines.contains("authenticate=true");
                if (rdmx != m.startsWith("rdmx") || authenticated != m.endsWith("-auth")) {
                    throw new IOException(out + " ran with " + (rdmx ? "rdmx's" : "another") + " shuffle manager and"
                        + " spark.authenticate=" + authenticated + ", not as its name " + m + " says");
                }
                Path time = dir.resolve(m + "-" + r + ".time");
                if (Files.exists(time)) {
                    for (String line : Files.readAllLines(time)) {
                        if (line.startsWith("time ")) {
                            String[] f = line.trim().split("\\s+");
                            Map<String, List<Double>> p = procs.computeIfAbsent(m, x -> new TreeMap<>());
                            p.computeIfAbsent("elapsed s", x -> new ArrayList<>()).add(Double.parseDouble(f[1]));
                            p.computeIfAbsent("cpu s", x -> new ArrayList<>())
                                .add(Double.parseDouble(f[2]) + Double.parseDouble(f[3]));
                            p.computeIfAbsent("context switches", x -> new ArrayList<>())
                                .add(Double.parseDouble(f[4]) + Double.parseDouble(f[5]));
                        }
                    }
                }
            }
        }
        // the machine's load: on a shared machine it moves every figure, the stages rdmx does not touch as well
        // across hosts (bench-spark.sh --hosts) the runs' params name the report and say how the cluster ran
        Report report = new Report(params.getOrDefault("report", "spark"), quick)
            .context("spark", "pyspark 4.2.0 distribution, local-cluster[2,1,1024] (2 executor JVMs, 1 core, 1 GiB)")
            .context("pairs", Long.parseLong(params.get("pairs")))
            .context("partitions", Integer.parseInt(params.get("partitions")))
            .context("rounds", rounds)
            .context("sparkJava", params.getOrDefault("sparkJava", "?"))
            .context("rdmx", "spark.shuffle.manager=io.rdmx.spark.RdmxShuffleManager, spark.rdmx.provider=auto (shm:"
                + " both executors share the host)")
            .context("baseline", "Spark's default sort shuffle (blocks fetched by Netty's block transfer service),"
                + " same run")
            .context("figures", "median of rounds; fetch wait is Spark's shuffle read fetchWaitTime summed over the"
                + " reduce tasks; shuffle stages are the submission-to-completion times of the stages that wrote or"
                + " read shuffle data; executor task CPU is Spark's executorCpuTime of the tasks; executor JVMs CPU and"
                + " context switches are each executor's /proc/self (all its threads, the shuffle's own included)"
                + " before and after the job; spark-submit cpu s and context switches are /usr/bin/time of each"
                + " spark-submit and count only the executors the driver reaped before it exited (not compared);"
                + " serving CPU per GiB fetched is the CPU time of the executors' threads that serve blocks to other"
                + " executors (the JVM's per-thread CPU clocks, ThreadMXBean, read by a small job on each executor"
                + " before and after the job: rdmx's threads of its serving nodes, named blocks-serve-*, i.e. block"
                + " server RPC reader and handlers, channel engine, node I/O threads, READ node; Spark's default's"
                + " Netty block transfer server, shuffle-server-* and shuffle-chunk-fetch-handler*) over the job's"
                + " remote bytes read; 'idle included' counts all of it, the other figure leaves out what the same"
                + " threads use while nothing is fetched (their rate over a 10 s idle window before the jobs, times"
                + " the job's span); rdmx = spark.rdmx.fetch=auto (READ, see readFetches), rdmx-rpc ="
                + " spark.rdmx.fetch=rpc (every block asked of the serving executor's block server)");
        Map<String, String> load = new TreeMap<>();
        params.forEach((k, v) -> {
            if (k.startsWith("load-")) {
                load.put(k.substring("load-".length()), v);
            }
        });
        if (!load.isEmpty()) {
            report.context("loadAverageAtEachStart", load);
        }
        if (params.containsKey("cluster")) {
            report.context("spark", params.get("cluster")).context("rdmx", params.get("rdmxProvider"))
                .context("link", params.get("link"));
        }
        Path loadavg = Path.of("/proc/loadavg");
        if (Files.isReadable(loadavg)) {
            report.context("loadAverageAtReport", Files.readString(loadavg).trim());
        }
        if (auth) {
            report.context("authenticated runs", "default-auth and rdmx-auth: spark.authenticate=true with"
                + " spark.authenticate.secret (a fresh random secret per run of the script, in a 0600 properties"
                + " file); no spark.network.crypto (rdmx's manager refuses it: docs/security.md), same rounds");
        }
        List<Report.Bar> wall = new ArrayList<>();
        List<Report.Bar> stages = new ArrayList<>();
        List<Report.Bar> wait = new ArrayList<>();
        List<Report.Bar> serving = new ArrayList<>();
        for (String job : JOBS) {
            for (String m : managers) {
                Map<String, List<Double>> v = jobs.get(m).get(job);
                for (String k : JOB_METRICS) {
                    if (v.containsKey(k)) {
                        report.add(new Report.Result(job + " " + k.replace("Ms", ""), m, median(v.get(k)), 0,
                            k.endsWith("Ms") ? "ms" : "count"));
                    }
                }
                boolean baseline = m.startsWith("default");
                wall.add(new Report.Bar(job + " " + m, median(v.get("wallMs")), baseline));
                stages.add(new Report.Bar(job + " " + m, median(v.get("shuffleStageMs")), baseline));
                wait.add(new Report.Bar(job + " " + m, median(v.get("fetchWaitMs")), baseline));
                if (servingPerGiB(v, false) >= 0) {
                    report.add(new Report.Result(job + " serving CPU per GiB fetched (idle included)", m,
                        servingPerGiB(v, false), 0, "s/GiB"));
                }
                if (servingPerGiB(v, true) >= 0) {
                    report.add(new Report.Result(job + " serving CPU per GiB fetched", m, servingPerGiB(v, true), 0,
                        "s/GiB"));
                    serving.add(new Report.Bar(job + " " + m, servingPerGiB(v, true), baseline));
                }
            }
            Map<String, List<Double>> r = jobs.get("rdmx").get(job);
            Map<String, List<Double>> d = jobs.get("default").get(job);
            report.lowerIsBetter(job + " job wall time", median(r.get("wallMs")), median(d.get("wallMs")), "ms",
                ">= 1.0x (never slower)");
            report.lowerIsBetter(job + " shuffle stages", median(r.get("shuffleStageMs")),
                median(d.get("shuffleStageMs")), "ms", ">= 1.2x");
            // Spark counts fetch wait in whole milliseconds: a floor of 1 ms keeps the ratio finite
            report.lowerIsBetter(job + " shuffle fetch wait", Math.max(1, median(r.get("fetchWaitMs"))),
                Math.max(1, median(d.get("fetchWaitMs"))), "ms", ">= 2x");
            if (d.containsKey("shuffleWriteMs")) {
                // what moving blocks costs the default's stages: the time its tasks waited for blocks and the
                // time they blocked writing map output. Both at zero would leave the rest of the stages
                // (generating, serializing, compressing, sorting, aggregating: the same code under either
                // manager, set by the application's spark.serializer and spark.shuffle.compress), so a faster
                // way of moving blocks speeds the stages up by at most this.
                double st = median(d.get("shuffleStageMs"));
                double movable = median(d.get("fetchWaitMs")) + median(d.get("shuffleWriteMs"));
                double bound = st / Math.max(1, st - movable);
                report.add(new Report.Result(job + " stage speed-up bound (default with no fetch wait and no"
                    + " write time)", "default", bound, 0, "x"));
                System.out.printf(Locale.ROOT, "  %s: default stages %.0f ms, of which fetch wait %.0f ms and map"
                    + " output write time %.0f ms: moving blocks at no cost at all would make them %.3fx faster%n",
                    job, st, median(d.get("fetchWaitMs")), median(d.get("shuffleWriteMs")), bound);
            }
            report.lowerIsBetter(job + " executor task CPU", median(r.get("executorCpuMs")),
                median(d.get("executorCpuMs")), "ms", null);
            if (r.containsKey("executorProcessCpuMs") && d.containsKey("executorProcessCpuMs")) {
                report.lowerIsBetter(job + " executor JVMs CPU (all threads)", median(r.get("executorProcessCpuMs")),
                    median(d.get("executorProcessCpuMs")), "ms", null);
                report.lowerIsBetter(job + " executor JVMs context switches",
                    median(r.get("executorContextSwitches")), median(d.get("executorContextSwitches")), "count",
                    null);
            }
            servingCpu(report, job, jobs, rpc);
            if (auth) {
                authenticated(report, job, jobs);
            }
        }
        if (procs.keySet().containsAll(managers)) {
            for (String k : List.of("cpu s", "context switches")) {
                for (String m : managers) {
                    report.add(new Report.Result("spark-submit " + k, m, median(procs.get(m).get(k)), 0,
                        k.equals("cpu s") ? "s" : "count"));
                }
            }
        }
        report.panel(new Report.Panel("job wall time, lower is better", "ms", wall));
        report.panel(new Report.Panel("shuffle stages, lower is better", "ms", stages));
        report.panel(new Report.Panel("shuffle fetch wait, lower is better", "ms", wait));
        if (!serving.isEmpty()) {
            report.panel(new Report.Panel("serving executors' CPU per GiB fetched, lower is better", "s/GiB",
                serving));
        }
        report.finish(System.out, results);
    }

    /**
     * The serving executors' CPU seconds per GiB of blocks fetched from them (the CPU time of the threads that serve
     * blocks, summed over the executors, over the job's remote bytes read), or -1 if the run did not measure it.
     *
     * @param v a manager's figures of one job
     * @param aboveIdle whether to leave out what those threads use while nothing is fetched (their wake-ups and
     *                  timers: the run's idle rate, measured before the jobs, times the job's span), so that what
     *                  is left is the cost of serving the blocks
     * @return seconds per GiB, at least 0, or -1
     */
    static double servingPerGiB(Map<String, List<Double>> v, boolean aboveIdle) {
        if (!v.containsKey("servingCpuMs") || !v.containsKey("remoteBytes") || median(v.get("remoteBytes")) <= 0
            || aboveIdle && !v.containsKey("servingIdleCpuMs")) {
            return -1;
        }
        double ms = median(v.get("servingCpuMs")) - (aboveIdle ? median(v.get("servingIdleCpuMs")) : 0);
        return Math.max(0, ms) / 1000 / (median(v.get("remoteBytes")) / (1L << 30));
    }

    /**
     * One job's serving CPU per GiB fetched, side by side: rdmx's READ fetch (the {@code rdmx} runs, whose blocks
     * the fetch counts show were READ) against its RPC fetch ({@code rdmx-rpc}: target at least 5x less) and
     * against Spark's default; the RPC fetch against the default; and the RPC fetch's fetch wait against the
     * default's.
     */
    private static void servingCpu(Report report, String job, Map<String, Map<String, Map<String, List<Double>>>> jobs,
                                   boolean rpc) {
        for (boolean aboveIdle : new boolean[] {true, false}) {
            servingCpu(report, job, jobs, rpc, aboveIdle);
        }
        if (!rpc) {
            return;
        }
        Map<String, List<Double>> r = jobs.get("rdmx").get(job);
        Map<String, List<Double>> d = jobs.get("default").get(job);
        Map<String, List<Double>> p = jobs.get(RPC).get(job);
        report.lowerIsBetter(job + " shuffle fetch wait (RPC fetch vs Spark's default)",
            Math.max(1, median(p.get("fetchWaitMs"))), Math.max(1, median(d.get("fetchWaitMs"))), "ms", null);
        report.lowerIsBetter(job + " shuffle fetch wait (READ vs RPC fetch)", Math.max(1, median(r.get("fetchWaitMs"))),
            Math.max(1, median(p.get("fetchWaitMs"))), "ms", null);
        if (p.containsKey("readFetches") && median(p.get("readFetches")) > 0) {
            throw new IllegalStateException(job + ": the " + RPC + " runs READ " + median(p.get("readFetches"))
                + " blocks: spark.rdmx.fetch=rpc was not in effect");
        }
    }

    private static void servingCpu(Report report, String job, Map<String, Map<String, Map<String, List<Double>>>> jobs,
                                   boolean rpc, boolean aboveIdle) {
        Map<String, List<Double>> r = jobs.get("rdmx").get(job);
        Map<String, List<Double>> d = jobs.get("default").get(job);
        String what = job + " serving CPU per GiB fetched" + (aboveIdle ? "" : ", idle included");
        // a floor of a millisecond per GiB keeps a ratio finite when a side measured no serving CPU at all
        double floor = 0.001;
        double read = servingPerGiB(r, aboveIdle);
        double def = servingPerGiB(d, aboveIdle);
        double viaRpc = rpc ? servingPerGiB(jobs.get(RPC).get(job), aboveIdle) : -1;
        if (aboveIdle && (read == 0 || viaRpc == 0)) {
            // the job's serving CPU did not exceed what the same threads use idle over its span: the cost of
            // serving its blocks is under this measurement's noise (a quick run moves 16 MB per job); a ratio of
            // the floors would be meaningless
            System.out.printf(Locale.ROOT, "  %s: serving CPU above idle is 0 for %s: not compared (too little"
                + " data moved for this measurement; see ServingCpuProbe)%n", job, read == 0 ? "READ" : "RPC fetch");
            return;
        }
        if (read >= 0 && def >= 0) {
            report.lowerIsBetter(what + " (READ vs Spark's default)", Math.max(floor, read), Math.max(floor, def),
                "s/GiB", null);
        }
        if (!rpc) {
            return;
        }
        if (read >= 0 && viaRpc >= 0) {
            report.lowerIsBetter(what + " (READ vs RPC fetch)", Math.max(floor, read), Math.max(floor, viaRpc),
                "s/GiB", aboveIdle ? ">= 5x" : null);
        }
        if (viaRpc >= 0 && def >= 0) {
            report.lowerIsBetter(what + " (RPC fetch vs Spark's default)", Math.max(floor, viaRpc),
                Math.max(floor, def), "s/GiB", null);
        }
    }

    /**
     * The authenticated runs' comparisons of one job: rdmx-auth against default-auth (the targets of the runs
     * without authentication: a secure configuration keeps rdmx's lead), and rdmx-auth against rdmx (what
     * authentication costs rdmx: at most 10%, i.e. a ratio of at least 1/1.1).
     */
    private static void authenticated(Report report, String job, Map<String, Map<String, Map<String,
        List<Double>>>> jobs) {
        Map<String, List<Double>> ra = jobs.get("rdmx-auth").get(job);
        Map<String, List<Double>> da = jobs.get("default-auth").get(job);
        Map<String, List<Double>> r = jobs.get("rdmx").get(job);
        String both = job + " authenticated (rdmx-auth vs default-auth): ";
        report.lowerIsBetter(both + "job wall time", median(ra.get("wallMs")), median(da.get("wallMs")), "ms",
            ">= 1.0x (never slower)");
        report.lowerIsBetter(both + "shuffle stages", median(ra.get("shuffleStageMs")),
            median(da.get("shuffleStageMs")), "ms", ">= 1.2x");
        report.lowerIsBetter(both + "shuffle fetch wait", Math.max(1, median(ra.get("fetchWaitMs"))),
            Math.max(1, median(da.get("fetchWaitMs"))), "ms", ">= 2x");
        report.lowerIsBetter(both + "executor task CPU", median(ra.get("executorCpuMs")),
            median(da.get("executorCpuMs")), "ms", null);
        String cost = job + " cost of authentication (rdmx-auth vs rdmx): ";
        report.lowerIsBetter(cost + "job wall time", median(ra.get("wallMs")), median(r.get("wallMs")), "ms",
            ">= 0.91x (costs at most 10%)");
        report.lowerIsBetter(cost + "shuffle stages", median(ra.get("shuffleStageMs")),
            median(r.get("shuffleStageMs")), "ms", ">= 0.91x (costs at most 10%)");
        report.lowerIsBetter(cost + "executor task CPU", median(ra.get("executorCpuMs")),
            median(r.get("executorCpuMs")), "ms", null);
        if (ra.containsKey("executorProcessCpuMs") && r.containsKey("executorProcessCpuMs")) {
            report.lowerIsBetter(cost + "executor JVMs CPU (all threads)", median(ra.get("executorProcessCpuMs")),
                median(r.get("executorProcessCpuMs")), "ms", null);
        }
    }

    static double median(List<Double> v) {
        if (v == null || v.isEmpty()) {
            throw new IllegalArgumentException("no values");
        }
        double[] a = v.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return a.length % 2 == 1 ? a[a.length / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
    }
}
