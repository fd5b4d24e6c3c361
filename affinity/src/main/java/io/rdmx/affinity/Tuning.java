package io.rdmx.affinity;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalInt;

/**
 * Architecture-aware defaults: the batching threshold, buffer sizes and handler threads tuned for x86_64,
 * ppc64le and aarch64. Each is overridden by its system property (the key itself) or its environment variable
 * ({@code RDMX_} + the key without {@code rdmx.}, upper case, dots as underscores: {@code rdmx.channel.batchThreshold}
 * is {@code RDMX_CHANNEL_BATCHTHRESHOLD}).
 */
public final class Tuning {
    /** Architectures with tuned values. */
    public enum Arch {
        /** Intel/AMD 64-bit. */
        X86_64,
        /** POWER8/9/10 little endian: SMT8 cores and large caches favour larger batches. */
        PPC64LE,
        /** ARM 64-bit. */
        AARCH64,
        /** Anything else: generic values. */
        OTHER
    }

    /** Channel batching threshold key. */
    public static final String BATCH_THRESHOLD = "rdmx.channel.batchThreshold";
    /** Ring capacity key. */
    public static final String RING_CAPACITY = "rdmx.channel.ringCapacity";
    /** RPC handler threads key. */
    public static final String HANDLER_THREADS = "rdmx.rpc.handlerThreads";

    /** A value and where it came from. */
    public record Value(String key, int value, String source) {
    }

    private final Arch arch;
    private final int cores;
    private final Map<String, String> env;

    /**
     * @param osArch {@code os.arch}
     * @param cores physical cores (for per-core values)
     * @param env the environment
     */
    public Tuning(String osArch, int cores, Map<String, String> env) {
        this.arch = detect(osArch);
        this.cores = Math.max(1, cores);
        this.env = env;
    }

    /**
     * @param osArch {@code os.arch}
     * @return the architecture
     */
    public static Arch detect(String osArch) {
        switch (osArch.toLowerCase(Locale.ROOT)) {
            case "amd64":
            case "x86_64":
                return Arch.X86_64;
            case "ppc64le":
                return Arch.PPC64LE;
            case "aarch64":
            case "arm64":
                return Arch.AARCH64;
            default:
                return Arch.OTHER;
        }
    }

    /** @return the detected architecture */
    public Arch arch() {
        return arch;
    }

    /** @return the keys with tuned values */
    public static List<String> keys() {
        return List.of(BATCH_THRESHOLD, RING_CAPACITY, HANDLER_THREADS);
    }

    /**
     * @param key a key
     * @return the environment variable that overrides it
     */
    public static String envName(String key) {
        return "RDMX_" + key.substring("rdmx.".length()).replace('.', '_').toUpperCase(Locale.ROOT);
    }

    private OptionalInt archValue(String key) {
        Map<String, int[]> t = new LinkedHashMap<>();
        //                             x86_64     ppc64le    aarch64    other
        t.put(BATCH_THRESHOLD, new int[] {16 << 10, 64 << 10, 32 << 10, 16 << 10});
        t.put(RING_CAPACITY, new int[] {256 << 10, 1 << 20, 512 << 10, 256 << 10});
        t.put(HANDLER_THREADS, new int[] {cores, 2 * cores, cores, cores});
        int[] v = t.get(key);
        return v == null ? OptionalInt.empty() : OptionalInt.of(v[arch.ordinal()]);
    }

    /**
     * The effective value below the system property: environment, else the architecture's tuned value.
     *
     * @param key a key
     * @return the value, if this module knows the key
     * @throws IllegalArgumentException if the environment variable is not an integer (names it)
     */
    public OptionalInt tunedDefault(String key) {
        String e = env.get(envName(key));
        if (e != null && !e.isBlank()) {
            try {
                return OptionalInt.of(Integer.parseInt(e.trim()));
            } catch (NumberFormatException ex) {
                throw new IllegalArgumentException(envName(key) + "=" + e + " is not an integer", ex);
            }
        }
        return archValue(key);
    }

    /**
     * The effective value and its source, system property first.
     *
     * @param key a key
     * @return the value
     */
    public Value effective(String key) {
        String p = System.getProperty(key);
        if (p != null && !p.isBlank()) {
            return new Value(key, Integer.parseInt(p.trim()), "system property -D" + key);
        }
        String e = env.get(envName(key));
        if (e != null && !e.isBlank()) {
            return new Value(key, Integer.parseInt(e.trim()), "environment $" + envName(key));
        }
        return new Value(key, archValue(key).orElse(0), arch.name().toLowerCase(Locale.ROOT) + " tuned default");
    }

    /** @return every key's effective value */
    public List<Value> all() {
        List<Value> out = new ArrayList<>();
        for (String k : keys()) {
            out.add(effective(k));
        }
        return out;
    }
}
