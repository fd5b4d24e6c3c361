package io.rdmx.bench.channel;

import io.rdmx.bench.report.Report;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static io.rdmx.bench.channel.ChannelBench.SIZES;
import static io.rdmx.bench.channel.ChannelBench.label;

/**
 * The figures of one {@code rdmx bench channel} run: every round's stream and round-trip measurements by case and
 * record size, their medians over the rounds, the tables printed from them, the comparisons (rdmx case vs
 * baseline case) and the chart, all written to the run's {@link Report}.
 */
final class ChannelFigures {
    /** One stream measurement. */
    record Flow(double msgs, double mibs, double cpuPerGiB, double switchesPerMiB) {
    }

    /** One round-trip measurement, microseconds; cpu: both processes' CPU per round trip (NaN if not given). */
    record Rtt(int samples, double p50, double p99, double cpu) {
    }

    private final Report report;
    private final int rounds;
    private final boolean quick;
    private final Map<String, Flow> flows = new LinkedHashMap<>();
    private final Map<String, Rtt> rtts = new LinkedHashMap<>();
    /** Every round's measurements, by variant/size, before the medians go to {@link #flows} and {@link #rtts}. */
    private final Map<String, List<Flow>> flowRounds = new LinkedHashMap<>();
    private final Map<String, List<Rtt>> rttRounds = new LinkedHashMap<>();
    /** Every case, in the order they ran: true for a baseline. */
    private final Map<String, Boolean> baselines = new LinkedHashMap<>();

    /**
     * @param report where the figures go
     * @param rounds rounds over all cases
     * @param quick a quick run (no threshold sweep panel)
     */
    ChannelFigures(Report report, int rounds, boolean quick) {
        this.report = report;
        this.rounds = rounds;
        this.quick = quick;
    }

    /**
     * A case starts.
     *
     * @param variant its name
     * @param baseline true for a baseline (not rdmx)
     */
    void variant(String variant, boolean baseline) {
        baselines.put(variant, baseline);
    }

    /**
     * Records one round's stream measurement.
     *
     * @param variant the case
     * @param size the record size
     * @param records records moved
     * @param seconds how long it took
     * @param cpuSeconds both processes' CPU time
     * @param switches both processes' context switches
     * @return the figures of that round
     */
    Flow flow(String variant, int size, long records, double seconds, double cpuSeconds, double switches) {
        double bytes = records * (double) size;
        Flow f = new Flow(records / seconds, bytes / seconds / (1 << 20), cpuSeconds / (bytes / (1 << 30)),
            switches / (bytes / (1 << 20)));
        flowRounds.computeIfAbsent(variant + "/" + size, k -> new ArrayList<>()).add(f);
        return f;
    }

    /**
     * Records one round's round-trip measurement.
     *
     * @param variant the case
     * @param size the record size
     * @param samples round trips measured
     * @param p50 median, us
     * @param p99 99th percentile, us
     * @param cpuUs both processes' CPU per round trip, us (NaN if not given)
     * @return the figures of that round
     */
    Rtt rtt(String variant, int size, int samples, double p50, double p99, double cpuUs) {
        Rtt r = new Rtt(samples, p50, p99, cpuUs);
        rttRounds.computeIfAbsent(variant + "/" + size, k -> new ArrayList<>()).add(r);
        return r;
    }

    /**
     * After every round: each variant/size's figure is its median round (by messages/s, by round-trip p50), and
     * its error half the min-max range of that measure over the rounds (0 with one round).
     */
    void medians() {
        for (Map.Entry<String, List<Flow>> e : flowRounds.entrySet()) {
            List<Flow> l = new ArrayList<>(e.getValue());
            l.sort(Comparator.comparingDouble(Flow::msgs));
            Flow f = l.get(l.size() / 2);
            double msgsErr = (l.get(l.size() - 1).msgs() - l.get(0).msgs()) / 2;
            double mibsErr = (l.get(l.size() - 1).mibs() - l.get(0).mibs()) / 2;
            String key = e.getKey();
            String variant = key.substring(0, key.lastIndexOf('/'));
            String name = "stream " + label(Integer.parseInt(key.substring(key.lastIndexOf('/') + 1)));
            flows.put(key, f);
            if (rounds > 1 && key.endsWith("/32")) {
                // the small records show most how the machine's state moves a case from one round to the next
                System.out.printf(Locale.ROOT, "%-20s 32 B stream over %d rounds: median %.1fM msgs/s, rounds %s%n",
                    variant, l.size(), f.msgs() / 1e6, e.getValue().stream()
                        .map(x -> String.format(Locale.ROOT, "%.1fM", x.msgs() / 1e6))
                        .collect(Collectors.joining(", ")));
            }
            report.add(new Report.Result(name, variant, f.msgs(), msgsErr, "msgs/s"));
            report.add(new Report.Result(name, variant, f.mibs(), mibsErr, "MiB/s"));
            report.add(new Report.Result(name, variant, f.cpuPerGiB(), 0, "CPU s/GiB"));
            if (!Double.isNaN(f.switchesPerMiB())) {
                report.add(new Report.Result(name, variant, f.switchesPerMiB(), 0, "ctxsw/MiB"));
            }
        }
        for (Map.Entry<String, List<Rtt>> e : rttRounds.entrySet()) {
            List<Rtt> l = new ArrayList<>(e.getValue());
            l.sort(Comparator.comparingDouble(Rtt::p50));
            Rtt r = l.get(l.size() / 2);
            String key = e.getKey();
            String variant = key.substring(0, key.lastIndexOf('/'));
            String name = "round trip " + label(Integer.parseInt(key.substring(key.lastIndexOf('/') + 1)));
            rtts.put(key, r);
            report.add(new Report.Result(name + " p50", variant, r.p50(), (l.get(l.size() - 1).p50() - l.get(0).p50())
                / 2, "us"));
            report.add(new Report.Result(name + " p99", variant, r.p99(), 0, "us"));
            if (!Double.isNaN(r.cpu())) {
                report.add(new Report.Result(name + " CPU", variant, r.cpu(), 0, "us"));
            }
            if (rounds > 1) {
                System.out.printf(Locale.ROOT, "%-20s %-7s p50 over %d rounds: median %.2f us, %.2f-%.2f%n", variant,
                    name.substring("round trip ".length()), l.size(), r.p50(), l.get(0).p50(),
                    l.get(l.size() - 1).p50());
            }
        }
    }

    private List<String> variants() {
        return new ArrayList<>(baselines.keySet());
    }

    void printTables() {
        System.out.println();
        System.out.printf(Locale.ROOT, "%-20s %7s %14s %11s %10s %10s%n", "stream", "record", "msgs/s", "MiB/s",
            "CPU s/GiB", "ctxsw/MiB");
        for (String v : variants()) {
            for (int size : SIZES) {
                Flow f = flows.get(v + "/" + size);
                if (f != null) {
                    System.out.printf(Locale.ROOT, "%-20s %7s %14.0f %11.1f %10.2f %10s%n", v, label(size), f.msgs(),
                        f.mibs(), f.cpuPerGiB(), Double.isNaN(f.switchesPerMiB()) ? "-"
                            : String.format(Locale.ROOT, "%.2f", f.switchesPerMiB()));
                }
            }
        }
        System.out.println();
        System.out.printf(Locale.ROOT, "%-20s %12s %12s %12s %12s%n", "round trip (us)", "32 B p50", "32 B p99",
            "1 KiB p50", "1 KiB p99");
        for (String v : variants()) {
            Rtt a = rtts.get(v + "/32");
            Rtt b = rtts.get(v + "/1024");
            if (a != null || b != null) {
                System.out.printf(Locale.ROOT, "%-20s %12s %12s %12s %12s%n", v, us(a, true), us(a, false),
                    us(b, true), us(b, false));
            }
        }
    }

    private static String us(Rtt r, boolean p50) {
        return r == null ? "-" : String.format(Locale.ROOT, "%.2f", p50 ? r.p50() : r.p99());
    }

    /** @return the variant starting with {@code prefix} with the most messages/s at {@code size}, or null */
    String bestFlow(String prefix, int size) {
        return variants().stream().filter(v -> v.startsWith(prefix) && !v.contains("/t=")
                && flows.containsKey(v + "/" + size))
            .max(Comparator.comparingDouble(v -> flows.get(v + "/" + size).msgs())).orElse(null);
    }

    /** @return the variant starting with one of the prefixes with the lowest p50 at {@code size}, or null */
    String bestRtt(int size, String... prefixes) {
        return variants().stream().filter(v -> Stream.of(prefixes).anyMatch(v::startsWith)
                && rtts.containsKey(v + "/" + size))
            .min(Comparator.comparingDouble(v -> rtts.get(v + "/" + size).p50())).orElse(null);
    }

    void higher(String what, String rdmx, String base, int size, boolean mibs, String target) {
        if (rdmx == null || base == null) {
            System.out.println("no comparison '" + what + "': a case failed");
            return;
        }
        Flow a = flows.get(rdmx + "/" + size);
        Flow b = flows.get(base + "/" + size);
        report.higherIsBetter(what + " (" + rdmx + " vs " + base + ")", mibs ? a.mibs() : a.msgs(),
            mibs ? b.mibs() : b.msgs(), mibs ? "MiB/s" : "msgs/s", target);
    }

    void lower(String what, String rdmx, String base, int size, double factor, String target) {
        if (rdmx == null || base == null) {
            System.out.println("no comparison '" + what + "': a case failed");
            return;
        }
        report.lowerIsBetter(what + " (" + rdmx + " vs " + (factor == 1 ? "" : factor + "x ") + base + ")",
            rtts.get(rdmx + "/" + size).p50(), factor * rtts.get(base + "/" + size).p50(), "us p50", target);
    }

    /** @return {@code variant} if it has a stream figure at record size {@code key}, else null */
    String hasFlow(String key, String variant) {
        return flows.containsKey(variant + "/" + key) ? variant : null;
    }

    /** @return {@code variant} if it has a round-trip figure at record size {@code key}, else null */
    String hasRtt(String key, String variant) {
        return rtts.containsKey(variant + "/" + key) ? variant : null;
    }

    /** @return the stream figures by variant/size (medians once {@link #medians} ran) */
    Map<String, Flow> flows() {
        return flows;
    }

    void chart() {
        List<String> main = variants().stream().filter(v -> !v.contains("/t=") && !v.contains("/imm")).toList();
        panel("stream, 32 B records", "M msgs/s", main, v -> flows.containsKey(v + "/32")
            ? flows.get(v + "/32").msgs() / 1e6 : null);
        panel("stream, 64 KiB records", "MiB/s", main, v -> flows.containsKey(v + "/" + (64 << 10))
            ? flows.get(v + "/" + (64 << 10)).mibs() : null);
        panel("round trip, 32 B, p50", "us, lower is better", main, v -> rtts.containsKey(v + "/32")
            ? rtts.get(v + "/32").p50() : null);
        panel("CPU per GiB, 1 KiB records", "CPU s/GiB, lower is better", main, v -> flows.containsKey(v + "/1024")
            ? flows.get(v + "/1024").cpuPerGiB() : null);
        if (!quick) {
            List<String> sweep = variants().stream().filter(v -> v.contains("/t=")).toList();
            panel("shm 1 KiB stream by batch threshold", "MiB/s", sweep, v -> flows.containsKey(v + "/1024")
                ? flows.get(v + "/1024").mibs() : null);
        }
    }

    private void panel(String title, String unit, List<String> variants,
        java.util.function.Function<String, Double> value) {
        List<Report.Bar> bars = new ArrayList<>();
        for (String v : variants) {
            Double x = value.apply(v);
            if (x != null) {
                bars.add(new Report.Bar(v, x, baselines.get(v)));
            }
        }
        report.panel(new Report.Panel(title, unit, bars));
    }
}
