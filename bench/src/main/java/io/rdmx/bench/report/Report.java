package io.rdmx.bench.report;

import io.rdmx.bench.BenchMain;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What every benchmark runner produces: a table on stdout, {@code bench/results/<name>.json} with the measured
 * values and a {@code comparisons} list ({@code ratio > 1} means rdmx is better), and an SVG chart beside it.
 */
public final class Report {
    /** One measured value. */
    public record Result(String name, String variant, double score, double error, String unit) {
    }

    /** rdmx against a baseline measured in the same run. */
    public record Comparison(String name, double rdmx, double baseline, double ratio, String unit, String target) {
    }

    /** A chart panel: bars of one unit. */
    public record Panel(String title, String unit, List<Bar> bars) {
    }

    /** A bar; baselines are drawn in grey. */
    public record Bar(String label, double value, boolean baseline) {
    }

    private final String name;
    private final boolean quick;
    private final List<Result> results = new ArrayList<>();
    private final List<Comparison> comparisons = new ArrayList<>();
    private final List<Panel> panels = new ArrayList<>();
    private final Map<String, Object> context = new LinkedHashMap<>();
    private boolean printResults = true;

    /**
     * @param name the benchmark's name (file names use it)
     * @param quick whether this was a quick run
     */
    public Report(String name, boolean quick) {
        this.name = name;
        this.quick = quick;
        context.put("java", Runtime.version().toString());
        context.put("os", System.getProperty("os.name") + " " + System.getProperty("os.arch"));
        context.put("cpus", Runtime.getRuntime().availableProcessors());
    }

    /**
     * @param key a context key (configuration of the run)
     * @param value its value
     * @return this
     */
    public Report context(String key, Object value) {
        context.put(key, value);
        return this;
    }

    /**
     * @param print whether {@link #print} lists every result (default) or only the comparisons, for a runner that
     *     prints its own tables
     * @return this
     */
    public Report printResults(boolean print) {
        this.printResults = print;
        return this;
    }

    /**
     * @param r a result
     * @return this
     */
    public Report add(Result r) {
        results.add(r);
        return this;
    }

    /**
     * Adds a comparison where more is better (bandwidth, throughput).
     *
     * @param what the comparison's name
     * @param rdmx rdmx's value
     * @param baseline the baseline's value
     * @param unit the unit
     * @param target the stated target, or null
     * @return this
     */
    public Report higherIsBetter(String what, double rdmx, double baseline, String unit, String target) {
        comparisons.add(new Comparison(what, rdmx, baseline, rdmx / baseline, unit, target));
        return this;
    }

    /**
     * Adds a comparison where less is better (latency, time).
     *
     * @param what the comparison's name
     * @param rdmx rdmx's value
     * @param baseline the baseline's value
     * @param unit the unit
     * @param target the stated target, or null
     * @return this
     */
    public Report lowerIsBetter(String what, double rdmx, double baseline, String unit, String target) {
        comparisons.add(new Comparison(what, rdmx, baseline, baseline / rdmx, unit, target));
        return this;
    }

    /**
     * @param p a chart panel
     * @return this
     */
    public Report panel(Panel p) {
        panels.add(p);
        return this;
    }

    /** @return the results so far */
    public List<Result> results() {
        return results;
    }

    /**
     * Prints the tables.
     *
     * @param out where
     */
    public void print(PrintStream out) {
        if (printResults) {
            out.println();
            out.printf(Locale.ROOT, "%-44s %-12s %14s %12s  %s%n", "benchmark", "variant", "score", "+/-", "unit");
            for (Result r : results) {
                out.printf(Locale.ROOT, "%-44s %-12s %14.2f %12.2f  %s%n", r.name(), r.variant(), r.score(),
                    r.error(), r.unit());
            }
        }
        if (!comparisons.isEmpty()) {
            int w = Math.max(52, comparisons.stream().mapToInt(c -> c.name().length()).max().orElse(0));
            out.println();
            out.printf(Locale.ROOT, "%-" + w + "s %12s %12s %8s  %s%n", "comparison (ratio > 1: rdmx better)", "rdmx",
                "baseline", "ratio", "target");
            for (Comparison c : comparisons) {
                out.printf(Locale.ROOT, "%-" + w + "s %12.2f %12.2f %7.2fx  %s%n", c.name(), c.rdmx(), c.baseline(),
                    c.ratio(), c.target() == null ? "" : c.target());
            }
        }
    }

    /**
     * Writes {@code <dir>/<name>.json} and {@code <dir>/<name>.svg}.
     *
     * @param dir the results directory
     * @return the JSON file
     * @throws IOException on failure
     */
    public Path write(Path dir) throws IOException {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("benchmark", name);
        doc.put("quick", quick);
        doc.put("timestamp", Instant.now().toString());
        doc.put("context", context);
        doc.put("results", results);
        doc.put("comparisons", comparisons);
        Path json = BenchMain.writeJson(dir, name, doc);
        Files.writeString(dir.resolve(name + ".svg"), svg(), StandardCharsets.UTF_8);
        return json;
    }

    /**
     * Prints the tables, writes the JSON and the chart, and says where.
     *
     * @param out where to print
     * @param dir the results directory
     * @throws IOException on failure
     */
    public void finish(PrintStream out, Path dir) throws IOException {
        print(out);
        Path json = write(dir);
        out.println();
        out.println("wrote " + json + " and " + json.resolveSibling(name + ".svg"));
    }

    /**
     * The panels drawn: those given, or, for a report that gave none, one per unit of its comparisons, each
     * comparison's rdmx bar beside its baseline's (so no chart is left empty).
     *
     * @return the panels
     */
    List<Panel> drawnPanels() {
        if (!panels.isEmpty()) {
            return panels;
        }
        Map<String, List<Bar>> byUnit = new LinkedHashMap<>();
        for (Comparison c : comparisons) {
            List<Bar> bars = byUnit.computeIfAbsent(c.unit(), u -> new ArrayList<>());
            String label = c.name().length() > 30 ? c.name().substring(0, 29) + "~" : c.name();
            bars.add(new Bar(label, c.rdmx(), false));
            bars.add(new Bar("baseline", c.baseline(), true));
        }
        List<Panel> out = new ArrayList<>();
        byUnit.forEach((unit, bars) -> out.add(new Panel("comparisons", unit, bars)));
        return out;
    }

    /** @return the chart: one bar panel per unit group, side by side */
    public String svg() {
        List<Panel> drawn = drawnPanels();
        int pw = 420;
        int ph = 320;
        int w = Math.max(1, drawn.size()) * pw;
        StringBuilder s = new StringBuilder();
        s.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            + "font-family=\"sans-serif\" font-size=\"11\">%n", w, ph + 30));
        s.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", w, ph + 30));
        s.append(String.format(Locale.ROOT, "<text x=\"8\" y=\"18\" font-size=\"14\" font-weight=\"bold\">rdmx %s"
            + "%s (grey: baselines)</text>%n", esc(name), quick ? " --quick" : ""));
        for (int p = 0; p < drawn.size(); p++) {
            Panel panel = drawn.get(p);
            int x0 = p * pw + 50;
            int y0 = 50;
            int plotH = ph - 110;
            double max = panel.bars().stream().mapToDouble(Bar::value).max().orElse(1);
            max = max <= 0 ? 1 : max * 1.1;
            s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">%s</text>%n",
                x0 - 40, y0 - 12, esc(panel.title() + " (" + panel.unit() + ")")));
            s.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>%n",
                x0, y0, x0, y0 + plotH));
            s.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>%n",
                x0, y0 + plotH, x0 + pw - 70, y0 + plotH));
            for (int t = 0; t <= 4; t++) {
                double v = max * t / 4;
                int y = y0 + plotH - (int) (plotH * t / 4.0);
                s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>%n",
                    x0 - 4, y + 4, fmt(v)));
            }
            int n = Math.max(1, panel.bars().size());
            int slot = (pw - 80) / n;
            int bw = Math.max(6, slot - 10);
            for (int i = 0; i < panel.bars().size(); i++) {
                Bar b = panel.bars().get(i);
                int h = (int) Math.round(plotH * b.value() / max);
                int x = x0 + 6 + i * slot;
                s.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                    + "fill=\"%s\"/>%n", x, y0 + plotH - h, bw, h, b.baseline() ? "#999999" : "#2b6cb0"));
                s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>%n",
                    x + bw / 2, y0 + plotH - h - 3, fmt(b.value())));
                s.append(String.format(Locale.ROOT, "<text transform=\"translate(%d,%d) rotate(35)\">%s</text>%n",
                    x + bw / 2, y0 + plotH + 12, esc(b.label())));
            }
        }
        s.append("</svg>\n");
        return s.toString();
    }

    private static String fmt(double v) {
        if (v >= 100) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        return String.format(Locale.ROOT, v >= 10 ? "%.1f" : "%.2f", v);
    }

    private static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
