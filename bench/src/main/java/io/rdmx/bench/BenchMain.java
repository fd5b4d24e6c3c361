package io.rdmx.bench;

import io.rdmx.bench.transport.TransportBench;
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
        Path results = Paths.get(System.getProperty(RESULTS_PROP, "bench/results"));
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
            case "channel":
                io.rdmx.bench.channel.ChannelBench.run(quick, results);
                break;
            case "verbs-report":
                VerbsReport.run(Paths.get(rest.get(0)), results);
                break;
            default:
                usage();
                System.exit(2);
        }
    }

    private static void usage() {
        System.err.println("usage: rdmx bench <name> [--quick]\n  names: transport, channel, shuffle, affinity"
            + "\n  (verbs: scripts/softroce-test.sh measures in a Soft-RoCE VM, then runs 'verbs-report <figures>')");
    }
}
