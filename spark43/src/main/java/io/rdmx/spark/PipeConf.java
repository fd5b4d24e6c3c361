package io.rdmx.spark;

import java.time.Duration;
import java.util.function.Function;

/**
 * The {@code spark.rdmx.pipelined.*} settings of {@link RdmxPipelinedShuffleManager}, validated when the manager
 * starts (an error names the key and the value). {@code spark.rdmx.peerTimeoutMs} and {@code spark.authenticate}
 * apply as for {@link RdmxShuffleManager}.
 *
 * <ul>
 *   <li>{@value #PROVIDER_KEY} (default {@code auto}): the provider of an executor's inbound node, the rings its
 *       reduce tasks read (one ring set per reader, so one provider per executor). {@code auto} chooses by the
 *       providers' traits ({@code Fabrics.choose}): the best one for peers on this host in Spark's local modes
 *       ({@code shm} today), else the best one that reaches other hosts ({@code verbs} where an RDMA device is up,
 *       else {@code tcp}). Writers connect over the provider the reader registered.</li>
 *   <li>{@value #SLOTS_KEY} (default: {@code spark.executor.cores}, at least 4): the channel engine's workers, one
 *       per task writing or reading a pipelined shuffle at once on the executor.</li>
 *   <li>{@value #RING_BYTES_KEY} (default 256 KiB, a power of two, 4 KiB to 64 MiB): each ring's capacity, from one
 *       writing slot to one reading slot per pair of executors (slots x slots rings per pair). It bounds what a
 *       reader has in flight from a map task; a serialized record must fit in half of it.</li>
 *   <li>{@value #FLUSH_US_KEY} (default {@value #FLUSH_US_DEFAULT}, 0 to 1,000,000): the longest a produced record
 *       waits in a ring before it is sent (the channel batches what comes faster).</li>
 *   <li>{@value #WAIT_MS_KEY} (default {@value #WAIT_MS_DEFAULT}): how long a map task waits for every reduce task
 *       of its shuffle to start, and a task for a free slot.</li>
 * </ul>
 */
final class PipeConf {
    static final String PROVIDER_KEY = "spark.rdmx.pipelined.provider";
    static final String PROVIDER_DEFAULT = RdmxEndpoints.AUTO;
    static final String SLOTS_KEY = "spark.rdmx.pipelined.slots";
    static final String RING_BYTES_KEY = "spark.rdmx.pipelined.ringBytes";
    static final int RING_BYTES_DEFAULT = 256 << 10;
    static final String FLUSH_US_KEY = "spark.rdmx.pipelined.flushIntervalUs";
    static final long FLUSH_US_DEFAULT = 100;
    static final String WAIT_MS_KEY = "spark.rdmx.pipelined.waitMs";
    static final long WAIT_MS_DEFAULT = 120_000;

    private final String provider;
    private final int slots;
    private final int ringBytes;
    private final Duration flushInterval;
    private final long waitMillis;

    private PipeConf(String provider, int slots, int ringBytes, Duration flushInterval, long waitMillis) {
        this.provider = provider;
        this.slots = slots;
        this.ringBytes = ringBytes;
        this.flushInterval = flushInterval;
        this.waitMillis = waitMillis;
    }

    /**
     * @param get a setting's value, or null when unset
     * @return the settings
     * @throws IllegalArgumentException naming the key and the value
     */
    static PipeConf from(Function<String, String> get) {
        String p = get.apply(PROVIDER_KEY);
        String provider = p == null || p.isBlank() ? PROVIDER_DEFAULT : p.trim();
        if (!provider.matches("[A-Za-z0-9_-]+")) {
            throw new IllegalArgumentException(PROVIDER_KEY + "=" + p
                + " is not a provider name (auto, shm, tcp, ...)");
        }
        String cores = get.apply("spark.executor.cores");
        long defSlots = Math.max(4, cores == null ? 1 : number("spark.executor.cores", cores, 1, 4096));
        int slots = (int) longValue(get, SLOTS_KEY, Math.min(defSlots, 64), 1, 64);
        int ring = (int) longValue(get, RING_BYTES_KEY, RING_BYTES_DEFAULT, 4096, 64 << 20);
        if (Integer.bitCount(ring) != 1) {
            throw new IllegalArgumentException(RING_BYTES_KEY + "=" + ring + " must be a power of two");
        }
        long flush = longValue(get, FLUSH_US_KEY, FLUSH_US_DEFAULT, 0, 1_000_000);
        long wait = longValue(get, WAIT_MS_KEY, WAIT_MS_DEFAULT, 1, 3_600_000);
        return new PipeConf(provider, slots, ring, Duration.ofNanos(flush * 1000), wait);
    }

    private static long longValue(Function<String, String> get, String key, long def, long min, long max) {
        String v = get.apply(key);
        return v == null || v.isBlank() ? def : number(key, v, min, max);
    }

    private static long number(String key, String v, long min, long max) {
        long n;
        try {
            n = Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + "=" + v + " is not a whole number", e);
        }
        if (n < min || n > max) {
            throw new IllegalArgumentException(key + "=" + v + " is out of range [" + min + ", " + max + "]");
        }
        return n;
    }

    String provider() {
        return provider;
    }

    int slots() {
        return slots;
    }

    int ringBytes() {
        return ringBytes;
    }

    Duration flushInterval() {
        return flushInterval;
    }

    long waitMillis() {
        return waitMillis;
    }

    @Override
    public String toString() {
        return "PipeConf{provider=" + provider + ", slots=" + slots + ", ringBytes=" + ringBytes + ", flushIntervalUs="
            + flushInterval.toNanos() / 1000 + ", waitMs=" + waitMillis + "}";
    }
}
