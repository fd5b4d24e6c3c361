package io.rdmx.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.shm.ShmFabric;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A channel engine with a flush interval stops scanning once its writers are quiet ({@link EngineIdle}): its
 * network thread goes idle, a record committed without a flush wakes it (one kick) and is still delivered by the
 * scan, and a writer that keeps writing and flushing never kicks it (the scans go on while heads move).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EngineIdleWakeTest {
    private static final AtomicInteger SEQ = new AtomicInteger();
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        System.clearProperty(ChannelEngine.IDLE_WAIT_PROP);
    }

    private ChannelEngine engine(String role) throws Exception {
        Node n = new ShmFabric().open(NodeOptions.builder().name("idle-" + role + "-" + ProcessHandle.current().pid()
            + "-" + SEQ.incrementAndGet()).build());
        closeables.add(n);
        ChannelEngine e = ChannelEngine.open(n, ChannelConfig.builder(1).flushInterval(Duration.ofMillis(2)).build());
        closeables.add(e);
        return e;
    }

    private static void awaitIdle(ChannelEngine e) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!e.networkIdle() && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertTrue(e.networkIdle(), "the network thread of a quiet engine never went idle");
    }

    private static long readOne(ChannelReader r) throws Exception {
        long[] got = {-1};
        int n = r.read((s, buf, o, l, src) -> got[0] = buf.getLong(o), 1, 10, TimeUnit.SECONDS);
        assertEquals(1, n, "no record within 10 s");
        return got[0];
    }

    @Test
    void aQuietEngineGoesIdleAndAnUnflushedCommitWakesItAndIsDelivered() throws Exception {
        // an idle sleep longer than the test: only the commit's wake-up brings the scan that posts the record
        System.setProperty(ChannelEngine.IDLE_WAIT_PROP, "60000");
        ChannelEngine a = engine("w");
        ChannelEngine b = engine("r");
        PeerChannel p = a.connect(b.node().address(), Duration.ofSeconds(10));
        b.accept(Duration.ofSeconds(10));
        assertTrue(a.idleWatch());
        ChannelWriter w = p.writer(0, 0);
        ChannelReader r = b.reader(0);
        ByteBuffer rec = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN); // the ring's order
        for (int round = 0; round < 3; round++) {
            awaitIdle(a);
            long kicks = a.idleKicks();
            rec.clear();
            rec.putLong(0, round);
            w.write(1, rec, 10, TimeUnit.SECONDS); // below the batching threshold, no flush: only a scan posts it
            assertEquals(round, readOne(r), "round " + round);
            assertEquals(kicks + 1, a.idleKicks(), "round " + round + ": the commit did not wake the idle thread");
        }
    }

    @Test
    void aBadIdleWaitIsRefusedNamingItAndTheValue() {
        System.setProperty(ChannelEngine.IDLE_WAIT_PROP, "0");
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
            () -> engine("bad"));
        assertTrue(e.getMessage().contains(ChannelEngine.IDLE_WAIT_PROP) && e.getMessage().contains("=0"),
            e.getMessage());
    }

    @Test
    void aWriterThatKeepsFlushingNeverWakesTheThread() throws Exception {
        ChannelEngine a = engine("w");
        ChannelEngine b = engine("r");
        PeerChannel p = a.connect(b.node().address(), Duration.ofSeconds(10));
        b.accept(Duration.ofSeconds(10));
        ChannelWriter w = p.writer(0, 0);
        ChannelReader r = b.reader(0);
        ByteBuffer rec = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN); // the ring's order
        int records = 2000;
        long kicks = a.idleKicks();
        for (int i = 0; i < records; i++) {
            rec.clear();
            rec.putLong(0, i);
            w.write(1, rec, 10, TimeUnit.SECONDS);
            w.flush();
            assertEquals(i, readOne(r));
        }
        // a flushed commit needs no scan: whether the thread is idle or not, the flush posted it. Kicks come only
        // from a commit that found the thread idle; a busy loop keeps heads moving, so it stays awake (slack for a
        // loop descheduled past two scans on a loaded machine)
        long k = a.idleKicks() - kicks;
        assertTrue(k < records / 10, k + " kicks for " + records + " flushed records");
    }
}
