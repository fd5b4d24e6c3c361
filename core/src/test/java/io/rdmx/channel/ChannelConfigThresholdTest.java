package io.rdmx.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Batching thresholds: the WRITE path's, the mapped path's, their defaults, caps, overrides and bad values. */
@Timeout(10)
class ChannelConfigThresholdTest {
    @AfterEach
    void clear() {
        System.clearProperty(ChannelConfig.MAPPED_BATCH_THRESHOLD_PROP);
        System.clearProperty(ChannelConfig.READ_NOTIFY_PROP);
        System.clearProperty(ChannelConfig.FLUSH_INTERVAL_PROP);
        System.clearProperty(ChannelConfig.NOTIFICATION_PROP);
    }

    @Test
    void mappedRingsBatch64KiBByDefaultAtMostAQuarterRing() {
        ChannelConfig c = ChannelConfig.builder(1).ringCapacity(1 << 20).build();
        assertEquals(ChannelConfig.MAPPED_BATCH_THRESHOLD_DEFAULT, c.mappedBatchThreshold());
        assertEquals(64 << 10, c.mappedBatchThreshold());
        assertEquals(16 << 10, ChannelConfig.builder(1).ringCapacity(64 << 10).build().mappedBatchThreshold());
    }

    @Test
    void anExplicitBatchThresholdSetsBothAndAMappedOneOnlyItself() {
        ChannelConfig c = ChannelConfig.builder(1).ringCapacity(1 << 20).batchThreshold(4096).build();
        assertEquals(4096, c.batchThreshold());
        assertEquals(4096, c.mappedBatchThreshold());
        System.setProperty(ChannelConfig.MAPPED_BATCH_THRESHOLD_PROP, "131072");
        c = ChannelConfig.builder(1).ringCapacity(1 << 20).build();
        assertEquals(128 << 10, c.mappedBatchThreshold());
        assertEquals(ChannelConfig.builder(1).ringCapacity(1 << 20).build().batchThreshold(), c.batchThreshold());
    }

    @Test
    void badValuesFailNamingKeyAndValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> ChannelConfig.builder(1).ringCapacity(4096).mappedBatchThreshold(8192).build());
        assertTrue(e.getMessage().contains("rdmx.channel.mappedBatchThreshold=8192")
            && e.getMessage().contains("ringCapacity=4096"), e.getMessage());
        System.setProperty(ChannelConfig.MAPPED_BATCH_THRESHOLD_PROP, "lots");
        e = assertThrows(IllegalArgumentException.class, () -> ChannelConfig.builder(1).build());
        assertTrue(e.getMessage().contains("rdmx.channel.mappedBatchThreshold=lots"), e.getMessage());
        System.clearProperty(ChannelConfig.MAPPED_BATCH_THRESHOLD_PROP);
        // the read-notification, flush-interval and notification keys are validated like every other (a bad number
        // was taken silently as the default, a bad name failed with the JDK's "No enum constant")
        System.setProperty(ChannelConfig.READ_NOTIFY_PROP, "half");
        e = assertThrows(IllegalArgumentException.class, () -> ChannelConfig.builder(1).build());
        assertTrue(e.getMessage().contains("rdmx.channel.readNotifyThreshold=half"), e.getMessage());
        System.clearProperty(ChannelConfig.READ_NOTIFY_PROP);
        System.setProperty(ChannelConfig.FLUSH_INTERVAL_PROP, "soon");
        e = assertThrows(IllegalArgumentException.class, () -> ChannelConfig.builder(1).build());
        assertTrue(e.getMessage().contains("rdmx.channel.flushIntervalUs=soon"), e.getMessage());
        System.setProperty(ChannelConfig.FLUSH_INTERVAL_PROP, "-5");
        e = assertThrows(IllegalArgumentException.class, () -> ChannelConfig.builder(1).build());
        assertTrue(e.getMessage().contains("rdmx.channel.flushIntervalUs=-5"), e.getMessage());
        System.setProperty(ChannelConfig.FLUSH_INTERVAL_PROP, "500");
        assertEquals(java.time.Duration.ofNanos(500_000), ChannelConfig.builder(1).build().flushInterval());
        System.setProperty(ChannelConfig.NOTIFICATION_PROP, "ring");
        e = assertThrows(IllegalArgumentException.class, () -> ChannelConfig.builder(1).build());
        assertTrue(e.getMessage().contains("rdmx.channel.notification=ring") && e.getMessage().contains("SEND"),
            e.getMessage());
        System.setProperty(ChannelConfig.NOTIFICATION_PROP, "write_with_imm");
        assertEquals(ChannelConfig.Notification.WRITE_WITH_IMM, ChannelConfig.builder(1).build().notification());
    }
}
