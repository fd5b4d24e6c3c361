package io.rdmx.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.loopback.LoopbackFabric;
import io.rdmx.transport.loopback.LoopbackNode;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Several notification SENDs to one peer in flight ({@code rdmx.channel.notificationsInFlight}): the window is
 * used without waiting for a completion, never exceeded, the notification that finds it full goes out once a
 * completion frees a slot, and every record arrives once and in order; bad values fail.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NotificationsInFlightTest {
    private static final AtomicInteger SEQ = new AtomicInteger();
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        System.clearProperty(ChannelConfig.NOTIFICATIONS_IN_FLIGHT_PROP);
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    private ChannelEngine engine(String role, ChannelConfig cfg) throws Exception {
        Node n = new LoopbackFabric().open(NodeOptions.builder().name("nif-" + role + "-"
            + ProcessHandle.current().pid() + "-" + SEQ.incrementAndGet()).build());
        closeables.add(n);
        // completions wait in the node's queue for whoever runs the duty cycle (inline, loopback would handle
        // each during the very post that produced it: no window would ever fill)
        ((LoopbackNode) n).faults().queueCompletions();
        ChannelEngine e = ChannelEngine.open(n, cfg);
        closeables.add(e);
        return e;
    }

    /**
     * The writer's engine has no network thread, so none of its SEND completions is seen until it runs its duty
     * cycle: three flushed records make {@code window} notifications at once and leave the third record's
     * announcement queued. Then the duty cycle completes them and the queued one goes out.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    void theWindowOfNotificationsIsUsedNeverExceededAndNothingIsLost(int window) throws Exception {
        ChannelConfig.Builder cb = ChannelConfig.builder(1).mapped(false).notification(ChannelConfig.Notification.SEND)
            .ringCapacity(64 << 10).batchThreshold(32 << 10).writesInFlight(4).notificationsInFlight(window)
            .flushInterval(Duration.ZERO);
        ChannelEngine a = engine("a", cb.engineThread(false).build());
        ChannelEngine b = engine("b", cb.engineThread(true).build());
        CompletableFuture<PeerChannel> accepted = CompletableFuture.supplyAsync(() -> {
            try {
                return b.accept(Duration.ofSeconds(30));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        PeerChannel ab = a.connect(b.node().address(), Duration.ofSeconds(30));
        accepted.get(30, TimeUnit.SECONDS);
        long before = a.metrics().notificationsSent();

        ChannelWriter w = ab.writer(0, 0);
        ByteBuffer rec = ByteBuffer.allocate(56).order(ByteOrder.LITTLE_ENDIAN);
        for (long seq = 0; seq < 3; seq++) {
            rec.putLong(0, seq);
            assertTrue(w.offer(1, rec), "space for three small records");
            w.flush(); // a WRITE and a notification per record
        }
        assertEquals(window, ab.notifier().inFlight(), "the window of notifications, none completed yet");
        assertEquals(window, a.metrics().notificationsSent() - before, "the third waits for a free slot");

        AtomicLong next = new AtomicLong();
        AtomicReference<Throwable> error = new AtomicReference<>();
        Thread reader = new Thread(() -> {
            try {
                while (next.get() < 3) {
                    b.reader(0).read((s, buf, o, l, src) -> {
                        long got = buf.getLong(o);
                        long want = next.getAndIncrement();
                        if (got != want) {
                            throw new AssertionError("record " + got + " where " + want + " was due");
                        }
                    }, 16, 10, TimeUnit.SECONDS);
                }
            } catch (Throwable e) {
                error.set(e);
            }
        }, "nif-reader");
        reader.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (reader.isAlive() && System.nanoTime() < deadline) {
            a.doWork(); // completions free slots; the queued notification goes out
            reader.join(1);
        }
        assertNull(error.get());
        assertEquals(3, next.get(), "every record once, in order");
        while (!ab.notifier().quiet() && System.nanoTime() < deadline) {
            a.doWork();
        }
        assertEquals(0, ab.notifier().inFlight(), "every notification completed");
        assertTrue(a.metrics().notificationsSent() - before > window, "the queued notification was sent");
    }

    @Test
    void badValuesFailNamingKeyAndValue() {
        for (int bad : new int[] {0, -1, 3}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ChannelConfig.builder(1).notificationsInFlight(bad).build());
            assertEquals("rdmx.channel.notificationsInFlight=" + bad + " out of range [1, 2]", e.getMessage());
        }
        System.setProperty(ChannelConfig.NOTIFICATIONS_IN_FLIGHT_PROP, "two");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> ChannelConfig.builder(1).build());
        assertTrue(e.getMessage().contains("rdmx.channel.notificationsInFlight=two"), e.getMessage());
        System.setProperty(ChannelConfig.NOTIFICATIONS_IN_FLIGHT_PROP, "1");
        assertEquals(1, ChannelConfig.builder(1).build().notificationsInFlight(), "a good value still builds");
        System.clearProperty(ChannelConfig.NOTIFICATIONS_IN_FLIGHT_PROP);
        assertEquals(ChannelConfig.NOTIFICATIONS_IN_FLIGHT_DEFAULT,
            ChannelConfig.builder(1).build().notificationsInFlight());
    }
}
