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
 */
public record ChannelMetrics(long recordsWritten, long bytesWritten, long recordsRead, long writesPosted,
                             long notificationsSent, long notificationsReceived, long writerBlocks,
                             long writerBlockedNanos, long readerBlocks, long readerBlockedNanos,
                             long futexWakes) {
}
