package io.rdmx.transport.internal;

import java.util.Locale;
import java.util.StringJoiner;
import java.util.function.Function;

/**
 * Reading rdmx's settings (system properties, and the values of any other source): booleans, choices, sizes and
 * numbers in range, each with an error that names the key and the value.
 */
public final class SystemProperties {
    private SystemProperties() {
    }

    /**
     * @param key the property
     * @param def its default
     * @param min the smallest value accepted
     * @param max the largest value accepted
     * @param unit what the number counts, for the message ("milliseconds")
     * @return the value, or the default if the property is not set
     * @throws IllegalArgumentException naming the key, the value and the range if it is not a number in range
     */
    public static long longInRange(String key, long def, long min, long max, String unit) {
        String v = System.getProperty(key, Long.toString(def)).trim();
        long n;
        try {
            n = Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + "=" + v + " must be a number of " + unit + " from " + min
                + " to " + max, e);
        }
        if (n < min || n > max) {
            throw new IllegalArgumentException(key + "=" + v + " must be a number of " + unit + " from " + min
                + " to " + max);
        }
        return n;
    }

    /**
     * @param key the property
     * @param def its default
     * @return {@code true} or {@code false} (any case, blanks around ignored), or the default if the property is
     *     not set or blank
     * @throws IllegalArgumentException naming the key and the value if it is neither
     */
    public static boolean bool(String key, boolean def) {
        String v = System.getProperty(key);
        return v == null || v.isBlank() ? def : parseBool(key, v);
    }

    /**
     * A boolean setting, from any source (a system property, a builder, a Spark or Hadoop configuration).
     *
     * @param key the setting's key, for the error
     * @param value its value
     * @return {@code true} or {@code false} (any case, blanks around ignored)
     * @throws IllegalArgumentException naming the key and the value if it is neither
     */
    public static boolean parseBool(String key, String value) {
        String v = value == null ? "" : value.strip();
        if (v.equalsIgnoreCase("true")) {
            return true;
        }
        if (v.equalsIgnoreCase("false")) {
            return false;
        }
        throw new IllegalArgumentException(key + "=" + value + " must be true or false");
    }

    /**
     * One of a fixed set of choices (an enum's constants), by its label.
     *
     * @param key the setting's key, for the error
     * @param value its value (any case, blanks around ignored)
     * @param choices the choices
     * @param label a choice's label, as a user writes it
     * @param <E> the choices' type
     * @return the choice whose label is the value
     * @throws IllegalArgumentException naming the key, the value and every label if none matches
     */
    public static <E> E choice(String key, String value, E[] choices, Function<? super E, String> label) {
        String v = value == null ? "" : value.strip();
        StringJoiner all = new StringJoiner(", ");
        for (E c : choices) {
            String l = label.apply(c);
            if (l.equalsIgnoreCase(v)) {
                return c;
            }
            all.add(l);
        }
        throw new IllegalArgumentException(key + "=" + value + " must be one of " + all);
    }

    /**
     * A size in bytes: a whole number with an optional binary suffix, {@code k}, {@code m} or {@code g} (KiB, MiB,
     * GiB; any case).
     *
     * @param key the setting's key, for the error
     * @param value its value (blanks around ignored)
     * @param min the smallest value accepted
     * @param max the largest value accepted
     * @return the size in bytes
     * @throws IllegalArgumentException naming the key and the value if it is not a number, or not in range (then
     *     with the range)
     */
    public static long size(String key, String value, long min, long max) {
        String s = value == null ? "" : value.strip().toLowerCase(Locale.ROOT);
        int shift = s.endsWith("k") ? 10 : s.endsWith("m") ? 20 : s.endsWith("g") ? 30 : 0;
        long n;
        try {
            n = Long.parseLong(shift == 0 ? s : s.substring(0, s.length() - 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + "=" + value + " is not a number", e);
        }
        if (shift != 0 && (n < 0 || n > (Long.MAX_VALUE >> shift))) {
            throw new IllegalArgumentException(key + "=" + value + " out of range [" + min + ", " + max + "]");
        }
        n <<= shift;
        if (n < min || n > max) {
            throw new IllegalArgumentException(key + "=" + value + " out of range [" + min + ", " + max + "]");
        }
        return n;
    }
}
