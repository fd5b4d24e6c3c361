package io.rdmx.channel;

/** JMX view of a channel engine's counters ({@code io.rdmx:type=ChannelEngine,node=<name>}). */
public interface ChannelMetricsMXBean {
    /** @return records committed by writers */
    long getRecordsWritten();

    /** @return payload bytes committed by writers */
    long getBytesWritten();

    /** @return records handed to readers */
    long getRecordsRead();

    /** @return WRITE work requests posted */
    long getWritesPosted();

    /** @return notification messages sent (SEND) */
    long getNotificationsSent();

    /** @return notifications received (messages and immediates) */
    long getNotificationsReceived();

    /** @return times a writer blocked on a full buffer */
    long getWriterBlocks();

    /** @return nanoseconds writers spent blocked */
    long getWriterBlockedNanos();

    /** @return times a reader blocked with nothing to read */
    long getReaderBlocks();

    /** @return nanoseconds readers spent blocked */
    long getReaderBlockedNanos();

    /** @return sleepers of mapped peers woken by a {@code FUTEX_WAKE}, with no notification message */
    long getFutexWakes();

    /** @return sleepers of mapped peers woken by a byte on their bell (Java 17: no futex), no notification message */
    long getBellWakes();

    /** @return sleepers of mapped peers woken by a doorbell (a notification message their engine turns into a wake) */
    long getDoorbellWakes();
}
