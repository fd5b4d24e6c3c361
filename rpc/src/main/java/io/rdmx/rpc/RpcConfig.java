package io.rdmx.rpc;

import io.rdmx.spi.Platform;
import java.time.Duration;

/**
 * Configuration of an {@link RpcClient} or {@link RpcServer}: every key has a name constant and a default
 * constant, is read from system properties once by {@link #builder()} and validated once by
 * {@link Builder#build()}.
 */
public final class RpcConfig {
    /** Largest request or response body, enforced by sender and receiver (Hadoop's ipc.maximum.data.length). */
    public static final String MAX_MESSAGE_BYTES_PROP = "rdmx.rpc.maxMessageBytes";
    /** Default of {@link #MAX_MESSAGE_BYTES_PROP}: 64 MiB. */
    public static final int MAX_MESSAGE_BYTES_DEFAULT = 64 << 20;
    /** Server: handler threads. */
    public static final String HANDLER_THREADS_PROP = "rdmx.rpc.handlerThreads";
    /** Default of {@link #HANDLER_THREADS_PROP}. */
    public static final int HANDLER_THREADS_DEFAULT = 4;
    /** Server: requests that may wait for a handler thread; more are answered with {@link #BUSY_CLASS}. */
    public static final String HANDLER_QUEUE_PROP = "rdmx.rpc.handlerQueue";
    /** Default of {@link #HANDLER_QUEUE_PROP}. */
    public static final int HANDLER_QUEUE_DEFAULT = 1024;
    /** Client: calls that may be outstanding at once (a power of two: the size of the call table). */
    public static final String MAX_OUTSTANDING_PROP = "rdmx.rpc.maxOutstandingCalls";
    /** Default of {@link #MAX_OUTSTANDING_PROP}. */
    public static final int MAX_OUTSTANDING_DEFAULT = 4096;
    /** Server: how long a response may wait for space in the ring to its client. */
    public static final String WRITE_TIMEOUT_PROP = "rdmx.rpc.writeTimeoutMs";
    /** Default of {@link #WRITE_TIMEOUT_PROP}, milliseconds. */
    public static final int WRITE_TIMEOUT_DEFAULT_MS = 30_000;
    /** Remote class name of the error a server answers when its handler queue is full. */
    public static final String BUSY_CLASS = "io.rdmx.rpc.ServerBusy";

    private final int maxMessageBytes;
    private final int handlerThreads;
    private final int handlerQueue;
    private final int maxOutstandingCalls;
    private final Duration writeTimeout;

    private RpcConfig(Builder b) {
        this.maxMessageBytes = b.maxMessageBytes;
        this.handlerThreads = b.handlerThreads;
        this.handlerQueue = b.handlerQueue;
        this.maxOutstandingCalls = b.maxOutstandingCalls;
        this.writeTimeout = Duration.ofMillis(b.writeTimeoutMs);
    }

    /** @return a builder with the system properties' values, else the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** @return the defaults and system properties, validated */
    public static RpcConfig defaults() {
        return builder().build();
    }

    /** @return the largest request or response body, bytes */
    public int maxMessageBytes() {
        return maxMessageBytes;
    }

    /** @return server handler threads */
    public int handlerThreads() {
        return handlerThreads;
    }

    /** @return requests that may queue for a handler thread */
    public int handlerQueue() {
        return handlerQueue;
    }

    /** @return the size of a client's call table */
    public int maxOutstandingCalls() {
        return maxOutstandingCalls;
    }

    /** @return how long a server's response may wait for ring space */
    public Duration writeTimeout() {
        return writeTimeout;
    }

    @Override
    public String toString() {
        return "RpcConfig{maxMessageBytes=" + maxMessageBytes + ", handlerThreads=" + handlerThreads
            + ", handlerQueue=" + handlerQueue + ", maxOutstandingCalls=" + maxOutstandingCalls
            + ", writeTimeoutMs=" + writeTimeout.toMillis() + "}";
    }

    /** Builder. */
    public static final class Builder {
        private int maxMessageBytes = Platform.intValue(MAX_MESSAGE_BYTES_PROP, MAX_MESSAGE_BYTES_DEFAULT);
        private int handlerThreads = Platform.intValue(HANDLER_THREADS_PROP, HANDLER_THREADS_DEFAULT);
        private int handlerQueue = Platform.intValue(HANDLER_QUEUE_PROP, HANDLER_QUEUE_DEFAULT);
        private int maxOutstandingCalls = Platform.intValue(MAX_OUTSTANDING_PROP, MAX_OUTSTANDING_DEFAULT);
        private int writeTimeoutMs = Platform.intValue(WRITE_TIMEOUT_PROP, WRITE_TIMEOUT_DEFAULT_MS);

        private Builder() {
        }

        /**
         * @param v largest body, bytes (1 to 2^31 - 1)
         * @return this
         */
        public Builder maxMessageBytes(int v) {
            this.maxMessageBytes = v;
            return this;
        }

        /**
         * @param v handler threads (1 to 1024)
         * @return this
         */
        public Builder handlerThreads(int v) {
            this.handlerThreads = v;
            return this;
        }

        /**
         * @param v queued requests (1 to 2^20)
         * @return this
         */
        public Builder handlerQueue(int v) {
            this.handlerQueue = v;
            return this;
        }

        /**
         * @param v outstanding calls per client, a power of two (16 to 2^20)
         * @return this
         */
        public Builder maxOutstandingCalls(int v) {
            this.maxOutstandingCalls = v;
            return this;
        }

        /**
         * @param v how long a response may wait for ring space (at least 1 ms)
         * @return this
         */
        public Builder writeTimeout(Duration v) {
            this.writeTimeoutMs = (int) Math.min(Integer.MAX_VALUE, v.toMillis());
            return this;
        }

        /**
         * @return the validated configuration
         * @throws IllegalArgumentException naming the first bad key and value
         */
        public RpcConfig build() {
            if (maxMessageBytes < 1) {
                throw new IllegalArgumentException(MAX_MESSAGE_BYTES_PROP + "=" + maxMessageBytes + " must be >= 1");
            }
            if (handlerThreads < 1 || handlerThreads > 1024) {
                throw new IllegalArgumentException(HANDLER_THREADS_PROP + "=" + handlerThreads
                    + " out of range [1, 1024]");
            }
            if (handlerQueue < 1 || handlerQueue > (1 << 20)) {
                throw new IllegalArgumentException(HANDLER_QUEUE_PROP + "=" + handlerQueue
                    + " out of range [1, 1048576]");
            }
            if (maxOutstandingCalls < 16 || maxOutstandingCalls > (1 << 20)
                || Integer.bitCount(maxOutstandingCalls) != 1) {
                throw new IllegalArgumentException(MAX_OUTSTANDING_PROP + "=" + maxOutstandingCalls
                    + " must be a power of two in [16, 1048576]");
            }
            if (writeTimeoutMs < 1) {
                throw new IllegalArgumentException(WRITE_TIMEOUT_PROP + "=" + writeTimeoutMs + " must be >= 1");
            }
            return new RpcConfig(this);
        }
    }
}
