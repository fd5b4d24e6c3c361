package io.rdmx.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.rdmx.bench.transport.TransportBench;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.List;

/** {@code scripts/rdmx bench <name> [--quick]}: runs a benchmark with its baselines and writes its report. */
public final class BenchMain {
    /** System property: where reports are written (default {@code bench/results}). */
    public static final String RESULTS_PROP = "rdmx.bench.results";

    private BenchMain() {
    }

    /** @return where results go: {@value #RESULTS_PROP}, or {@code bench/results} */
    public static Path resultsDir() {
        return Paths.get(System.getProperty(RESULTS_PROP, "bench/results"));
    }

    /**
     * Writes a results document as indented JSON.
     *
     * @param dir the results directory (created if absent)
     * @param name the file name without {@code .json}
     * @param doc the document
     * @return the file written
     * @throws IOException on failure
     */
    public static Path writeJson(Path dir, String name, Object doc) throws IOException {
        Files.createDirectories(dir);
        Path json = dir.resolve(name + ".json");
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(json.toFile(), doc);
        return json;
    }

    /**
     * @param args benchmark name, then options
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            usage();
            return;
        }
        List<String> rest = Arrays.asList(args).subList(1, args.length);
        boolean quick = rest.contains("--quick");
        Path results = resultsDir();
        if (rest.contains("--hosts")) {
            hosts(args[0], quick, results);
            return;
        }
        switch (args[0]) {
            case "transport":
                TransportBench.run(quick, results);
                break;
            case "shuffle":
                io.rdmx.bench.shuffle.ShuffleBench.run(quick, results);
                break;
            case "affinity":
                io.rdmx.bench.affinity.AffinityBench.run(quick, results);
                break;
            case "queries":
                io.rdmx.bench.queries.QueriesBench.run(quick, results);
                break;
            case "channel":
                io.rdmx.bench.channel.ChannelBench.run(quick, results);
                break;
            case "rpc":
                io.rdmx.bench.rpc.RpcBench.run(quick, results);
                break;
            case "spark-report":
                io.rdmx.bench.spark.SparkReport.run(Paths.get(rest.get(0)), quick, results);
                break;
            case "verbs-report":
                VerbsReport.run(Paths.get(rest.get(0)), results);
                break;
            default:
                usage();
                System.exit(2);
        }
    }

    /** {@code --hosts}: every process of the benchmark in a host of its own (network namespaces, root). */
    private static void hosts(String name, boolean quick, Path results) throws Exception {
        if (System.getProperty(io.rdmx.bench.report.Hosts.SCRIPT_PROP) == null) {
            System.setProperty(io.rdmx.bench.report.Hosts.SCRIPT_PROP, "scripts/hosts.sh");
        }
        // the namespaces go with this process, however it ends (a SIGKILL leaves them to the next up or down)
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                io.rdmx.bench.report.Hosts.down();
            } catch (IOException | InterruptedException e) {
                System.err.println("hosts down failed: " + e.getMessage());
            }
        }, "hosts-down"));
        switch (name) {
            case "shuffle":
                io.rdmx.bench.shuffle.ShuffleBench.runHosts(quick, results);
                break;
            case "rpc":
                io.rdmx.bench.rpc.RpcBench.runHosts(quick, results);
                break;
            case "channel":
                io.rdmx.bench.channel.ChannelBench.runHosts(quick, results);
                break;
            case "queries":
                io.rdmx.bench.queries.QueriesBench.runHosts(quick, results);
                break;
            default:
                System.err.println("rdmx bench " + name + " has no --hosts mode (shuffle, channel, rpc, queries do)");
                System.exit(2);
        }
    }

    private static void usage() {
        System.err.println("usage: rdmx bench <name> [--quick] [--hosts]"
            + "\n  names: transport, channel, shuffle, queries, affinity, rpc, spark"
            + "\n  --hosts (shuffle, channel, rpc, queries): each process in a network namespace (scripts/hosts.sh)"
            + "\n  (spark: scripts/rdmx runs spark/scripts/bench-spark.sh, which ends with 'spark-report <dir>')"
            + "\n  (verbs: scripts/softroce-test.sh measures in a Soft-RoCE VM, then runs 'verbs-report <figures>')");
    }
}
