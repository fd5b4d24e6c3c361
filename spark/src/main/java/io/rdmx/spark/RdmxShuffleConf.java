package io.rdmx.spark;

import io.rdmx.transport.internal.SystemProperties;
import java.time.Duration;
import java.util.Locale;
import java.util.function.UnaryOperator;

/**
 * The {@code spark.rdmx.*} keys of {@link RdmxShuffleManager}: each has a name constant and a default constant,
 * and all are read and validated once, when the manager starts ({@link #from}); a bad value throws
 * {@link IllegalArgumentException} naming the key and the value. docs/configuration.md lists them.
 */
public final class RdmxShuffleConf {
    /** Which provider carries blocks: {@code auto} (per peer), or a provider name used for every peer. */
    public static final String PROVIDER_KEY = "spark.rdmx.provider";
    /** Default of {@link #PROVIDER_KEY}: shm for a peer on the same host, verbs where usable, tcp otherwise. */
    public static final String PROVIDER_DEFAULT = "auto";
    /** Silence after which a peer is dead, and the bound on each fetch (connect, send, answer). */
    public static final String PEER_TIMEOUT_KEY = "spark.rdmx.peerTimeoutMs";
    /** Default of {@link #PEER_TIMEOUT_KEY}, milliseconds. */
    public static final long PEER_TIMEOUT_DEFAULT_MS = 10_000;
    /** Bytes a reduce task may have requested and not yet consumed (Spark's spark.reducer.maxSizeInFlight). */
    public static final String MAX_BYTES_IN_FLIGHT_KEY = "spark.rdmx.maxBytesInFlight";
    /** Default of {@link #MAX_BYTES_IN_FLIGHT_KEY}: 48 MiB, as Spark's. */
    public static final long MAX_BYTES_IN_FLIGHT_DEFAULT = 48L << 20;
    /** Fetch requests a reduce task may have outstanding. */
    public static final String MAX_REQS_IN_FLIGHT_KEY = "spark.rdmx.maxReqsInFlight";
    /** Default of {@link #MAX_REQS_IN_FLIGHT_KEY}. */
    public static final int MAX_REQS_IN_FLIGHT_DEFAULT = 64;
    /** The largest answer of one fetch request: larger blocks are fetched as several chunks. */
    public static final String CHUNK_BYTES_KEY = "spark.rdmx.chunkBytes";
    /** Default of {@link #CHUNK_BYTES_KEY}: 4 MiB. */
    public static final int CHUNK_BYTES_DEFAULT = 4 << 20;
    /** The ring of each pair of executors and direction (rdmx.channel.ringCapacity of the block channels). */
    public static final String RING_BYTES_KEY = "spark.rdmx.ringBytes";
    /** Default of {@link #RING_BYTES_KEY}: 1 MiB. */
    public static final int RING_BYTES_DEFAULT = 1 << 20;
    /** Threads of each executor's block server that read map output files and answer. */
    public static final String SERVER_THREADS_KEY = "spark.rdmx.serverThreads";
    /** Default of {@link #SERVER_THREADS_KEY}. */
    public static final int SERVER_THREADS_DEFAULT = 4;
    /**
     * The largest block a server may claim, whatever the map output tracker's estimate: a fetch of a block claimed
     * larger fails (FetchFailed) before any of its bytes beyond the first answer are asked for.
     */
    public static final String MAX_BLOCK_BYTES_KEY = "spark.rdmx.maxBlockBytes";
    /** Default of {@link #MAX_BLOCK_BYTES_KEY}: 2 GiB (a block is held whole in memory before it is read). */
    public static final long MAX_BLOCK_BYTES_DEFAULT = 2L << 30;
    /**
     * How blocks are fetched: {@code auto} reads them out of the serving executor's map output files with one-sided
     * READ where the provider and the peer allow it (per peer, and per map output: a file of 2 GiB or more, or a
     * provider without file regions, is fetched by RPC), {@code rpc} always asks the serving executor's block
     * server (its handler threads read the files and answer).
     */
    public static final String FETCH_KEY = "spark.rdmx.fetch";
    /** Default of {@link #FETCH_KEY}. */
    public static final String FETCH_DEFAULT = "auto";
    /** Upper end of {@link #MAX_BLOCK_BYTES_KEY}'s range. */
    static final long MAX_BLOCK_BYTES_MAX = 64L << 30;

    private final String provider;
    private final Duration peerTimeout;
    private final long maxBytesInFlight;
    private final int maxReqsInFlight;
    private final int chunkBytes;
    private final int ringBytes;
    private final int serverThreads;
    private final long maxBlockBytes;
    private final boolean readFetch;

    private RdmxShuffleConf(UnaryOperator<String> get) {
        String p = get.apply(PROVIDER_KEY);
        provider = p == null ? PROVIDER_DEFAULT : p.trim().toLowerCase(Locale.ROOT);
        if (provider.isEmpty() || !provider.matches("[a-z0-9_-]+")) {
            throw new IllegalArgumentException(PROVIDER_KEY + "=" + p
                + " is not a provider name (auto, shm, tcp, ...)");
        }
        peerTimeout = Duration.ofMillis(longValue(get, PEER_TIMEOUT_KEY, PEER_TIMEOUT_DEFAULT_MS, 100, 3_600_000));
        maxBytesInFlight = longValue(get, MAX_BYTES_IN_FLIGHT_KEY, MAX_BYTES_IN_FLIGHT_DEFAULT, 1, Long.MAX_VALUE);
        maxReqsInFlight = (int) longValue(get, MAX_REQS_IN_FLIGHT_KEY, MAX_REQS_IN_FLIGHT_DEFAULT, 1, 4096);
        chunkBytes = (int) longValue(get, CHUNK_BYTES_KEY, CHUNK_BYTES_DEFAULT, 4096, 64 << 20);
        ringBytes = (int) longValue(get, RING_BYTES_KEY, RING_BYTES_DEFAULT, 1024, 1 << 30);
        if (Integer.bitCount(ringBytes) != 1) {
            throw new IllegalArgumentException(RING_BYTES_KEY + "=" + ringBytes + " must be a power of two");
        }
        serverThreads = (int) longValue(get, SERVER_THREADS_KEY, SERVER_THREADS_DEFAULT, 1, 256);
        maxBlockBytes = longValue(get, MAX_BLOCK_BYTES_KEY, MAX_BLOCK_BYTES_DEFAULT, 4096, MAX_BLOCK_BYTES_MAX);
        String f = get.apply(FETCH_KEY);
        String fetch = f == null ? FETCH_DEFAULT : f.trim().toLowerCase(Locale.ROOT);
        if (!fetch.equals("auto") && !fetch.equals("rpc")) {
            throw new IllegalArgumentException(FETCH_KEY + "=" + f + " is not auto or rpc");
        }
        readFetch = fetch.equals("auto");
    }

    /**
     * Reads and validates every key.
     *
     * @param get the value of a key, or null when it is not set (a SparkConf's {@code getOption})
     * @return the configuration
     * @throws IllegalArgumentException naming the key and value that is not valid
     */
    public static RdmxShuffleConf from(UnaryOperator<String> get) {
        return new RdmxShuffleConf(get);
    }

    private static long longValue(UnaryOperator<String> get, String key, long def, long min, long max) {
        String v = get.apply(key);
        return v == null ? def : SystemProperties.size(key, v, min, max);
    }

    /** @return {@code auto} or a provider name */
    public String provider() {
        return provider;
    }

    /** @return the peer timeout, also the bound of each fetch */
    public Duration peerTimeout() {
        return peerTimeout;
    }

    /** @return bytes in flight per reduce task */
    public long maxBytesInFlight() {
        return maxBytesInFlight;
    }

    /** @return requests in flight per reduce task */
    public int maxReqsInFlight() {
        return maxReqsInFlight;
    }

    /** @return the largest answer of one request */
    public int chunkBytes() {
        return chunkBytes;
    }

    /** @return the ring capacity of the block channels */
    public int ringBytes() {
        return ringBytes;
    }

    /** @return block server threads per executor */
    public int serverThreads() {
        return serverThreads;
    }

    /** @return the largest block size a server may claim */
    public long maxBlockBytes() {
        return maxBlockBytes;
    }

    /** @return whether blocks are read by READ where possible ({@link #FETCH_KEY} {@code auto}) */
    public boolean readFetch() {
        return readFetch;
    }

    /** @return the fetch client's message limit ({@link #clientMaxMessageBytes(int, int)}) */
    public int clientMaxMessageBytes() {
        return clientMaxMessageBytes(chunkBytes, serverThreads);
    }

    /**
     * The fetch client's message limit. The RPC client holds at most twice its limit in partly assembled answers
     * per peer, and a peer's server threads answer chunks at once, their fragments interleaved: so the limit
     * covers one answer per two server threads (a block of several chunks fetched with four server threads held
     * about 9-12 MB of 4 MB answers, over the 8 MB of a limit of one answer, and failed the fetch).
     *
     * @param chunkBytes the largest answer's block bytes
     * @param serverThreads the peer's block server threads
     * @return the limit, at most 1 GiB
     */
    static int clientMaxMessageBytes(int chunkBytes, int serverThreads) {
        long answer = (long) chunkBytes + FetchProtocol.ANSWER_HEADER;
        return (int) Math.min(answer * Math.max(1, (serverThreads + 1) / 2), 1 << 30);
    }

    @Override
    public String toString() {
        return "RdmxShuffleConf{provider=" + provider + ", peerTimeout=" + peerTimeout.toMillis() + "ms"
            + ", maxBytesInFlight=" + maxBytesInFlight + ", maxReqsInFlight=" + maxReqsInFlight
            + ", chunkBytes=" + chunkBytes + ", ringBytes=" + ringBytes + ", serverThreads=" + serverThreads
            + ", maxBlockBytes=" + maxBlockBytes + ", fetch=" + (readFetch ? "auto" : "rpc") + "}";
    }
}
