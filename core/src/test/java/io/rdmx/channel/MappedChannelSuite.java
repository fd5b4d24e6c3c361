package io.rdmx.channel;

import io.rdmx.transport.internal.Sleeper;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.testsuite.Blocking;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The mapped fast path ({@link SharedRing}): negotiated in HELLO where both ends can map each other's memory,
 * no message while both sides are awake, one doorbell for a side that sleeps. {@link ChannelSuite} runs the
 * same channels for correctness; this suite checks what the mapped path saves.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class MappedChannelSuite {
    private static final AtomicInteger SEQ = new AtomicInteger();
    private static final Duration WAIT = Duration.ofSeconds(10);
    private final List<AutoCloseable> closeables = new ArrayList<>();

    /** @return the provider */
    protected abstract Fabric fabric();

    /** @return true if the provider maps peer memory, so channels over it are mapped */
    protected abstract boolean mapsMemory();

    /** @return true if the provider opens bells ({@link io.rdmx.transport.capability.Bells}) */
    protected boolean hasBells() {
        return false;
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    private Node open(String role) throws RdmxException {
        Node n = fabric().open(NodeOptions.builder().name("mc" + role + "-" + ProcessHandle.current().pid() + "-"
            + SEQ.incrementAndGet()).build());
        closeables.add(n);
        return n;
    }

    /** Two engines and the channel between them. */
    private final class Pair {
        final Node nodeA;
        final ChannelEngine a;
        final ChannelEngine b;
        final PeerChannel ab;
        final PeerChannel ba;

        Pair(UnaryOperator<ChannelConfig.Builder> tweakA, UnaryOperator<ChannelConfig.Builder> tweakB)
            throws Exception {
            nodeA = open("a");
            Node nodeB = open("b");
            a = ChannelEngine.open(nodeA, tweakA.apply(ChannelConfig.builder(1)).build());
            closeables.add(a);
            b = ChannelEngine.open(nodeB, tweakB.apply(ChannelConfig.builder(1)).build());
            closeables.add(b);
            ab = a.connect(nodeB.address(), WAIT);
            ba = b.accept(WAIT);
        }
    }

    @Test
    void aChannelIsMappedWhereBothEndsCanMap() throws Exception {
        Pair p = new Pair(c -> c, c -> c);
        assertEquals(mapsMemory(), p.ab.mapped());
        assertEquals(mapsMemory(), p.ba.mapped());
        assertEquals(mapsMemory(), p.ab.writer(0, 0).shared() != null);
    }

    @Test
    void oneEndWithMappingOffFallsBackToWritesOnBothEnds() throws Exception {
        Pair p = new Pair(c -> c.mapped(false), c -> c);
        assertFalse(p.ab.mapped());
        assertFalse(p.ba.mapped());
        assertTrue(p.ba.writer(0, 0).offer(3, ByteBuffer.allocate(16)));
        p.ba.writer(0, 0).flush();
        AtomicInteger got = new AtomicInteger();
        assertEquals(1, p.a.reader(0).read((s, buf, o, l, src) -> got.set(s), 1, 5, TimeUnit.SECONDS));
        assertEquals(3, got.get());
    }

    @Test
    void aMappedWriterPublishesEveryMappedThresholdUnlessABatchThresholdIsGiven() throws Exception {
        assumeTrue(mapsMemory(), "mapped providers only");
        // 100 records of 1000 B (1008 with the header) = 100,800 bytes, no flush, no time bound: the default
        // mapped threshold (64 KiB) publishes once (at 66,528 bytes), an explicit 16 KiB batch threshold five
        // times, a 32 KiB mapped threshold three
        UnaryOperator<ChannelConfig.Builder> big = c -> c.ringCapacity(1 << 20).flushInterval(Duration.ZERO);
        assertEquals(1, publishes(new Pair(big, big)));
        UnaryOperator<ChannelConfig.Builder> explicit = c -> big.apply(c).batchThreshold(16 << 10);
        assertEquals(5, publishes(new Pair(explicit, explicit)));
        UnaryOperator<ChannelConfig.Builder> mapped = c -> big.apply(c).mappedBatchThreshold(32 << 10);
        assertEquals(3, publishes(new Pair(mapped, mapped)));
    }

    private static long publishes(Pair p) throws Exception {
        long before = p.a.metrics().writesPosted();
        ChannelWriter w = p.ab.writer(0, 0);
        for (int i = 0; i < 100; i++) {
            assertTrue(w.offer(1, ByteBuffer.allocate(1000)), "record " + i);
        }
        long published = p.a.metrics().writesPosted() - before;
        w.flush();
        int[] n = {0};
        while (n[0] < 100) {
            assertTrue(p.b.reader(0).read((s, buf, o, l, src) -> n[0]++, 100, 5, TimeUnit.SECONDS) > 0);
        }
        return published;
    }

    @Test
    void whileBothSidesAreAwakeNoMessageIsSent() throws Exception {
        assumeTrue(mapsMemory(), "mapped providers only");
        Pair p = new Pair(c -> c.ringCapacity(4096).batchThreshold(256).readNotifyThreshold(1024),
            c -> c.ringCapacity(4096).batchThreshold(256).readNotifyThreshold(1024));
        long sentA = p.a.metrics().notificationsSent();
        long sentB = p.b.metrics().notificationsSent();
        ChannelWriter w = p.ab.writer(0, 0);
        ChannelReader r = p.b.reader(0);
        int[] next = {0};
        int written = 0;
        // one thread, nobody ever sleeps: fill the ring, read it empty, 50 times (many credits, many wraps)
        for (int round = 0; round < 50; round++) {
            ByteBuffer rec = ByteBuffer.allocate(100).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            while (true) {
                rec.putInt(0, written);
                if (!w.offer(1, rec)) {
                    break;
                }
                written++;
            }
            w.flush();
            while (r.poll((s, buf, o, l, src) -> {
                assertEquals(next[0]++, buf.getInt(o));
            }, 1000) > 0) {
                // drain
            }
            assertEquals(written, next[0], "round " + round + ": everything flushed is readable at once");
        }
        assertTrue(written > 50 * 30, "written=" + written);
        assertEquals(sentA, p.a.metrics().notificationsSent(), "no doorbell: the reader never slept");
        assertEquals(sentB, p.b.metrics().notificationsSent(), "no credit message: credits are in shared memory");
    }

    @Test
    void aParkedReaderGetsExactlyOneWakeUp() throws Exception {
        assumeTrue(mapsMemory(), "mapped providers only");
        Pair p = new Pair(c -> c, c -> c);
        long sent = p.a.metrics().notificationsSent();
        long futexWakes = p.a.metrics().futexWakes();
        long bellWakes = p.a.metrics().bellWakes();
        Blocking.Call<Integer> reader = Blocking.start("parked-reader",
            () -> p.b.reader(0).read((s, buf, o, l, src) -> { }, 10, 30, TimeUnit.SECONDS));
        Blocking.awaitBlockedIn(reader, "ChannelReader.read", WAIT);
        ChannelWriter w = p.ab.writer(0, 0);
        assertTrue(w.offer(1, ByteBuffer.allocate(8)));
        w.flush();
        assertEquals(1, reader.result().get(10, TimeUnit.SECONDS));
        // with futexes the writer wakes the reader itself; without, it rings the reader's bell where the provider
        // has bells; else one doorbell (a SEND)
        int byFutex = Sleeper.futexes() ? 1 : 0;
        int byBell = !Sleeper.futexes() && hasBells() ? 1 : 0;
        assertEquals(futexWakes + byFutex, p.a.metrics().futexWakes(), "futex wakes for the parked reader");
        assertEquals(bellWakes + byBell, p.a.metrics().bellWakes(), "bell wakes for the parked reader");
        assertEquals(sent + 1 - byFutex - byBell, p.a.metrics().notificationsSent(),
            "doorbells for the parked reader");
    }

    @Test
    void aWriterParkedForSpaceGetsExactlyOneWakeUp() throws Exception {
        assumeTrue(mapsMemory(), "mapped providers only");
        UnaryOperator<ChannelConfig.Builder> small = c -> c.ringCapacity(4096).batchThreshold(256)
            .readNotifyThreshold(1024);
        Pair p = new Pair(small, small);
        ChannelWriter w = p.ab.writer(0, 0);
        while (w.offer(1, ByteBuffer.allocate(248))) {
            // fill
        }
        Blocking.Call<Integer> blocked = Blocking.start("parked-writer", () -> {
            w.write(1, ByteBuffer.allocate(248), 10, TimeUnit.SECONDS);
            return 1;
        });
        Blocking.awaitBlockedIn(blocked, "ChannelWriter.claim", WAIT);
        long sent = p.b.metrics().notificationsSent();
        long futexWakes = p.b.metrics().futexWakes();
        long bellWakes = p.b.metrics().bellWakes();
        AtomicInteger read = new AtomicInteger();
        while (read.get() < 4) {
            p.b.reader(0).poll((s, buf, o, l, src) -> read.incrementAndGet(), 4 - read.get());
        }
        assertEquals(1, blocked.result().get(10, TimeUnit.SECONDS), "1024 bytes consumed: credit published");
        int byFutex = Sleeper.futexes() ? 1 : 0;
        int byBell = !Sleeper.futexes() && hasBells() ? 1 : 0;
        assertEquals(futexWakes + byFutex, p.b.metrics().futexWakes(), "futex wakes for the parked writer");
        assertEquals(bellWakes + byBell, p.b.metrics().bellWakes(), "bell wakes for the parked writer");
        assertEquals(sent + 1 - byFutex - byBell, p.b.metrics().notificationsSent(),
            "doorbells for the parked writer");
    }

    @Test
    void anImpossibleHeadInSharedMemoryFailsThatPeerNamingIt() throws Exception {
        assumeTrue(mapsMemory(), "mapped providers only");
        Pair p = new Pair(c -> c, c -> c);
        p.ab.writer(0, 0).shared().publishHeadRelease(1L << 40);
        RdmxException e = org.junit.jupiter.api.Assertions.assertThrows(RdmxException.class,
            () -> p.b.reader(0).read((s, buf, o, l, src) -> { }, 1, 5, TimeUnit.SECONDS));
        assertTrue(e instanceof ConnectionClosedException, String.valueOf(e));
        assertEquals(p.nodeA.name(), ((ConnectionClosedException) e).peer());
        assertTrue(e.getMessage().contains("published head=" + (1L << 40)), e.getMessage());
        assertFalse(p.ba.isOpen());
    }
}
