package io.rdmx.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.loopback.LoopbackFabric;
import io.rdmx.transport.loopback.LoopbackNode;
import io.rdmx.transport.Node;
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
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Several WRITEs of one ring in flight ({@code rdmx.channel.writesInFlight}): the window is used, never exceeded,
 * and every record still arrives once and in order; the window shrinks to fit the send queue; bad values fail.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WritesInFlightTest {
    private static final AtomicInteger SEQ = new AtomicInteger();
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        System.clearProperty(ChannelConfig.WRITES_IN_FLIGHT_PROP);
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    private ChannelEngine engine(String role, int sendQueueDepth, ChannelConfig cfg) throws Exception {
        Node n = new LoopbackFabric().open(NodeOptions.builder().name("wif-" + role + "-"
            + ProcessHandle.current().pid() + "-" + SEQ.incrementAndGet()).sendQueueDepth(sendQueueDepth).build());
        closeables.add(n);
        // completions wait in the node's queue for whoever runs the duty cycle (inline, loopback would handle
        // each during the very post that produced it: no window would ever fill)
        ((LoopbackNode) n).faults().queueCompletions();
        ChannelEngine e = ChannelEngine.open(n, cfg);
        closeables.add(e);
        return e;
    }

    private static PeerChannel[] connect(ChannelEngine a, ChannelEngine b) throws Exception {
        CompletableFuture<PeerChannel> accepted = CompletableFuture.supplyAsync(() -> {
            try {
                return b.accept(Duration.ofSeconds(30));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        PeerChannel ab = a.connect(b.node().address(), Duration.ofSeconds(30));
        return new PeerChannel[] {ab, accepted.get(30, TimeUnit.SECONDS)};
    }

    /**
     * The writer's engine has no network thread and nobody runs its duty cycle while the writer has space, so no
     * completion is seen: the writer posts exactly {@code window} WRITEs and leaves the next batch to a completion.
     * Then the blocked writer runs the duty cycle itself; every record arrives once, in order.
     */
    @ParameterizedTest
    @EnumSource(ChannelConfig.Notification.class)
    void theWriterPostsAWindowOfWritesWithoutWaitingAndDeliversEveryRecordOnceInOrder(
        ChannelConfig.Notification mode) throws Exception {
        int window = 4;
        ChannelConfig.Builder cb = ChannelConfig.builder(1).mapped(false).notification(mode).ringCapacity(64 << 10)
            .batchThreshold(1024).writesInFlight(window).flushInterval(Duration.ZERO);
        ChannelEngine a = engine("a", 1024, cb.engineThread(false).build());
        ChannelEngine b = engine("b", 1024, cb.engineThread(true).build());
        PeerChannel[] p = connect(a, b);
        int expectWindow = mode == ChannelConfig.Notification.WRITE_WITH_IMM ? 1 : window;
        assertEquals(expectWindow, p[0].writesInFlight());
        ChannelWriter w = p[0].writer(0, 0);
        ByteBuffer rec = ByteBuffer.allocate(1016).order(ByteOrder.LITTLE_ENDIAN); // 1 KiB with its header
        long seq = 0;
        for (int i = 0; i <= expectWindow; i++) {
            rec.putLong(0, seq++);
            assertTrue(w.offer(1, rec), "space for the first batches");
        }
        assertEquals(expectWindow, w.peakWritesInFlight(), "a WRITE per batch, none completed yet");
        assertEquals(1024L * (expectWindow + 1), w.unsent(), "nothing completed yet");
        assertEquals(expectWindow, a.metrics().writesPosted(), "the batch after a full window waits unposted");

        int records = 5_000;
        AtomicLong next = new AtomicLong();
        AtomicReference<Throwable> error = new AtomicReference<>();
        AtomicInteger ends = new AtomicInteger();
        Thread reader = new Thread(() -> {
            try {
                while (ends.get() == 0) {
                    b.reader(0).read(new RecordHandler() {
                        @Override
                        public void onRecord(int s, ByteBuffer buf, int o, int l, RecordSource src) {
                            long got = buf.getLong(o);
                            long want = next.getAndIncrement();
                            if (got != want) {
                                throw new AssertionError("record " + got + " where " + want + " was due");
                            }
                        }

                        @Override
                        public void onEndOfStream(RecordSource src) {
                            ends.incrementAndGet();
                        }
                    }, 256, 10, TimeUnit.SECONDS);
                }
            } catch (Throwable e) {
                error.set(e);
            }
        }, "wif-reader");
        reader.start();
        for (; seq < records; seq++) {
            rec.putLong(0, seq);
            w.write(1, rec, 10, TimeUnit.SECONDS); // blocked for space: runs a's duty cycle (completions, credits)
        }
        w.finish(10, TimeUnit.SECONDS);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (reader.isAlive() && System.nanoTime() < deadline) {
            a.doWork();
            reader.join(1);
        }
        assertEquals(null, error.get());
        assertEquals(records, next.get(), "every record once, in order");
        assertEquals(1, ends.get());
        assertEquals(expectWindow, w.peakWritesInFlight(), "never more than the window in flight");
    }

    @Test
    void theWindowShrinksToFitTheSendQueue() throws Exception {
        ChannelConfig.Builder cb = ChannelConfig.builder(3).mapped(false).writesInFlight(8);
        // 3 x 3 rings, two work requests per WRITE where a range wraps, 5 control SENDs: (50 - 5) / 18 = 2
        ChannelEngine a = engine("a", 50, cb.build());
        ChannelEngine b = engine("b", 1024, cb.build());
        PeerChannel[] p = connect(a, b);
        assertEquals(2, p[0].writesInFlight(), "the window that fits a send queue of 50");
        assertEquals(2, p[0].writer(0, 0).writesInFlightWindow());
        assertEquals(8, p[1].writesInFlight(), "the other end's queue holds the whole window");
        assertEquals(1, PeerChannel.writesInFlight(cb.build(), 9, 23), "23 - 5 holds one WRITE pair per ring");
        assertEquals(8, PeerChannel.writesInFlight(cb.build(), 9, 1024));
        assertEquals(1, PeerChannel.writesInFlight(ChannelConfig.builder(3).writesInFlight(8)
            .notification(ChannelConfig.Notification.WRITE_WITH_IMM).build(), 9, 1024));
    }

    @Test
    void badValuesFailNamingKeyAndValue() {
        for (int bad : new int[] {0, -1, 257}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ChannelConfig.builder(1).writesInFlight(bad).build());
            assertTrue(e.getMessage().contains("rdmx.channel.writesInFlight=" + bad)
                && e.getMessage().contains("[1, 256]"), e.getMessage());
        }
        System.setProperty(ChannelConfig.WRITES_IN_FLIGHT_PROP, "many");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> ChannelConfig.builder(1).build());
        assertTrue(e.getMessage().contains("rdmx.channel.writesInFlight=many"), e.getMessage());
        System.setProperty(ChannelConfig.WRITES_IN_FLIGHT_PROP, "2");
        assertEquals(2, ChannelConfig.builder(1).build().writesInFlight(), "a good value still builds");
        System.clearProperty(ChannelConfig.WRITES_IN_FLIGHT_PROP);
        assertEquals(ChannelConfig.WRITES_IN_FLIGHT_DEFAULT, ChannelConfig.builder(1).build().writesInFlight());
    }
}
