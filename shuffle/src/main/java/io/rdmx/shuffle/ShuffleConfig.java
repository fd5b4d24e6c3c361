package io.rdmx.shuffle;

import io.rdmx.transport.Fabrics;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * How a process joins a shuffle service: its rank, the membership (one {@code host:port} per rank), the workers
 * per process, the provider and the memory bounds. Validated once by {@link Builder#build()}.
 *
 * <p>Providers: {@code shm}, {@code tcp}, {@code verbs}, {@code disni}, {@code loopback} (every peer over that
 * provider), or {@code auto} (chosen per peer: {@code shm} for a peer on this host, {@code verbs} for other
 * hosts where an RDMA device is up here, {@code tcp} otherwise). A member entry may name the provider that
 * reaches its rank ({@code tcp://hostB:7000}): every pair with that rank uses it.
 */
public final class ShuffleConfig {
    /** The provider name that chooses one per peer ({@link io.rdmx.transport.Fabrics#choose}). */
    public static final String AUTO = "auto";
    /**
     * The provider names accepted by {@link Builder#provider}: {@value #AUTO} and {@link Fabrics#names()} (the
     * providers rdmx ships and any other on the class path). One whose module is not on the class path fails when
     * the service opens, naming it.
     */
    public static final List<String> PROVIDERS = providers();

    private static List<String> providers() {
        List<String> out = new ArrayList<>();
        out.add(AUTO);
        out.addAll(Fabrics.names());
        return List.copyOf(out);
    }

    /** @return true if the provider is on the class path and reaches processes of this host only (shm, loopback) */
    private static boolean sameHostOnly(String provider) {
        try {
            return !Fabrics.get(provider).traits().bindsToHost();
        } catch (IllegalArgumentException notHere) {
            return false; // fails naming itself when the service opens
        }
    }

    private final String provider;
    private final String job;
    private final int rank;
    private final List<String> members;
    private final int processes;
    private final int workers;
    private final int bufferSize;
    private final int batchThreshold;
    private final int packBytes;
    private final int inboxBytes;
    private final int windowBytes;
    private final Duration connectTimeout;
    private final Duration idleTimeout;

    private ShuffleConfig(Builder b, List<String> members, int batchThreshold, int packBytes, int inboxBytes,
                          int windowBytes) {
        this.provider = b.provider;
        this.job = b.job;
        this.rank = b.rank;
        this.members = members;
        this.processes = b.processes;
        this.workers = b.workers;
        this.bufferSize = b.bufferSize;
        this.batchThreshold = batchThreshold;
        this.packBytes = packBytes;
        this.inboxBytes = inboxBytes;
        this.windowBytes = windowBytes;
        this.connectTimeout = b.connectTimeout;
        this.idleTimeout = b.idleTimeout;
    }

    /**
     * @param rank this process's rank (0..processes-1)
     * @param processes how many processes
     * @param workers worker threads per process
     * @return a builder
     */
    public static Builder builder(int rank, int processes, int workers) {
        return new Builder(rank, processes, workers);
    }

    /** @return the provider name (see {@link #PROVIDERS}) */
    public String provider() {
        return provider;
    }

    /** @return the job name (node names derive from it and the membership) */
    public String job() {
        return job;
    }

    /** @return this process's rank */
    public int rank() {
        return rank;
    }

    /**
     * @return one {@code [provider://]host:port} per rank (given, or {@code localhost:<rank>} for shm and
     *         loopback)
     */
    public List<String> members() {
        return members;
    }

    /**
     * @param r a rank
     * @return its member entry without a provider prefix: {@code host:port}
     */
    public String address(int r) {
        String m = members.get(r);
        int i = m.indexOf("://");
        return i < 0 ? m : m.substring(i + 3);
    }

    /**
     * @param r a rank
     * @return the provider its member entry names ({@code tcp://host:port}), or null
     */
    public String providerOf(int r) {
        String m = members.get(r);
        int i = m.indexOf("://");
        return i < 0 ? null : m.substring(0, i).toLowerCase(Locale.ROOT);
    }

    /** @return processes */
    public int processes() {
        return processes;
    }

    /** @return workers per process */
    public int workers() {
        return workers;
    }

    /** @return bytes per buffer (per pair of workers) */
    public int bufferSize() {
        return bufferSize;
    }

    /** @return the batching threshold */
    public int batchThreshold() {
        return batchThreshold;
    }

    /** @return the most bytes of fixed-width rows packed into one record */
    public int packBytes() {
        return packBytes;
    }

    /** @return the most bytes a worker sets aside (received rows its handlers could not take yet) */
    public int inboxBytes() {
        return inboxBytes;
    }

    /**
     * @return the most bytes of one exchange a worker sends another worker before that worker credits them back
     *         (it credits what its handlers took, or dropped); see {@link Builder#windowBytes}
     */
    public int windowBytes() {
        return windowBytes;
    }

    /** @return bound on joining the service */
    public Duration connectTimeout() {
        return connectTimeout;
    }

    /** @return how long a worker may wait for rows before it gives up */
    public Duration idleTimeout() {
        return idleTimeout;
    }

    /**
     * The node name of a rank. An accepted peer's rank is looked up among the names of the membership's ranks
     * (a name outside it is refused), not parsed out of the name.
     *
     * @param r a rank
     * @return the node name of that rank
     */
    public String nodeName(int r) {
        return job + "-r" + r;
    }

    /**
     * @param nodeName a node name
     * @return the rank of the membership with that name, or -1
     */
    public int rankOf(String nodeName) {
        for (int r = 0; r < processes; r++) {
            if (nodeName(r).equals(nodeName)) {
                return r;
            }
        }
        return -1;
    }

    /**
     * @param r a rank
     * @return the host of its member entry
     */
    public String host(int r) {
        String m = address(r);
        String h = m.substring(0, m.lastIndexOf(':'));
        return h.startsWith("[") && h.endsWith("]") ? h.substring(1, h.length() - 1) : h;
    }

    /**
     * Reads a membership file: one {@code host:port} per line in rank order; blank lines and lines starting with
     * {@code #} are skipped.
     *
     * @param file the file
     * @return the members
     * @throws IOException if it cannot be read
     */
    public static List<String> readMembers(Path file) throws IOException {
        List<String> out = new ArrayList<>();
        for (String l : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            String s = l.trim();
            if (!s.isEmpty() && !s.startsWith("#")) {
                out.add(s);
            }
        }
        return out;
    }

    static void checkMember(int r, String member) {
        String m = member;
        int scheme = m.indexOf("://");
        if (scheme >= 0) {
            String p = m.substring(0, scheme).toLowerCase(Locale.ROOT);
            if (p.equals(AUTO) || !PROVIDERS.contains(p)) {
                throw new IllegalArgumentException("member of rank " + r + " '" + member + "': provider=" + p
                    + " is not one of " + PROVIDERS.subList(1, PROVIDERS.size()));
            }
            m = m.substring(scheme + 3);
        }
        int colon = m.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("member of rank " + r + " '" + member + "' is not host:port");
        }
        int port;
        try {
            port = Integer.parseInt(m.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("member of rank " + r + " '" + member + "' has no numeric port");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("member of rank " + r + " '" + member + "': port=" + port
                + " out of range [0, 65535]");
        }
    }

    /** The default window, in packs (with their headers). */
    static final int WINDOW_PACKS = 8;

    /**
     * The smallest inbox with which stages that feed each other cannot deadlock, for two exchanges with rows in
     * flight and the default window ({@link #WINDOW_PACKS} packs).
     *
     * @param total all workers of all processes
     * @param pack bytes of fixed-width rows packed into one record
     * @param bufferSize the buffer size (bounds a record)
     * @return bytes, at most 2^30 (beyond that the guarantee does not hold)
     */
    static int guaranteedInbox(int total, int pack, int bufferSize) {
        return guaranteedInbox(total, pack, bufferSize, WINDOW_PACKS);
    }

    /**
     * Half of it (the other half holds what is credited back when set aside) takes a window of each of two
     * exchanges from every worker and one more record of any size (a worker reads on only while a whole record
     * fits).
     *
     * @param total all workers of all processes
     * @param pack bytes of fixed-width rows packed into one record
     * @param bufferSize the buffer size (bounds a record)
     * @param windowPacks the window, in packs with their headers
     * @return bytes, at most 2^30
     */
    static int guaranteedInbox(int total, int pack, int bufferSize, int windowPacks) {
        long half = 2L * total * windowPacks * (pack + Inbox.HEADER) + bufferSize + Inbox.HEADER;
        return (int) Math.min(1 << 30, 2 * half);
    }

    /** Builder. */
    public static final class Builder {
        private String provider = Fabrics.DEFAULT_PROVIDER;
        private String job = "rdmx";
        private final int rank;
        private List<String> members = List.of();
        private final int processes;
        private final int workers;
        private int bufferSize = 64 << 10;
        private int batchThreshold;
        private int packBytes;
        private int inboxBytes;
        private int windowBytes;
        private Duration connectTimeout = Duration.ofSeconds(60);
        private Duration idleTimeout = Duration.ofSeconds(120);

        private Builder(int rank, int processes, int workers) {
            this.rank = rank;
            this.processes = processes;
            this.workers = workers;
        }

        /**
         * @param v provider name, case-insensitive (see {@link ShuffleConfig#PROVIDERS})
         * @return this
         */
        public Builder provider(String v) {
            this.provider = v == null ? null : v.toLowerCase(Locale.ROOT);
            return this;
        }

        /**
         * @param v job name (letters, digits, '-')
         * @return this
         */
        public Builder job(String v) {
            this.job = v;
            return this;
        }

        /**
         * @param v one {@code host:port} per rank, in rank order (where each rank listens; for shm and loopback
         *          the port only names the rank)
         * @return this
         */
        public Builder members(List<String> v) {
            this.members = List.copyOf(v);
            return this;
        }

        /**
         * @param file a membership file (see {@link ShuffleConfig#readMembers})
         * @return this
         * @throws IOException if it cannot be read
         */
        public Builder membersFile(Path file) throws IOException {
            this.members = readMembers(file);
            return this;
        }

        /**
         * @param v bytes per buffer (power of two)
         * @return this
         */
        public Builder bufferSize(int v) {
            this.bufferSize = v;
            return this;
        }

        /**
         * @param v batching threshold in bytes (default: 16 KiB, at most a quarter of the buffer)
         * @return this
         */
        public Builder batchThreshold(int v) {
            this.batchThreshold = v;
            return this;
        }

        /**
         * @param v the most bytes of fixed-width rows packed into one record (default: 4 KiB, at most an eighth
         *          of the buffer)
         * @return this
         */
        public Builder packBytes(int v) {
            this.packBytes = v;
            return this;
        }

        /**
         * @param v the most bytes a worker sets aside for rows its handlers did not take yet (back-pressure:
         *          when it is full the worker stops reading and its senders' buffers fill; default: 1 MiB, at least
         *          two buffers and what two exchanges' windows need; see {@link #windowBytes})
         * @return this
         */
        public Builder inboxBytes(int v) {
            this.inboxBytes = v;
            return this;
        }

        /**
         * Per-exchange flow control. A worker sends another worker at most this many bytes of one exchange (each
         * record counted with its inbox header, {@value Inbox#HEADER} bytes; a larger record goes alone)
         * that the receiver has not credited back. The receiver credits what its handlers took, and what it sets
         * aside while half its inbox has room. So the rows of an exchange whose handler refuses (a stage waiting on
         * the next one) fill at most a window per sender in the other half, and cannot stop the receiver reading
         * the rows of other exchanges: stages that feed each other do not deadlock while {@code inboxBytes / 2 >=
         * exchanges with rows in flight x all workers x windowBytes + one buffer} (records no larger than the
         * window), which the defaults meet for two exchanges.
         *
         * @param v bytes, at least 64 (default: (inboxBytes / 2 - one buffer) / (2 x all workers), at least
         *          eight packs with their headers)
         * @return this
         */
        public Builder windowBytes(int v) {
            this.windowBytes = v;
            return this;
        }

        /**
         * @param v bound on joining
         * @return this
         */
        public Builder connectTimeout(Duration v) {
            this.connectTimeout = v;
            return this;
        }

        /**
         * @param v how long a worker may wait for rows
         * @return this
         */
        public Builder idleTimeout(Duration v) {
            this.idleTimeout = v;
            return this;
        }

        /**
         * @return the validated configuration
         * @throws IllegalArgumentException naming the bad key and value
         */
        public ShuffleConfig build() {
            if (processes < 1 || processes > 1024) {
                throw new IllegalArgumentException("processes=" + processes + " out of range [1, 1024]");
            }
            if (rank < 0 || rank >= processes) {
                throw new IllegalArgumentException("rank=" + rank + " out of range [0, processes=" + processes + ")");
            }
            if (workers < 1 || workers > 64) {
                throw new IllegalArgumentException("workers=" + workers + " out of range [1, 64]");
            }
            if (provider == null || !PROVIDERS.contains(provider)) {
                throw new IllegalArgumentException("provider=" + provider + " is not one of " + PROVIDERS);
            }
            if (job == null || !job.matches("[A-Za-z0-9-]{1,40}")) {
                throw new IllegalArgumentException("job=" + job + " must be 1-40 letters, digits or '-'");
            }
            List<String> m = members;
            if (m.isEmpty() && !provider.equals(AUTO) && sameHostOnly(provider)) {
                List<String> d = new ArrayList<>();
                for (int r = 0; r < processes; r++) {
                    d.add("localhost:" + r);
                }
                m = List.copyOf(d);
            }
            if (m.size() != processes) {
                throw new IllegalArgumentException("provider " + provider + " needs one member (host:port) per "
                    + "process: members=" + m.size() + ", processes=" + processes);
            }
            Set<String> seen = new HashSet<>();
            String pinned = null;
            int pinnedRank = -1;
            for (int r = 0; r < m.size(); r++) {
                checkMember(r, m.get(r));
                int i = m.get(r).indexOf("://");
                String p = i < 0 ? null : m.get(r).substring(0, i).toLowerCase(Locale.ROOT);
                if (p != null && pinned != null && !p.equals(pinned)) {
                    // the pair of two pinned ranks would have two providers
                    throw new IllegalArgumentException("members of rank " + pinnedRank + " and rank " + r
                        + " name different providers (" + pinned + ", " + p + "): a pair of ranks has one");
                }
                if (p != null) {
                    pinned = p;
                    pinnedRank = r;
                }
                if (!seen.add(i < 0 ? m.get(r) : m.get(r).substring(i + 3))) {
                    throw new IllegalArgumentException("member of rank " + r + " '" + m.get(r)
                        + "' is listed twice");
                }
            }
            if (bufferSize < 1024 || Integer.bitCount(bufferSize) != 1) {
                throw new IllegalArgumentException("bufferSize=" + bufferSize + " must be a power of two >= 1024");
            }
            int threshold = batchThreshold == 0 ? Math.min(16 << 10, bufferSize / 4) : batchThreshold;
            if (threshold < 1 || threshold > bufferSize / 4) {
                throw new IllegalArgumentException("batchThreshold=" + threshold
                    + " out of range [1, bufferSize/4=" + bufferSize / 4 + "]");
            }
            int pack = packBytes == 0 ? Math.min(4 << 10, bufferSize / 8) : packBytes;
            if (pack < 8 || pack > bufferSize / 8) {
                throw new IllegalArgumentException("packBytes=" + pack + " out of range [8, bufferSize/8="
                    + bufferSize / 8 + "]");
            }
            int total = processes * workers;
            int inbox = inboxBytes == 0 ? Math.max(Math.max(1 << 20, 2 * bufferSize),
                guaranteedInbox(total, pack, bufferSize)) : inboxBytes;
            if (inbox < 2 * bufferSize || inbox > (1 << 30)) {
                throw new IllegalArgumentException("inboxBytes=" + inbox + " out of range [2 * bufferSize="
                    + 2 * bufferSize + ", 2^30]");
            }
            int window = windowBytes == 0 ? Math.max(WINDOW_PACKS * (pack + Inbox.HEADER),
                (inbox / 2 - (bufferSize + Inbox.HEADER)) / (2 * total)) : windowBytes;
            if (window < 64 || window > (1 << 30)) {
                throw new IllegalArgumentException("windowBytes=" + window + " out of range [64, 2^30]");
            }
            return new ShuffleConfig(this, m, threshold, pack, inbox, window);
        }
    }
}
