package io.rdmx.shuffle;

import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.RdmxException;
import java.nio.ByteBuffer;

/**
 * What the shuffle needs from a transport between processes: the ring channels of {@link ShuffleService#open},
 * or an alternative given to {@link ShuffleService#open(ShuffleConfig, Factory)} (the benchmarks' sockets
 * baseline). A service provider interface: applications use {@link ShuffleService} and {@link Worker}.
 */
public interface ShuffleTransport extends AutoCloseable {
    /** Opens a transport for a configuration (joins every other rank). */
    @FunctionalInterface
    interface Factory {
        /**
         * @param cfg the configuration
         * @return the joined transport
         * @throws RdmxException if it cannot join (names the rank and address)
         */
        ShuffleTransport open(ShuffleConfig cfg) throws RdmxException;
    }

    /** The outgoing buffer from a local worker to one remote worker. One writer thread. */
    interface Outbox {
        /**
         * @param stream stream id
         * @param len payload bytes
         * @return the payload index in {@link #buffer()}, or -1 when full
         * @throws ConnectionClosedException if the peer is gone (names it)
         */
        int tryClaim(int stream, int len) throws ConnectionClosedException;

        /** @return the buffer claims index */
        ByteBuffer buffer();

        /** @return the largest payload {@link #tryClaim} accepts */
        int maxPayload();

        /** Publishes the claim. */
        void commit();

        /** Gives the open claim up (nothing published): its filling failed. */
        void abort();

        /** Sends what is committed. */
        void flush();

        /**
         * Optional: holds what is sent to this outbox's process from now until {@link #uncork}, the sends of the
         * other outboxes to that process included, so that a worker's flush of all of them leaves in one system
         * call on a socket. Nests; every cork needs its uncork, and nothing may wait in between. Default: nothing
         * is held.
         */
        default void cork() {
        }

        /** @return whether {@link #cork} holds anything here (false: the worker does not call it) */
        default boolean corks() {
            return false;
        }

        /** Ends a {@link #cork}: at the last one, what it held goes out now. */
        default void uncork() {
        }

        /**
         * Makes space in this outbox wake the given worker's {@link ShuffleTransport#read}, until disarmed.
         *
         * @param localWorker the worker to wake, or -1 to disarm
         */
        void wakeOnSpace(int localWorker);
    }

    /** Receives records, each with the worker that sent it. */
    @FunctionalInterface
    interface Receiver {
        /**
         * @param sourceWorker the sending worker's global index (rank * workers + its local index)
         * @param stream the record's stream id
         * @param buffer holds the payload (valid during the call only)
         * @param offset the payload's index
         * @param length the payload's length
         */
        void onRecord(int sourceWorker, int stream, ByteBuffer buffer, int offset, int length);
    }

    /**
     * @param localWorker the sending worker
     * @param rank the receiving process
     * @param remoteWorker the receiving worker there
     * @return the outbox
     */
    Outbox outbox(int localWorker, int rank, int remoteWorker);

    /**
     * Reads what is there.
     *
     * @param localWorker the reading worker
     * @param d receives records
     * @param limit most records
     * @return records read
     * @throws RdmxException if a peer failed (names it)
     */
    int poll(int localWorker, Receiver d, int limit) throws RdmxException;

    /**
     * Reads, blocking until records arrive, {@link #wakeup} is called, or the timeout.
     *
     * @param localWorker the reading worker
     * @param d receives records
     * @param limit most records
     * @param timeoutNanos the bound
     * @return records read
     * @throws RdmxException if a peer failed (names it)
     * @throws InterruptedException if interrupted
     */
    int read(int localWorker, Receiver d, int limit, long timeoutNanos)
        throws RdmxException, InterruptedException;

    /**
     * Wakes a worker blocked in {@link #read} or {@link #park}.
     *
     * @param localWorker the worker
     */
    void wakeup(int localWorker);

    /**
     * Sleeps without reading, until {@link #wakeup} is called for the worker, the timeout, or close; may return
     * early (an arrival, a lost peer: the next read reports them). The worker's other wait, on the same waiter as
     * {@link #read}: for when it cannot take records (its inbox is full, or a handler of a ring it reads runs).
     *
     * @param localWorker the sleeping worker
     * @param timeoutNanos the longest sleep
     * @throws RdmxException if the transport is closed
     * @throws InterruptedException if interrupted
     */
    void park(int localWorker, long timeoutNanos) throws RdmxException, InterruptedException;

    /**
     * @param rank another process
     * @return the provider used to reach it
     */
    String provider(int rank);

    /** @return records this process sent over the network */
    long networkRecords();

    @Override
    void close();

    /**
     * Closes, telling the other processes why when that is a peer's loss: their workers that fail because this
     * process left then name the peer that was lost. By default as {@link #close()}, which tells them nothing.
     *
     * @param reason why this process leaves (a lost peer, named), or null
     */
    default void close(String reason) {
        close();
    }
}
