package io.rdmx.transport;

import java.time.Duration;
import java.util.Objects;
import java.util.UUID;

/**
 * Options of a {@link Node}, validated once by {@link Builder#build()}. Every key has a name constant (the
 * system property that overrides the default) and a default constant.
 */
public final class NodeOptions {
    /** System property: outstanding send-queue requests per connection. */
    public static final String SEND_QUEUE_DEPTH_PROP = "rdmx.sendQueueDepth";
    /** Default send-queue depth. */
    public static final int SEND_QUEUE_DEPTH_DEFAULT = 1024;
    /** System property: posted receives per connection. */
    public static final String RECV_QUEUE_DEPTH_PROP = "rdmx.recvQueueDepth";
    /** Default receive-queue depth. */
    public static final int RECV_QUEUE_DEPTH_DEFAULT = 1024;
    /** System property: largest single transfer (WRITE or SEND) in bytes. */
    public static final String MAX_TRANSFER_PROP = "rdmx.maxTransferSize";
    /** Default largest transfer: 16 MiB. */
    public static final int MAX_TRANSFER_DEFAULT = 16 << 20;
    /** System property: milliseconds of silence after which a peer is declared hung. */
    public static final String PEER_TIMEOUT_PROP = "rdmx.peerTimeoutMs";
    /** Default peer timeout. */
    public static final Duration PEER_TIMEOUT_DEFAULT = Duration.ofSeconds(10);
    /** System property: the cluster secret checked at connection setup (stream providers). */
    public static final String SECRET_PROP = "rdmx.secret";
    /** Environment variable: the cluster secret. */
    public static final String SECRET_ENV = "RDMX_SECRET";
    /**
     * System property: a file holding the cluster secret (its first line), readable by its owner only (mode 0600 or
     * 0400), owned by this process's user. Unlike {@link #SECRET_PROP} on the command line, the secret itself does
     * not show in {@code /proc/<pid>/cmdline}.
     */
    public static final String SECRET_FILE_PROP = "rdmx.secretFile";
    /** Environment variable: the file holding the cluster secret. */
    public static final String SECRET_FILE_ENV = "RDMX_SECRET_FILE";
    /**
     * System property: {@code true} makes a node of a network provider (tcp beyond loopback; verbs and disni always)
     * that would listen without a cluster secret refuse to open, instead of warning.
     */
    public static final String REQUIRE_SECRET_PROP = "rdmx.requireSecret";
    /** Default: warn, do not refuse. */
    public static final boolean REQUIRE_SECRET_DEFAULT = false;
    /** System property: milliseconds a connection setup may take before it is abandoned (stream providers). */
    public static final String HANDSHAKE_TIMEOUT_PROP = "rdmx.handshakeTimeoutMs";
    /** Default handshake timeout. */
    public static final Duration HANDSHAKE_TIMEOUT_DEFAULT = Duration.ofSeconds(10);
    /** System property: accepted connections that may be in their handshake at once (stream providers). */
    public static final String MAX_PENDING_HANDSHAKES_PROP = "rdmx.maxPendingHandshakes";
    /** Default cap on pending handshakes. */
    public static final int MAX_PENDING_HANDSHAKES_DEFAULT = 256;
    /**
     * System property: accepted connections from one source address that may be in their handshake at once (tcp;
     * shm peers are processes of this user on this host: only the node-wide cap applies).
     */
    public static final String MAX_PENDING_HANDSHAKES_PER_SOURCE_PROP = "rdmx.maxPendingHandshakesPerSource";
    /** Default cap on pending handshakes per source address. */
    public static final int MAX_PENDING_HANDSHAKES_PER_SOURCE_DEFAULT = 16;
    /** System property: connections a node accepts at most (established ones, of every peer). */
    public static final String MAX_CONNECTIONS_PROP = "rdmx.maxConnections";
    /** Default cap on accepted connections. */
    public static final int MAX_CONNECTIONS_DEFAULT = 4096;
    /** System property: connections a node accepts at most from one source address (tcp). */
    public static final String MAX_CONNECTIONS_PER_SOURCE_PROP = "rdmx.maxConnectionsPerSource";
    /** Default cap on accepted connections per source address. */
    public static final int MAX_CONNECTIONS_PER_SOURCE_DEFAULT = 1024;

    private final String name;
    private final String bindAddress;
    private final int sendQueueDepth;
    private final int recvQueueDepth;
    private final int maxTransferSize;
    private final Duration peerTimeout;
    private final String secret;
    private final String secretSource;
    private final boolean requireSecret;
    private final int acceptBacklog;
    private final Duration handshakeTimeout;
    private final int maxPendingHandshakes;
    private final int maxPendingHandshakesPerSource;
    private final int maxConnections;
    private final int maxConnectionsPerSource;

    private NodeOptions(Builder b) {
        this.name = b.name;
        this.bindAddress = b.bindAddress;
        this.sendQueueDepth = b.sendQueueDepth;
        this.recvQueueDepth = b.recvQueueDepth;
        this.maxTransferSize = b.maxTransferSize;
        this.peerTimeout = b.peerTimeout;
        this.secret = b.secret;
        this.secretSource = b.secretSource;
        this.requireSecret = b.requireSecret;
        this.acceptBacklog = b.acceptBacklog;
        this.handshakeTimeout = b.handshakeTimeout;
        this.maxPendingHandshakes = b.maxPendingHandshakes;
        this.maxPendingHandshakesPerSource = b.maxPendingHandshakesPerSource;
        this.maxConnections = b.maxConnections;
        this.maxConnectionsPerSource = b.maxConnectionsPerSource;
    }

    /**
     * A builder holding the defaults (and system-property overrides).
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Defaults with a generated name.
     *
     * @return the options
     */
    public static NodeOptions defaults() {
        return builder().build();
    }

    /** @return the node's name, unique among the nodes it talks to */
    public String name() {
        return name;
    }

    /** @return where to listen: {@code host:port} for tcp, a directory for shm; null for the provider default */
    public String bindAddress() {
        return bindAddress;
    }

    /** @return outstanding send-queue requests per connection */
    public int sendQueueDepth() {
        return sendQueueDepth;
    }

    /** @return posted receives per connection */
    public int recvQueueDepth() {
        return recvQueueDepth;
    }

    /** @return the largest single WRITE or SEND, in bytes */
    public int maxTransferSize() {
        return maxTransferSize;
    }

    /** @return silence after which a peer is declared hung */
    public Duration peerTimeout() {
        return peerTimeout;
    }

    /** @return the cluster secret, or null */
    public String secret() {
        return secret;
    }

    /**
     * @return where the secret came from: {@code code}, {@code system property rdmx.secret}, {@code environment
     *     RDMX_SECRET}, {@code file <path>}, or {@code none}
     */
    public String secretSource() {
        return secret == null ? "none" : secretSource;
    }

    /** @return true if a node listening beyond loopback without a secret refuses to open */
    public boolean requireSecret() {
        return requireSecret;
    }

    /** @return how many accepted connections may wait for {@link Node#accept} */
    public int acceptBacklog() {
        return acceptBacklog;
    }

    /** @return how long a connection setup may take before it is abandoned */
    public Duration handshakeTimeout() {
        return handshakeTimeout;
    }

    /** @return how many accepted connections may be in their handshake at once; more are refused at once */
    public int maxPendingHandshakes() {
        return maxPendingHandshakes;
    }

    /** @return how many accepted connections from one source address may be in their handshake at once */
    public int maxPendingHandshakesPerSource() {
        return maxPendingHandshakesPerSource;
    }

    /** @return how many accepted connections the node keeps at most */
    public int maxConnections() {
        return maxConnections;
    }

    /** @return how many accepted connections from one source address the node keeps at most */
    public int maxConnectionsPerSource() {
        return maxConnectionsPerSource;
    }

    @Override
    public String toString() {
        return "NodeOptions{name=" + name + ", bindAddress=" + bindAddress + ", sendQueueDepth=" + sendQueueDepth
            + ", recvQueueDepth=" + recvQueueDepth + ", maxTransferSize=" + maxTransferSize
            + ", peerTimeout=" + peerTimeout + ", secret=" + (secret == null ? "none" : "set (" + secretSource + ")")
            + ", requireSecret=" + requireSecret
            + ", handshakeTimeout=" + handshakeTimeout + ", maxPendingHandshakes=" + maxPendingHandshakes
            + ", maxPendingHandshakesPerSource=" + maxPendingHandshakesPerSource + ", maxConnections=" + maxConnections
            + ", maxConnectionsPerSource=" + maxConnectionsPerSource + "}";
    }

    /** Builder of {@link NodeOptions}. */
    public static final class Builder {
        private String name = "node-" + UUID.randomUUID().toString().substring(0, 8);
        private String bindAddress;
        private int sendQueueDepth = Integer.getInteger(SEND_QUEUE_DEPTH_PROP, SEND_QUEUE_DEPTH_DEFAULT);
        private int recvQueueDepth = Integer.getInteger(RECV_QUEUE_DEPTH_PROP, RECV_QUEUE_DEPTH_DEFAULT);
        private int maxTransferSize = Integer.getInteger(MAX_TRANSFER_PROP, MAX_TRANSFER_DEFAULT);
        private Duration peerTimeout = Duration.ofMillis(
            Long.getLong(PEER_TIMEOUT_PROP, PEER_TIMEOUT_DEFAULT.toMillis()));
        private String secret;
        private String secretSource;
        private java.nio.file.Path secretFile;
        private boolean requireSecret = io.rdmx.transport.internal.SystemProperties.bool(
            REQUIRE_SECRET_PROP, REQUIRE_SECRET_DEFAULT);
        private int acceptBacklog = 128;
        private Duration handshakeTimeout = Duration.ofMillis(
            Long.getLong(HANDSHAKE_TIMEOUT_PROP, HANDSHAKE_TIMEOUT_DEFAULT.toMillis()));
        private int maxPendingHandshakes = Integer.getInteger(MAX_PENDING_HANDSHAKES_PROP,
            MAX_PENDING_HANDSHAKES_DEFAULT);
        private int maxPendingHandshakesPerSource = Integer.getInteger(MAX_PENDING_HANDSHAKES_PER_SOURCE_PROP,
            MAX_PENDING_HANDSHAKES_PER_SOURCE_DEFAULT);
        private int maxConnections = Integer.getInteger(MAX_CONNECTIONS_PROP, MAX_CONNECTIONS_DEFAULT);
        private int maxConnectionsPerSource = Integer.getInteger(MAX_CONNECTIONS_PER_SOURCE_PROP,
            MAX_CONNECTIONS_PER_SOURCE_DEFAULT);

        private Builder() {
            String prop = System.getProperty(SECRET_PROP);
            String env = System.getenv(SECRET_ENV);
            String file = firstNonBlank(System.getProperty(SECRET_FILE_PROP), System.getenv(SECRET_FILE_ENV));
            if (prop != null && !prop.isBlank()) {
                secret = prop;
                secretSource = "system property " + SECRET_PROP;
            } else if (env != null && !env.isBlank()) {
                secret = env;
                secretSource = "environment " + SECRET_ENV;
            } else if (file != null) {
                secretFile = java.nio.file.Paths.get(file);
            }
        }

        private static String firstNonBlank(String a, String b) {
            if (a != null && !a.isBlank()) {
                return a;
            }
            return b != null && !b.isBlank() ? b : null;
        }

        /**
         * @param v the node name (letters, digits, {@code -_.}, at most 64 characters)
         * @return this
         */
        public Builder name(String v) {
            this.name = v;
            return this;
        }

        /**
         * @param v where to listen, or null for the provider default
         * @return this
         */
        public Builder bindAddress(String v) {
            this.bindAddress = v;
            return this;
        }

        /**
         * @param v outstanding send requests per connection
         * @return this
         */
        public Builder sendQueueDepth(int v) {
            this.sendQueueDepth = v;
            return this;
        }

        /**
         * @param v posted receives per connection
         * @return this
         */
        public Builder recvQueueDepth(int v) {
            this.recvQueueDepth = v;
            return this;
        }

        /**
         * @param v the largest single transfer in bytes
         * @return this
         */
        public Builder maxTransferSize(int v) {
            this.maxTransferSize = v;
            return this;
        }

        /**
         * @param v silence after which a peer is declared hung
         * @return this
         */
        public Builder peerTimeout(Duration v) {
            this.peerTimeout = v;
            return this;
        }

        /**
         * @param v the cluster secret, or null for none
         * @return this
         */
        public Builder secret(String v) {
            this.secret = v;
            this.secretSource = "code";
            this.secretFile = null;
            return this;
        }

        /**
         * @param v a file holding the cluster secret (its first line), owned by this process's user and readable
         *          by that user only; read by {@link #build()}
         * @return this
         */
        public Builder secretFile(java.nio.file.Path v) {
            this.secretFile = v;
            this.secret = null;
            return this;
        }

        /**
         * @param v true: a node listening beyond loopback without a secret refuses to open
         * @return this
         */
        public Builder requireSecret(boolean v) {
            this.requireSecret = v;
            return this;
        }

        /**
         * @param v connections that may wait for accept
         * @return this
         */
        public Builder acceptBacklog(int v) {
            this.acceptBacklog = v;
            return this;
        }

        /**
         * @param v how long a connection setup may take before it is abandoned (at least 100 ms)
         * @return this
         */
        public Builder handshakeTimeout(Duration v) {
            this.handshakeTimeout = v;
            return this;
        }

        /**
         * @param v accepted connections that may be in their handshake at once
         * @return this
         */
        public Builder maxPendingHandshakes(int v) {
            this.maxPendingHandshakes = v;
            return this;
        }

        /**
         * @param v accepted connections from one source address that may be in their handshake at once
         * @return this
         */
        public Builder maxPendingHandshakesPerSource(int v) {
            this.maxPendingHandshakesPerSource = v;
            return this;
        }

        /**
         * @param v accepted connections the node keeps at most
         * @return this
         */
        public Builder maxConnections(int v) {
            this.maxConnections = v;
            return this;
        }

        /**
         * @param v accepted connections from one source address the node keeps at most
         * @return this
         */
        public Builder maxConnectionsPerSource(int v) {
            this.maxConnectionsPerSource = v;
            return this;
        }

        /**
         * Validates every option once.
         *
         * @return the options
         * @throws IllegalArgumentException naming the first bad option and its value
         */
        public NodeOptions build() {
            Objects.requireNonNull(name, "name");
            if (!name.matches("[A-Za-z0-9_.-]{1,64}")) {
                throw new IllegalArgumentException("invalid node name=" + name
                    + " (1-64 characters of letters, digits, '-', '_', '.')");
            }
            check("sendQueueDepth", sendQueueDepth, 1, 1 << 20);
            check("recvQueueDepth", recvQueueDepth, 1, 1 << 20);
            check("maxTransferSize", maxTransferSize, 1, 1 << 30);
            check("acceptBacklog", acceptBacklog, 1, 1 << 16);
            Objects.requireNonNull(peerTimeout, "peerTimeout");
            if (peerTimeout.toMillis() < 100) {
                throw new IllegalArgumentException("peerTimeout=" + peerTimeout + " is below the minimum of 100 ms");
            }
            check("maxPendingHandshakes", maxPendingHandshakes, 1, 1 << 16);
            check("maxPendingHandshakesPerSource", maxPendingHandshakesPerSource, 1, 1 << 16);
            check("maxConnections", maxConnections, 1, 1 << 20);
            check("maxConnectionsPerSource", maxConnectionsPerSource, 1, 1 << 20);
            Objects.requireNonNull(handshakeTimeout, "handshakeTimeout");
            if (handshakeTimeout.toMillis() < 100) {
                throw new IllegalArgumentException("handshakeTimeout=" + handshakeTimeout
                    + " is below the minimum of 100 ms");
            }
            if (secret == null && secretFile != null) {
                secret = readSecretFile(secretFile);
                secretSource = "file " + secretFile;
            }
            if (secret != null && secret.isEmpty()) {
                throw new IllegalArgumentException("secret must not be empty (use null for none)");
            }
            return new NodeOptions(this);
        }

        /** The first line of an owner-only file of this user; errors name the file and what is wrong. */
        private static String readSecretFile(java.nio.file.Path f) {
            try {
                java.nio.file.attribute.PosixFileAttributes a = java.nio.file.Files.readAttributes(f,
                    java.nio.file.attribute.PosixFileAttributes.class);
                String owner = a.owner().getName();
                String me = System.getProperty("user.name");
                if (!owner.equals(me)) {
                    throw new IllegalArgumentException("secret file " + f + " is owned by user=" + owner
                        + ", not by this process's user=" + me + ": refused");
                }
                for (java.nio.file.attribute.PosixFilePermission p : a.permissions()) {
                    if (!p.name().startsWith("OWNER_")) {
                        throw new IllegalArgumentException("secret file " + f + " has mode="
                            + java.nio.file.attribute.PosixFilePermissions.toString(a.permissions())
                            + ": other users may read it; make it owner-only (chmod 600)");
                    }
                }
                if (a.size() > 4096) {
                    throw new IllegalArgumentException("secret file " + f + " has size=" + a.size()
                        + " bytes, more than 4096");
                }
                String text = java.nio.file.Files.readString(f, java.nio.charset.StandardCharsets.UTF_8);
                int nl = text.indexOf('\n');
                String line = (nl >= 0 ? text.substring(0, nl) : text).strip();
                if (line.isEmpty()) {
                    throw new IllegalArgumentException("secret file " + f + " is empty");
                }
                return line;
            } catch (java.io.IOException e) {
                throw new IllegalArgumentException("cannot read secret file " + f + ": " + e, e);
            } catch (UnsupportedOperationException e) {
                throw new IllegalArgumentException("secret file " + f + ": its permissions cannot be checked on this"
                    + " file system (no POSIX attributes)", e);
            }
        }

        private static void check(String key, int value, int min, int max) {
            if (value < min || value > max) {
                throw new IllegalArgumentException(key + "=" + value + " out of range [" + min + ", " + max + "]");
            }
        }
    }
}
