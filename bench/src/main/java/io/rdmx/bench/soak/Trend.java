package io.rdmx.bench.soak;

import java.util.List;

/**
 * Whether a sampled metric grows: the least-squares slope of the samples taken after the warm-up, judged by
 * an explicit rule. A metric GROWS when the growth its slope predicts over the measured window exceeds its
 * tolerance, {@code max(floor, relative * |mean|)}; otherwise it is FLAT. The floor absorbs the granularity of
 * the metric (a thread, a descriptor, an allocator chunk); the relative part absorbs noise proportional to the
 * level.
 *
 * @param first the first sample after the warm-up
 * @param last the last sample
 * @param min the smallest sample after the warm-up
 * @param max the largest sample after the warm-up
 * @param mean the mean after the warm-up
 * @param slopePerMinute the least-squares slope, per minute
 * @param growth the slope times the measured window
 * @param tolerance the growth allowed
 * @param grows the verdict
 */
public record Trend(double first, double last, double min, double max, double mean, double slopePerMinute,
                    double growth, double tolerance, boolean grows) {

    /**
     * Fits and judges a series.
     *
     * @param seconds sample times in seconds (after the warm-up), at least two distinct
     * @param values the samples
     * @param floor the least tolerance, in the metric's unit
     * @param relative the tolerance as a fraction of the mean
     * @return the trend
     * @throws IllegalArgumentException if there are fewer than two samples or the lengths differ
     */
    public static Trend of(List<Double> seconds, List<Double> values, double floor, double relative) {
        int n = values.size();
        if (n < 2 || seconds.size() != n) {
            throw new IllegalArgumentException("samples=" + n + " times=" + seconds.size()
                + ": need at least two samples, one time each");
        }
        double mx = 0;
        double my = 0;
        double min = Double.MAX_VALUE;
        double max = -Double.MAX_VALUE;
        for (int i = 0; i < n; i++) {
            mx += seconds.get(i);
            my += values.get(i);
            min = Math.min(min, values.get(i));
            max = Math.max(max, values.get(i));
        }
        mx /= n;
        my /= n;
        double sxy = 0;
        double sxx = 0;
        for (int i = 0; i < n; i++) {
            double dx = seconds.get(i) - mx;
            sxy += dx * (values.get(i) - my);
            sxx += dx * dx;
        }
        if (sxx == 0) {
            throw new IllegalArgumentException("all " + n + " samples have the same time");
        }
        double slope = sxy / sxx;
        double window = seconds.get(n - 1) - seconds.get(0);
        double growth = slope * window;
        double tolerance = Math.max(floor, relative * Math.abs(my));
        return new Trend(values.get(0), values.get(n - 1), min, max, my, slope * 60, growth, tolerance,
            growth > tolerance);
    }

    /** @return FLAT or GROWS */
    public String verdict() {
        return grows ? "GROWS" : "FLAT";
    }
}
