package io.rdmx.channel;

import java.lang.management.ManagementFactory;
import java.util.Collection;
import java.util.concurrent.atomic.LongAdder;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The counters of one {@link ChannelEngine}, exported to JMX as {@code io.rdmx:type=ChannelEngine,node=<name>}
 * ({@link ChannelMetricsMXBean}) and snapshot by {@link ChannelEngine#metrics()}. Any thread counts (striped
 * adders: no contention between workers); records and bytes written are summed from the writers of the peers
 * now open and those of peers forgotten.
 */
final class ChannelCounters implements ChannelMetricsMXBean {
    private static final Logger LOG = LoggerFactory.getLogger(ChannelCounters.class);

    /** The engine's open peers (a live view), whose writers count what they wrote. */
    private final Collection<PeerChannel> peers;
    private final LongAdder recordsRead = new LongAdder();
    /** Records and bytes committed by the writers of peers released and forgotten ({@link #forgotten}). */
    private final LongAdder forgottenRecords = new LongAdder();
    private final LongAdder forgottenBytes = new LongAdder();
    private final LongAdder writesPosted = new LongAdder();
    private final LongAdder notificationsSent = new LongAdder();
    private final LongAdder notificationsReceived = new LongAdder();
    private final LongAdder writerBlocks = new LongAdder();
    private final LongAdder writerBlockedNanos = new LongAdder();
    private final LongAdder readerBlocks = new LongAdder();
    private final LongAdder readerBlockedNanos = new LongAdder();
    private final LongAdder futexWakes = new LongAdder();
    private final LongAdder bellWakes = new LongAdder();
    private final LongAdder doorbellWakes = new LongAdder();
    /** The name these counters are registered under, or null (not exported). */
    private ObjectName exported;

    /** @param peers the engine's open peers (a live view) */
    ChannelCounters(Collection<PeerChannel> peers) {
        this.peers = peers;
    }

    /**
     * Exports these counters to the platform MBean server, unless another engine of that node name is there.
     *
     * @param node the node's name
     */
    void export(String node) {
        try {
            ObjectName n = new ObjectName("io.rdmx:type=ChannelEngine,node=" + ObjectName.quote(node));
            MBeanServer s = ManagementFactory.getPlatformMBeanServer();
            if (!s.isRegistered(n)) {
                s.registerMBean(this, n);
                exported = n;
            }
        } catch (JMException e) {
            LOG.warn("channel metrics of node '{}' not exported to JMX: {}", node, e.toString());
        }
    }

    /** Takes the counters off the MBean server, if {@link #export} put them there. */
    void unexport() {
        ObjectName n = exported;
        if (n != null) {
            try {
                ManagementFactory.getPlatformMBeanServer().unregisterMBean(n);
            } catch (JMException e) {
                LOG.debug("unregister {}: {}", n, e.toString());
            }
        }
    }

    /** @return a snapshot */
    ChannelMetrics snapshot() {
        return new ChannelMetrics(getRecordsWritten(), getBytesWritten(), recordsRead.sum(), writesPosted.sum(),
            notificationsSent.sum(), notificationsReceived.sum(), writerBlocks.sum(), writerBlockedNanos.sum(),
            readerBlocks.sum(), readerBlockedNanos.sum(), futexWakes.sum(), bellWakes.sum(), doorbellWakes.sum());
    }

    /**
     * A peer leaves the engine: what its writers wrote stays counted.
     *
     * @param written records and bytes its writers committed ({@link PeerChannel#written})
     */
    void forgotten(long[] written) {
        forgottenRecords.add(written[0]);
        forgottenBytes.add(written[1]);
    }

    void recordsRead(int n) {
        recordsRead.add(n);
    }

    void writesPosted(int n) {
        writesPosted.add(n);
    }

    void notificationSent() {
        notificationsSent.increment();
    }

    void notificationReceived() {
        notificationsReceived.increment();
    }

    void writerBlocked() {
        writerBlocks.increment();
    }

    void writerBlockedNanos(long n) {
        writerBlockedNanos.add(n);
    }

    void readerBlocked() {
        readerBlocks.increment();
    }

    void readerBlockedNanos(long n) {
        readerBlockedNanos.add(n);
    }

    void futexWake() {
        futexWakes.increment();
    }

    void bellWake() {
        bellWakes.increment();
    }

    void doorbellWake() {
        doorbellWakes.increment();
    }

    @Override
    public long getRecordsWritten() {
        long n = forgottenRecords.sum();
        for (PeerChannel p : peers) {
            n += p.written()[0];
        }
        return n;
    }

    @Override
    public long getBytesWritten() {
        long n = forgottenBytes.sum();
        for (PeerChannel p : peers) {
            n += p.written()[1];
        }
        return n;
    }

    @Override
    public long getRecordsRead() {
        return recordsRead.sum();
    }

    @Override
    public long getWritesPosted() {
        return writesPosted.sum();
    }

    @Override
    public long getNotificationsSent() {
        return notificationsSent.sum();
    }

    @Override
    public long getNotificationsReceived() {
        return notificationsReceived.sum();
    }

    @Override
    public long getWriterBlocks() {
        return writerBlocks.sum();
    }

    @Override
    public long getWriterBlockedNanos() {
        return writerBlockedNanos.sum();
    }

    @Override
    public long getReaderBlocks() {
        return readerBlocks.sum();
    }

    @Override
    public long getReaderBlockedNanos() {
        return readerBlockedNanos.sum();
    }

    @Override
    public long getFutexWakes() {
        return futexWakes.sum();
    }

    @Override
    public long getBellWakes() {
        return bellWakes.sum();
    }

    @Override
    public long getDoorbellWakes() {
        return doorbellWakes.sum();
    }
}
