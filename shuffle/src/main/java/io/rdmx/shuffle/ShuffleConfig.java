package io.rdmx.shuffle;

import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * How a process joins a shuffle service: its rank among the processes, their endpoints, the workers per process
 * and the transport. Validated once by {@link Builder#build()}.
 */
public final class ShuffleConfig {
    /** Transports. */
    public enum Transport {
        /** Ring channels over the shm provider (the embedded default). */
        SHM,
        /** Ring channels over the tcp provider. */
        TCP,
        /** The sockets baseline: non-blocking java.nio channels copying into incoming buffers. */
        SOCKETS
    }

    private final Transport transport;
    private final String job;
    private final int rank;
    private final List<String> endpoints;
    private final int processes;
    private final int workers;
    private final int bufferSize;
    private final int batchThreshold;
    private final Duration connectTimeout;
    private final Duration idleTimeout;

    private ShuffleConfig(Builder b) {
        this.transport = b.transport;
        this.job = b.job;
        this.rank = b.rank;
        this.endpoints = b.endpoints;
        this.processes = b.processes;
        this.workers = b.workers;
        this.bufferSize = b.bufferSize;
        this.batchThreshold = b.batchThreshold;
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

    /** @return the transport */
    public Transport transport() {
        return transport;
    }

    /** @return the job name (node names derive from it) */
    public String job() {
        return job;
    }

    /** @return this process's rank */
    public int rank() {
        return rank;
    }

    /** @return the endpoint of each rank (tcp and sockets: {@code host:port}; shm: derived if empty) */
    public List<String> endpoints() {
        return endpoints;
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

    /** @return bound on joining the service */
    public Duration connectTimeout() {
        return connectTimeout;
    }

    /** @return how long a worker may wait for rows before it gives up */
    public Duration idleTimeout() {
        return idleTimeout;
    }

    /**
     * @param r a rank
     * @return the node name of that rank
     */
    public String nodeName(int r) {
        return job + "-r" + r;
    }

    /** Builder. */
    public static final class Builder {
        private Transport transport = Transport.SHM;
        private String job = "rdmx";
        private final int rank;
        private List<String> endpoints = List.of();
        private final int processes;
        private final int workers;
        private int bufferSize = 64 << 10;
        private int batchThreshold = 16 << 10;
        private Duration connectTimeout = Duration.ofSeconds(60);
        private Duration idleTimeout = Duration.ofSeconds(120);

        private Builder(int rank, int processes, int workers) {
            this.rank = rank;
            this.processes = processes;
            this.workers = workers;
        }

        /**
         * @param v transport
         * @return this
         */
        public Builder transport(Transport v) {
            this.transport = v;
            return this;
        }

        /**
         * @param v transport name (shm, tcp, sockets)
         * @return this
         */
        public Builder transport(String v) {
            this.transport = Transport.valueOf(v.toUpperCase(Locale.ROOT));
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
         * @param v one endpoint per rank
         * @return this
         */
        public Builder endpoints(List<String> v) {
            this.endpoints = List.copyOf(v);
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
         * @param v batching threshold in bytes
         * @return this
         */
        public Builder batchThreshold(int v) {
            this.batchThreshold = v;
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
            if (!job.matches("[A-Za-z0-9-]{1,40}")) {
                throw new IllegalArgumentException("job=" + job + " must be 1-40 letters, digits or '-'");
            }
            if (transport != Transport.SHM && endpoints.size() != processes) {
                throw new IllegalArgumentException("transport " + transport + " needs one endpoint per process: "
                    + "endpoints=" + endpoints.size() + ", processes=" + processes);
            }
            if (bufferSize < 1024 || Integer.bitCount(bufferSize) != 1) {
                throw new IllegalArgumentException("bufferSize=" + bufferSize + " must be a power of two >= 1024");
            }
            if (batchThreshold < 1 || batchThreshold > bufferSize / 4) {
                throw new IllegalArgumentException("batchThreshold=" + batchThreshold
                    + " out of range [1, bufferSize/4=" + bufferSize / 4 + "]");
            }
            return new ShuffleConfig(this);
        }
    }
}
