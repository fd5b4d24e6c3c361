package io.rdmx.channel;

import io.rdmx.spi.Platform;
import io.rdmx.transport.internal.SystemProperties;
import java.time.Duration;

/**
 * Configuration of a {@link ChannelEngine}, validated once by {@link Builder#build()}. Every key has a name
 * (system property overriding the default) and a default.
 */
public final class ChannelConfig {
    /** How a receiver learns of new data. */
    public enum Notification {
        /** A batched SEND carrying the new head of each ring. */
        SEND,
        /** The immediate of a WRITE_WITH_IMM (ring index and length); no extra message. */
        WRITE_WITH_IMM
    }

    /** System property: bytes per circular buffer (a power of two). */
    public static final String RING_CAPACITY_PROP = "rdmx.channel.ringCapacity";
    /** Default ring capacity: 256 KiB. */
    public static final int RING_CAPACITY_DEFAULT = 256 << 10;
    /** System property: a WRITE is posted once this many bytes wait (or on flush). */
    public static final String BATCH_THRESHOLD_PROP = "rdmx.channel.batchThreshold";
    /**
     * Default batching threshold: 16 KiB (the paper's value for software RDMA) or the platform's tuned value, at
     * most a quarter ring.
     */
    public static final int BATCH_THRESHOLD_DEFAULT = 16 << 10;
    /**
     * System property: where the peer's ring is mapped ({@code shm}), a writer publishes its head once this many
     * bytes wait (or on flush, or after the flush interval). Publishing is a release store, but it wakes a parked
     * reader (a system call and a context switch on each side), so a mapped ring batches more than the WRITE path.
     * An explicit {@link #BATCH_THRESHOLD_PROP} ({@link Builder#batchThreshold}) sets both.
     */
    public static final String MAPPED_BATCH_THRESHOLD_PROP = "rdmx.channel.mappedBatchThreshold";
    /**
     * Default mapped batching threshold: 64 KiB (the batch of a socket writer's 64 KiB buffer, one wake-up per
     * batch as there), at most a quarter ring.
     */
    public static final int MAPPED_BATCH_THRESHOLD_DEFAULT = 64 << 10;
    /**
     * System property: the most WRITEs of one ring in flight at once (posted, completion not yet seen), so a writer
     * posts its next batch without waiting for the previous one's completion. Per peer the windows of all rings
     * together stay within the connection's send queue ({@code rdmx.sendQueueDepth}): a smaller window is used
     * where they would not fit. With {@link Notification#WRITE_WITH_IMM} the window is 1 (each immediate takes a
     * receive the peer posted for that ring).
     */
    public static final String WRITES_IN_FLIGHT_PROP = "rdmx.channel.writesInFlight";
    /** Default WRITEs in flight per ring. */
    public static final int WRITES_IN_FLIGHT_DEFAULT = 4;
    /**
     * System property: the most notification SENDs to one peer in flight at once (1 or 2). While they are all in
     * flight, new notifications are batched into the next one.
     */
    public static final String NOTIFICATIONS_IN_FLIGHT_PROP = "rdmx.channel.notificationsInFlight";
    /** Default notification SENDs in flight per peer. */
    public static final int NOTIFICATIONS_IN_FLIGHT_DEFAULT = 2;
    /** System property: a receiver reports consumption after this many bytes. */
    public static final String READ_NOTIFY_PROP = "rdmx.channel.readNotifyThreshold";
    /** Default read-notification threshold: a quarter of the ring (0 selects it). */
    public static final int READ_NOTIFY_DEFAULT = 0;
    /** System property: SEND or WRITE_WITH_IMM. */
    public static final String NOTIFICATION_PROP = "rdmx.channel.notification";
    /** Default notification. */
    public static final Notification NOTIFICATION_DEFAULT = Notification.SEND;
    /** System property: microseconds after which unsent data is flushed without a flush call (0: never). */
    public static final String FLUSH_INTERVAL_PROP = "rdmx.channel.flushIntervalUs";
    /** Default flush interval: 2 ms. */
    public static final long FLUSH_INTERVAL_DEFAULT_US = 2000;
    /** System property: spins before a blocked worker parks (0: park at once). */
    public static final String SPINS_PROP = "rdmx.channel.spinsBeforePark";
    /** Default spins: park at once. */
    public static final int SPINS_DEFAULT = 0;
    /**
     * System property: how a blocked reader or writer waits, by name: {@code park} (default: the paper's blocking
     * workers), {@code spin-park} ({@link Idle#SPIN_THEN_PARK}) or {@code busy-spin}. An explicit
     * {@value #SPINS_PROP} overrides the spin count the name selects.
     */
    public static final String IDLE_PROP = "rdmx.channel.idle";

    /**
     * System property: {@code true} (default) runs the engine's duty cycle ({@link ChannelEngine#doWork()}) on a
     * network thread of its own that sleeps on the completion queue; {@code false} starts no such thread: the
     * application's threads run it (a blocked reader or writer does, between its checks).
     */
    public static final String ENGINE_THREAD_PROP = "rdmx.channel.engineThread";

    /** How a blocked reader or writer waits. */
    public enum Idle {
        /** Sleep at once (futex or park); a waker pays one system call. */
        PARK("park", 0),
        /** Re-check 10 000 times ({@code Thread.onSpinWait}, some microseconds), then sleep. */
        SPIN_THEN_PARK("spin-park", 10_000),
        /** Re-check until the timeout, never sleep: the lowest latency, a core per waiting thread. */
        BUSY_SPIN("busy-spin", Integer.MAX_VALUE);

        private final String label;
        private final int spins;

        Idle(String label, int spins) {
            this.label = label;
            this.spins = spins;
        }

        /** @return the name used by {@value #IDLE_PROP} */
        public String label() {
            return label;
        }

        /** @return the spins before sleeping this strategy stands for */
        public int spins() {
            return spins;
        }

        /**
         * @param name a {@link #label()} (case-insensitive)
         * @return the strategy
         * @throws IllegalArgumentException naming the value and the choices
         */
        public static Idle of(String name) {
            return SystemProperties.choice(IDLE_PROP, name, values(), Idle::label);
        }

        /**
         * @param spins a spin count
         * @return the strategy it amounts to
         */
        static Idle ofSpins(int spins) {
            return spins == 0 ? PARK : spins == Integer.MAX_VALUE ? BUSY_SPIN : SPIN_THEN_PARK;
        }
    }
    /**
     * System property: {@code true} lets a channel whose both ends can map each other's memory (shm, loopback)
     * claim records directly in the peer's ring, with positions in shared memory and a doorbell only for a
     * sleeping side; {@code false} keeps WRITEs and notifications on every provider.
     */
    public static final String MAPPED_PROP = "rdmx.channel.mapped";
    /** Default: map where both ends can. */
    public static final boolean MAPPED_DEFAULT = true;

    /**
     * System property: the most workers a peer may announce in its HELLO; a peer announcing more is refused with an
     * error naming the value and this limit, before anything is allocated for it.
     */
    public static final String MAX_PEER_WORKERS_PROP = "rdmx.channel.maxPeerWorkers";
    /** Default most workers of a peer. */
    public static final int MAX_PEER_WORKERS_DEFAULT = 64;
    /**
     * System property: the most bytes of ring memory (the pair region) one peer may make this engine allocate; what
     * the peer's HELLO implies beyond it is refused, naming both.
     */
    public static final String MAX_PEER_MEMORY_PROP = "rdmx.channel.maxPeerMemory";
    /** Default ring memory per peer: 256 MiB. */
    public static final long MAX_PEER_MEMORY_DEFAULT = 256L << 20;
    /**
     * System property: the most bytes of ring memory all peers of one engine together may make it allocate; a peer
     * whose pair region would pass it is refused, naming the total, the request and the limit.
     */
    public static final String MAX_RING_MEMORY_PROP = "rdmx.channel.maxRingMemory";
    /** Default ring memory of an engine: 2 GiB. */
    public static final long MAX_RING_MEMORY_DEFAULT = 2L << 30;

    private final int workers;
    private final int maxPeerWorkers;
    private final long maxPeerMemory;
    private final long maxRingMemory;
    private final int ringCapacity;
    private final int batchThreshold;
    private final int mappedBatchThreshold;
    private final int readNotifyThreshold;
    private final int writesInFlight;
    private final int notificationsInFlight;
    private final Notification notification;
    private final Duration flushInterval;
    private final int spinsBeforePark;
    private final boolean mapped;
    private final boolean engineThread;

    private ChannelConfig(Builder b) {
        this.workers = b.workers;
        this.maxPeerWorkers = b.maxPeerWorkers;
        this.maxPeerMemory = b.maxPeerMemory;
        this.maxRingMemory = b.maxRingMemory;
        this.ringCapacity = b.ringCapacity;
        this.batchThreshold = b.batchThreshold == 0 ? Math.max(1, Math.min(
            Platform.hooks().tunedDefault(BATCH_THRESHOLD_PROP).orElse(BATCH_THRESHOLD_DEFAULT), b.ringCapacity / 4))
            : b.batchThreshold;
        this.mappedBatchThreshold = b.batchThreshold != 0 ? b.batchThreshold
            : b.mappedBatchThreshold == 0 ? Math.max(1, Math.min(MAPPED_BATCH_THRESHOLD_DEFAULT, b.ringCapacity / 4))
            : b.mappedBatchThreshold;
        this.readNotifyThreshold = b.readNotifyThreshold == 0 ? b.ringCapacity / 4 : b.readNotifyThreshold;
        this.notification = b.notification;
        this.flushInterval = b.flushInterval;
        this.spinsBeforePark = b.spins;
        this.writesInFlight = b.writesInFlight;
        this.notificationsInFlight = b.notificationsInFlight;
        this.mapped = b.mapped;
        this.engineThread = b.engineThread;
    }

    /**
     * @param workers worker threads of this process
     * @return a builder with the defaults
     */
    public static Builder builder(int workers) {
        return new Builder(workers);
    }

    /** @return local workers */
    public int workers() {
        return workers;
    }

    /** @return the most workers a peer may announce ({@link #MAX_PEER_WORKERS_PROP}) */
    public int maxPeerWorkers() {
        return maxPeerWorkers;
    }

    /** @return the most ring memory one peer may make this engine allocate ({@link #MAX_PEER_MEMORY_PROP}) */
    public long maxPeerMemory() {
        return maxPeerMemory;
    }

    /** @return the most ring memory all peers of an engine may make it allocate ({@link #MAX_RING_MEMORY_PROP}) */
    public long maxRingMemory() {
        return maxRingMemory;
    }

    /** @return bytes per ring */
    public int ringCapacity() {
        return ringCapacity;
    }

    /** @return bytes that trigger a WRITE */
    public int batchThreshold() {
        return batchThreshold;
    }

    /**
     * @return bytes after which a writer to a mapped ring ({@code shm}) publishes its head and wakes a parked
     *         reader: {@link #MAPPED_BATCH_THRESHOLD_PROP}, or {@link #batchThreshold()} where that was set
     *         explicitly
     */
    public int mappedBatchThreshold() {
        return mappedBatchThreshold;
    }

    /** @return bytes consumed before a credit is sent */
    public int readNotifyThreshold() {
        return readNotifyThreshold;
    }

    /** @return the notification kind */
    public Notification notification() {
        return notification;
    }

    /** @return the time bound on unsent data; zero for none */
    public Duration flushInterval() {
        return flushInterval;
    }

    /**
     * @return the most WRITEs of one ring in flight at once, as configured (a peer may use fewer:
     *         {@link #WRITES_IN_FLIGHT_PROP})
     */
    public int writesInFlight() {
        return writesInFlight;
    }

    /** @return the most notification SENDs to one peer in flight at once ({@link #NOTIFICATIONS_IN_FLIGHT_PROP}) */
    public int notificationsInFlight() {
        return notificationsInFlight;
    }

    /** @return spins before parking */
    public int spinsBeforePark() {
        return spinsBeforePark;
    }

    /** @return true if the engine runs its duty cycle on a network thread of its own */
    public boolean engineThread() {
        return engineThread;
    }

    /** @return how a blocked reader or writer waits (what {@link #spinsBeforePark()} amounts to) */
    public Idle idle() {
        return Idle.ofSpins(spinsBeforePark);
    }

    /** @return true if channels map the peer's memory where both ends can ({@link #MAPPED_PROP}) */
    public boolean mapped() {
        return mapped;
    }

    /**
     * The largest record payload: a record plus its worst-case padding must fit in the space the writer is
     * sure to see once the reader has consumed everything (capacity minus an unreported credit).
     *
     * @return bytes
     */
    public int maxRecordPayload() {
        return ((ringCapacity - readNotifyThreshold) / 2 & -RecordDescriptor.ALIGNMENT)
            - RecordDescriptor.HEADER_LENGTH;
    }

    @Override
    public String toString() {
        return "ChannelConfig{workers=" + workers + ", ringCapacity=" + ringCapacity + ", batchThreshold="
            + batchThreshold + ", mappedBatchThreshold=" + mappedBatchThreshold + ", readNotifyThreshold="
            + readNotifyThreshold + ", notification=" + notification
            + ", flushInterval=" + flushInterval + ", writesInFlight=" + writesInFlight + ", notificationsInFlight="
            + notificationsInFlight + ", idle=" + idle().label()
            + ", spinsBeforePark=" + spinsBeforePark
            + ", engineThread=" + engineThread + ", mapped=" + mapped
            + "}";
    }

    /** Builder. */
    public static final class Builder {
        private final int workers;
        private int maxPeerWorkers = Platform.intValue(MAX_PEER_WORKERS_PROP, MAX_PEER_WORKERS_DEFAULT);
        private long maxPeerMemory = SystemProperties.longInRange(MAX_PEER_MEMORY_PROP, MAX_PEER_MEMORY_DEFAULT, 1024,
            Long.MAX_VALUE, "bytes");
        private long maxRingMemory = SystemProperties.longInRange(MAX_RING_MEMORY_PROP, MAX_RING_MEMORY_DEFAULT, 1024,
            Long.MAX_VALUE, "bytes");
        private int ringCapacity = Platform.intValue(RING_CAPACITY_PROP, RING_CAPACITY_DEFAULT);
        private int batchThreshold = System.getProperty(BATCH_THRESHOLD_PROP) == null ? 0
            : Platform.intValue(BATCH_THRESHOLD_PROP, 0);
        private int mappedBatchThreshold = Platform.intValue(MAPPED_BATCH_THRESHOLD_PROP, 0);
        private int readNotifyThreshold = Platform.intValue(READ_NOTIFY_PROP, READ_NOTIFY_DEFAULT);
        private int writesInFlight = Platform.intValue(WRITES_IN_FLIGHT_PROP, WRITES_IN_FLIGHT_DEFAULT);
        private int notificationsInFlight = Platform.intValue(NOTIFICATIONS_IN_FLIGHT_PROP,
            NOTIFICATIONS_IN_FLIGHT_DEFAULT);
        private Notification notification = notificationValue();
        private Duration flushInterval = Duration.ofNanos(1000 * flushIntervalMicros());
        private String idleValue = System.getProperty(IDLE_PROP, Idle.PARK.label());
        private Integer spinsBeforePark = System.getProperty(SPINS_PROP) == null ? null
            : Platform.intValue(SPINS_PROP, SPINS_DEFAULT);
        private int spins;
        private String mappedValue = System.getProperty(MAPPED_PROP, Boolean.toString(MAPPED_DEFAULT));
        private boolean mapped;
        private String engineThreadValue = System.getProperty(ENGINE_THREAD_PROP, "true");
        private boolean engineThread;

        private Builder(int workers) {
            this.workers = workers;
        }

        private static Notification notificationValue() {
            String v = System.getProperty(NOTIFICATION_PROP, NOTIFICATION_DEFAULT.name()).trim();
            for (Notification n : Notification.values()) {
                if (n.name().equalsIgnoreCase(v)) {
                    return n;
                }
            }
            throw new IllegalArgumentException(NOTIFICATION_PROP + "=" + v + " is not one of SEND, WRITE_WITH_IMM");
        }

        private static long flushIntervalMicros() {
            String v = System.getProperty(FLUSH_INTERVAL_PROP);
            if (v == null || v.isBlank()) {
                return FLUSH_INTERVAL_DEFAULT_US;
            }
            long us;
            try {
                us = Long.parseLong(v.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(FLUSH_INTERVAL_PROP + "=" + v + " is not an integer", e);
            }
            if (us < 0 || us > 60_000_000L) {
                throw new IllegalArgumentException(FLUSH_INTERVAL_PROP + "=" + v + " out of range [0, 60000000] us");
            }
            return us;
        }

        /**
         * @param v bytes per ring (power of two)
         * @return this
         */
        public Builder ringCapacity(int v) {
            this.ringCapacity = v;
            return this;
        }

        /**
         * @param v bytes that trigger a WRITE (1 posts every commit; 0 selects the default)
         * @return this
         */
        public Builder batchThreshold(int v) {
            this.batchThreshold = v;
            return this;
        }

        /**
         * @param v bytes after which a writer to a mapped ring publishes its head (0 selects the default); an
         *          explicit {@link #batchThreshold} overrides it
         * @return this
         */
        public Builder mappedBatchThreshold(int v) {
            this.mappedBatchThreshold = v;
            return this;
        }

        /**
         * @param v the most WRITEs of one ring in flight at once, 1 to 256 ({@link #WRITES_IN_FLIGHT_PROP})
         * @return this
         */
        public Builder writesInFlight(int v) {
            this.writesInFlight = v;
            return this;
        }

        /**
         * @param v the most notification SENDs to one peer in flight at once, 1 or 2
         *          ({@link #NOTIFICATIONS_IN_FLIGHT_PROP})
         * @return this
         */
        public Builder notificationsInFlight(int v) {
            this.notificationsInFlight = v;
            return this;
        }

        /**
         * @param v bytes consumed before a credit is sent (0: a quarter of the ring)
         * @return this
         */
        public Builder readNotifyThreshold(int v) {
            this.readNotifyThreshold = v;
            return this;
        }

        /**
         * @param v notification kind
         * @return this
         */
        public Builder notification(Notification v) {
            this.notification = v;
            return this;
        }

        /**
         * @param v time bound on unsent data (zero: only thresholds and flush)
         * @return this
         */
        public Builder flushInterval(Duration v) {
            this.flushInterval = v;
            return this;
        }

        /**
         * @param v spins before a blocked worker parks
         * @return this
         */
        public Builder spinsBeforePark(int v) {
            this.spinsBeforePark = v;
            return this;
        }

        /**
         * @param v false to start no network thread: the application's threads run
         *          {@link ChannelEngine#doWork()} (blocked readers and writers do it themselves)
         * @return this
         */
        public Builder engineThread(boolean v) {
            this.engineThreadValue = Boolean.toString(v);
            return this;
        }

        /**
         * @param v how a blocked reader or writer waits (sets the spins before sleeping)
         * @return this
         */
        public Builder idle(Idle v) {
            this.idleValue = v.label();
            this.spinsBeforePark = null;
            return this;
        }

        /**
         * @param v true to map the peer's memory where both ends can, false to keep WRITEs
         * @return this
         */
        public Builder mapped(boolean v) {
            this.mappedValue = Boolean.toString(v);
            return this;
        }

        /**
         * @param v the most workers a peer may announce, 1 to 256
         * @return this
         */
        public Builder maxPeerWorkers(int v) {
            this.maxPeerWorkers = v;
            return this;
        }

        /**
         * @param v the most ring memory (bytes) one peer may make the engine allocate
         * @return this
         */
        public Builder maxPeerMemory(long v) {
            this.maxPeerMemory = v;
            return this;
        }

        /**
         * @param v the most ring memory (bytes) all peers of the engine together may make it allocate
         * @return this
         */
        public Builder maxRingMemory(long v) {
            this.maxRingMemory = v;
            return this;
        }

        /**
         * @return the validated configuration
         * @throws IllegalArgumentException naming the first bad key and value
         */
        public ChannelConfig build() {
            if (workers < 1 || workers > 256) {
                throw new IllegalArgumentException("workers=" + workers + " out of range [1, 256]");
            }
            if (maxPeerWorkers < 1 || maxPeerWorkers > 256) {
                throw new IllegalArgumentException(MAX_PEER_WORKERS_PROP + "=" + maxPeerWorkers
                    + " out of range [1, 256]");
            }
            if (maxPeerMemory < 1024) {
                throw new IllegalArgumentException(MAX_PEER_MEMORY_PROP + "=" + maxPeerMemory + " is below 1024 bytes");
            }
            if (maxRingMemory < maxPeerMemory) {
                throw new IllegalArgumentException(MAX_RING_MEMORY_PROP + "=" + maxRingMemory + " is below "
                    + MAX_PEER_MEMORY_PROP + "=" + maxPeerMemory);
            }
            if (ringCapacity < 1024 || Integer.bitCount(ringCapacity) != 1 || ringCapacity > (1 << 30)) {
                throw new IllegalArgumentException(RING_CAPACITY_PROP + "=" + ringCapacity
                    + " must be a power of two in [1024, 1 GiB]");
            }
            if (notification == Notification.WRITE_WITH_IMM && ringCapacity > ImmediateDescriptor.MAX_RING_CAPACITY) {
                throw new IllegalArgumentException(RING_CAPACITY_PROP + "=" + ringCapacity
                    + " exceeds 4 MiB, the most a WRITE_WITH_IMM immediate can describe");
            }
            if (batchThreshold < 0 || batchThreshold > ringCapacity) {
                throw new IllegalArgumentException(BATCH_THRESHOLD_PROP + "=" + batchThreshold
                    + " out of range [1, ringCapacity=" + ringCapacity + "]");
            }
            if (mappedBatchThreshold < 0 || mappedBatchThreshold > ringCapacity) {
                throw new IllegalArgumentException(MAPPED_BATCH_THRESHOLD_PROP + "=" + mappedBatchThreshold
                    + " out of range [1, ringCapacity=" + ringCapacity + "]");
            }
            if (readNotifyThreshold < 0 || readNotifyThreshold > ringCapacity / 2) {
                throw new IllegalArgumentException(READ_NOTIFY_PROP + "=" + readNotifyThreshold
                    + " out of range [0, ringCapacity/2=" + ringCapacity / 2 + "]");
            }
            if (notificationsInFlight < 1 || notificationsInFlight > Notifier.SLOTS) {
                throw new IllegalArgumentException(NOTIFICATIONS_IN_FLIGHT_PROP + "=" + notificationsInFlight
                    + " out of range [1, " + Notifier.SLOTS + "]");
            }
            if (writesInFlight < 1 || writesInFlight > SendGate.MAX_WINDOW) {
                throw new IllegalArgumentException(WRITES_IN_FLIGHT_PROP + "=" + writesInFlight
                    + " out of range [1, " + SendGate.MAX_WINDOW + "]");
            }
            if (flushInterval == null || flushInterval.isNegative()) {
                throw new IllegalArgumentException(FLUSH_INTERVAL_PROP + "=" + flushInterval + " must be >= 0");
            }
            Idle idle = Idle.of(idleValue);
            if (spinsBeforePark != null && spinsBeforePark < 0) {
                throw new IllegalArgumentException(SPINS_PROP + "=" + spinsBeforePark + " must be >= 0");
            }
            spins = spinsBeforePark != null ? spinsBeforePark : idle.spins();
            mapped = SystemProperties.parseBool(MAPPED_PROP, mappedValue);
            engineThread = SystemProperties.parseBool(ENGINE_THREAD_PROP, engineThreadValue);
            return new ChannelConfig(this);
        }
    }
}
