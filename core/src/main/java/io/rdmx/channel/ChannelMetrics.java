package io.rdmx.channel;

/**
 * A snapshot of a channel engine's counters.
 *
 * @param recordsWritten records committed by writers
 * @param bytesWritten payload bytes committed
 * @param recordsRead records handed to readers
 * @param writesPosted WRITE work requests posted
 * @param notificationsSent notification messages sent
 * @param notificationsReceived notifications received (messages and immediates)
 * @param writerBlocks times a writer blocked on a full buffer
 * @param writerBlockedNanos time writers spent blocked
 * @param readerBlocks times a reader blocked with nothing to read
 * @param readerBlockedNanos time readers spent blocked
 * @param futexWakes sleepers of mapped peers (their readers and writers in other processes) woken by one
 *                   {@code FUTEX_WAKE} each, with no notification message
 * @param bellWakes sleepers of mapped peers without futexes (Java 17) woken by one byte on their bell
 *                  ({@link io.rdmx.transport.Bell}), read by the sleeper itself: no notification message
 * @param doorbellWakes sleepers of mapped peers woken by a doorbell: a notification message that their engine's
 *                      I/O and network threads turn into a wake-up
 */
public record ChannelMetrics(long recordsWritten, long bytesWritten, long recordsRead, long writesPosted,
                             long notificationsSent, long notificationsReceived, long writerBlocks,
                             long writerBlockedNanos, long readerBlocks, long readerBlockedNanos,
                             long futexWakes, long bellWakes, long doorbellWakes) {
    /**
     * The counters without the bell and doorbell counts (0), as before they were counted.
     *
     * @param recordsWritten records committed by writers
     * @param bytesWritten payload bytes committed
     * @param recordsRead records handed to readers
     * @param writesPosted WRITE work requests posted
     * @param notificationsSent notification messages sent
     * @param notificationsReceived notifications received
     * @param writerBlocks times a writer blocked
     * @param writerBlockedNanos time writers spent blocked
     * @param readerBlocks times a reader blocked
     * @param readerBlockedNanos time readers spent blocked
     * @param futexWakes sleepers woken by {@code FUTEX_WAKE}
     */
    public ChannelMetrics(long recordsWritten, long bytesWritten, long recordsRead, long writesPosted,
                          long notificationsSent, long notificationsReceived, long writerBlocks,
                          long writerBlockedNanos, long readerBlocks, long readerBlockedNanos, long futexWakes) {
        this(recordsWritten, bytesWritten, recordsRead, writesPosted, notificationsSent, notificationsReceived,
            writerBlocks, writerBlockedNanos, readerBlocks, readerBlockedNanos, futexWakes, 0, 0);
    }
}
