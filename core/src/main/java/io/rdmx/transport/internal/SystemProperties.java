package io.rdmx.transport.internal;

/** Reading rdmx's system properties, with an error that names the key and the value. */
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
        if (v == null || v.isBlank()) {
            return def;
        }
        if (v.strip().equalsIgnoreCase("true")) {
            return true;
        }
        if (v.strip().equalsIgnoreCase("false")) {
            return false;
        }
        throw new IllegalArgumentException(key + "=" + v + " is neither true nor false");
    }
}
