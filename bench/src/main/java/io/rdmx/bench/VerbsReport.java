package io.rdmx.bench;

import io.rdmx.bench.report.Report;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns the figures measured inside the Soft-RoCE VM ({@code scripts/softroce-test.sh}: perftest's
 * {@code ib_write_bw}/{@code ib_write_lat} and rdmx's {@code WritePerf} on the same device, in the same run)
 * into {@code verbs.json} and {@code verbs.svg}. The figures file holds {@code KEY VALUE} lines. When it also holds
 * the {@code HOSTS_} figures (the same pair measured between the job's two hosts, each with its own device, across
 * their link), they go into the same file beside the one-device rows: same run, same TCG machine, so the two
 * placements compare.
 */
final class VerbsReport {
    private VerbsReport() {
    }

    /** The figures of the two-host pair, all or none. */
    static final List<String> HOSTS_KEYS = List.of("HOSTS_PERFTEST_WRITE_BW", "HOSTS_PERFTEST_WRITE_LAT",
        "HOSTS_RDMX_WRITE_BW", "HOSTS_RDMX_WRITE_LAT");

    static void run(Path figures, Path results) throws IOException {
        Map<String, Double> v = new HashMap<>();
        for (String line : Files.readAllLines(figures)) {
            String[] kv = line.trim().split("\\s+");
            if (kv.length == 2) {
                v.put(kv[0], Double.parseDouble(kv[1]));
            }
        }
        for (String k : List.of("PERFTEST_WRITE_BW", "PERFTEST_WRITE_LAT", "RDMX_WRITE_BW", "RDMX_WRITE_LAT",
            "BW_SIZE", "LAT_SIZE")) {
            if (!v.containsKey(k)) {
                throw new IllegalArgumentException(figures + " lacks " + k + ": " + v);
            }
        }
        long hostKeys = HOSTS_KEYS.stream().filter(v::containsKey).count();
        if (hostKeys != 0 && hostKeys != HOSTS_KEYS.size()) {
            throw new IllegalArgumentException(figures + " has some of " + HOSTS_KEYS + " but not all: " + v);
        }
        boolean hosts = hostKeys != 0;
        int bwSize = v.get("BW_SIZE").intValue();
        int latSize = v.get("LAT_SIZE").intValue();
        Report r = new Report("verbs", false)
            .context("device", "rxe0 (Soft-RoCE) in a TCG virtual machine, 2 vCPUs")
            .context("baseline", "perftest ib_write_bw / ib_write_lat on the same device in the same VM run");
        if (hosts) {
            r.context("two hosts", "two TCG VMs (2 vCPUs each) joined by one virtual Ethernet link (QEMU socket"
                + " netdev), each with its own rxe device on its end; rdma_cm (perftest -R) through the route; the"
                + " rows and comparisons named 'between two hosts'");
        }
        r.add(new Report.Result("WRITE bandwidth " + bwSize + " B", "rdmx verbs", v.get("RDMX_WRITE_BW"), 0,
            "MB/s"));
        r.add(new Report.Result("WRITE bandwidth " + bwSize + " B", "ib_write_bw", v.get("PERFTEST_WRITE_BW"), 0,
            "MB/s"));
        r.add(new Report.Result("WRITE latency " + latSize + " B", "rdmx verbs", v.get("RDMX_WRITE_LAT"), 0, "us"));
        r.add(new Report.Result("WRITE latency " + latSize + " B", "ib_write_lat", v.get("PERFTEST_WRITE_LAT"), 0,
            "us"));
        r.higherIsBetter("WRITE bandwidth " + bwSize + " B vs ib_write_bw", v.get("RDMX_WRITE_BW"),
            v.get("PERFTEST_WRITE_BW"), "MB/s", ">= 0.9x");
        r.lowerIsBetter("WRITE latency " + latSize + " B vs ib_write_lat", v.get("RDMX_WRITE_LAT"),
            v.get("PERFTEST_WRITE_LAT"), "us", "<= 1.2x the latency");
        if (hosts) {
            String bwName = "WRITE bandwidth " + bwSize + " B between two hosts";
            String latName = "WRITE latency " + latSize + " B between two hosts";
            r.add(new Report.Result(bwName, "rdmx verbs", v.get("HOSTS_RDMX_WRITE_BW"), 0, "MB/s"));
            r.add(new Report.Result(bwName, "ib_write_bw", v.get("HOSTS_PERFTEST_WRITE_BW"), 0, "MB/s"));
            r.add(new Report.Result(latName, "rdmx verbs", v.get("HOSTS_RDMX_WRITE_LAT"), 0, "us"));
            r.add(new Report.Result(latName, "ib_write_lat", v.get("HOSTS_PERFTEST_WRITE_LAT"), 0, "us"));
            r.higherIsBetter(bwName + " vs ib_write_bw", v.get("HOSTS_RDMX_WRITE_BW"),
                v.get("HOSTS_PERFTEST_WRITE_BW"), "MB/s", ">= 0.9x");
            r.lowerIsBetter(latName + " vs ib_write_lat", v.get("HOSTS_RDMX_WRITE_LAT"),
                v.get("HOSTS_PERFTEST_WRITE_LAT"), "us", "<= 1.2x the latency");
        }
        r.panel(new Report.Panel("WRITE bandwidth, " + bwSize + " B, higher is better", "MB/s", List.of(
            new Report.Bar("rdmx verbs", v.get("RDMX_WRITE_BW"), false),
            new Report.Bar("ib_write_bw", v.get("PERFTEST_WRITE_BW"), true))));
        r.panel(new Report.Panel("WRITE latency, " + latSize + " B, lower is better", "us", List.of(
            new Report.Bar("rdmx verbs", v.get("RDMX_WRITE_LAT"), false),
            new Report.Bar("ib_write_lat", v.get("PERFTEST_WRITE_LAT"), true))));
        if (hosts) {
            r.panel(new Report.Panel("WRITE bandwidth between two hosts, " + bwSize + " B, higher is better", "MB/s",
                List.of(new Report.Bar("rdmx verbs", v.get("HOSTS_RDMX_WRITE_BW"), false),
                    new Report.Bar("ib_write_bw", v.get("HOSTS_PERFTEST_WRITE_BW"), true))));
            r.panel(new Report.Panel("WRITE latency between two hosts, " + latSize + " B, lower is better", "us",
                List.of(new Report.Bar("rdmx verbs", v.get("HOSTS_RDMX_WRITE_LAT"), false),
                    new Report.Bar("ib_write_lat", v.get("HOSTS_PERFTEST_WRITE_LAT"), true))));
        }
        r.finish(System.out, results);
    }
}
