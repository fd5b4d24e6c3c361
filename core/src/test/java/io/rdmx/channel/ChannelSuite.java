package io.rdmx.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Access;
import io.rdmx.transport.Connection;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RdmxTimeoutException;
import io.rdmx.transport.Region;
import io.rdmx.transport.WorkRequest;
import io.rdmx.transport.testsuite.Blocking;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import javax.management.ObjectName;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Ring channels over one provider; every provider runs it unchanged. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
public abstract class ChannelSuite {
    private static final AtomicInteger SEQ = new AtomicInteger();
    private static final Duration WAIT = Duration.ofSeconds(10);
    private final List<AutoCloseable> closeables = new ArrayList<>();

    /** @return the provider */
    protected abstract Fabric fabric();

    /**
     * Kills a node abruptly.
     *
     * @param node the node
     */
    protected abstract void kill(Node node);

    /**
     * Chooses where a node that is opened later will listen: sets the options' bind address if the provider
     * needs one and returns the address the node will have (tcp: a port reserved by binding a socket and
     * closing it; shm: a directory under {@code scratch}; loopback: the node's name).
     *
     * @param options the later node's options, its name set
     * @param scratch an empty private directory that lives as long as the test
     * <p>The default skips the tests that need it: a provider whose dial cannot tell "nothing listens there yet"
     * ({@link io.rdmx.transport.PeerNotListeningException}) from other failures (verbs, disni: rdma_cm reports
     * a rejected or unreachable address alike) has no retry to test.
     *
     * @return the address
     * @throws Exception if no address can be reserved
     */
    protected String reserveAddress(NodeOptions.Builder options, Path scratch) throws Exception {
        org.junit.jupiter.api.Assumptions.abort(fabric().name() + " does not report a peer that is not listening"
            + " yet (PeerNotListeningException), so connect does not retry it");
        return null;
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    /** Two engines and the channel between them. */
    protected final class Pair {
        final Node nodeA;
        final Node nodeB;
        final ChannelEngine a;
        final ChannelEngine b;
        final PeerChannel ab;
        final PeerChannel ba;

        Pair(int workersA, int workersB, UnaryOperator<ChannelConfig.Builder> tweak) throws Exception {
            nodeA = open("a");
            nodeB = open("b");
            a = ChannelEngine.open(nodeA, tweak.apply(ChannelConfig.builder(workersA)).build());
            closeables.add(a);
            b = ChannelEngine.open(nodeB, tweak.apply(ChannelConfig.builder(workersB)).build());
            closeables.add(b);
            ab = a.connect(nodeB.address(), WAIT);
            ba = b.accept(WAIT);
        }
    }

    Node open(String role) throws RdmxException {
        Node n = fabric().open(NodeOptions.builder().name("ch" + role + "-" + ProcessHandle.current().pid() + "-"
            + SEQ.incrementAndGet()).build());
        closeables.add(n);
        return n;
    }

    private static ByteBuffer record(int writer, int seq, int length) {
        ByteBuffer b = ByteBuffer.allocate(Math.max(8, length)).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        b.putInt(0, writer).putInt(4, seq);
        for (int i = 8; i < length; i++) {
            b.put(i, (byte) (seq + i));
        }
        return b;
    }

    /** Counts records per source and checks their order and content. */
    private static final class Checker implements RecordHandler {
        final int[][] next;
        int total;
        String error;

        Checker(int writers, int peers) {
            next = new int[peers][writers];
        }

        @Override
        public void onRecord(int streamId, ByteBuffer buffer, int offset, int length, RecordSource source) {
            int w = buffer.getInt(offset);
            int seq = buffer.getInt(offset + 4);
            if (w != source.peerWorker()) {
                error = "record from worker " + w + " reported as " + source.peerWorker();
            }
            if (streamId != (seq % 3)) {
                error = "stream " + streamId + " for seq " + seq;
            }
            if (seq != next[0][w]) {
                error = "from worker " + w + ": seq " + seq + " after " + (next[0][w] - 1);
            }
            for (int i = 8; i < length; i++) {
                if (buffer.get(offset + i) != (byte) (seq + i)) {
                    error = "corrupt byte " + i + " of seq " + seq;
                    break;
                }
            }
            next[0][w] = seq + 1;
            total++;
        }
    }

    private void allPairs(ChannelConfig.Notification mode, int capacity, int threshold, int records,
                          int maxLength) throws Exception {
        allPairs(mode, capacity, threshold, records, maxLength, c -> c);
    }

    private Pair allPairs(ChannelConfig.Notification mode, int capacity, int threshold, int records,
                          int maxLength, UnaryOperator<ChannelConfig.Builder> tweak) throws Exception {
        int wa = 2;
        int wb = 3;
        Pair p = new Pair(wa, wb, c -> tweak.apply(c.notification(mode).ringCapacity(capacity)
            .batchThreshold(threshold)));
        assertEquals(wb, p.ab.workers());
        assertEquals(wa, p.ba.workers());
        ExecutorService ex = Executors.newFixedThreadPool(wa + wb);
        try {
            List<Future<?>> writers = new ArrayList<>();
            for (int w = 0; w < wa; w++) {
                int me = w;
                writers.add(ex.submit(() -> {
                    java.util.Random rnd = new java.util.Random(me);
                    for (int i = 0; i < records; i++) {
                        for (int r = 0; r < wb; r++) {
                            ChannelWriter cw = p.ab.writer(me, r);
                            int len = 8 + rnd.nextInt(Math.min(maxLength, cw.maxPayload()) - 7);
                            cw.write(i % 3, record(me, i, len), 10, TimeUnit.SECONDS);
                        }
                    }
                    for (int r = 0; r < wb; r++) {
                        p.ab.writer(me, r).flush();
                    }
                    return null;
                }));
            }
            List<Future<Checker>> readers = new ArrayList<>();
            for (int r = 0; r < wb; r++) {
                ChannelReader reader = p.b.reader(r);
                readers.add(ex.submit(() -> {
                    Checker c = new Checker(wa, 1);
                    while (c.total < wa * records && c.error == null) {
                        if (reader.read(c, 64, 10, TimeUnit.SECONDS) == 0) {
                            throw new AssertionError("reader " + reader.worker() + " starved at " + c.total);
                        }
                    }
                    return c;
                }));
            }
            for (Future<?> f : writers) {
                f.get(60, TimeUnit.SECONDS);
            }
            for (Future<Checker> f : readers) {
                Checker c = f.get(60, TimeUnit.SECONDS);
                assertEquals(null, c.error);
                assertEquals(wa * records, c.total);
                for (int w = 0; w < wa; w++) {
                    assertEquals(records, c.next[0][w]);
                }
            }
        } finally {
            ex.shutdownNow();
        }
        ChannelMetrics ma = p.a.metrics();
        assertEquals((long) wa * wb * records, ma.recordsWritten());
        assertEquals((long) wa * wb * records, p.b.metrics().recordsRead());
        assertTrue(ma.writesPosted() > 0);
        assertTrue(p.b.metrics().notificationsReceived() > 0);
        return p;
    }

    /**
     * Up to 8 WRITEs per ring in flight, small batches that wrap a small ring: every record once and in order, on
     * every provider (whether the window fills depends on how fast completions come; {@code WritesInFlightTest}
     * fills it on purpose), and never more in flight than the window.
     */
    @ParameterizedTest
    @EnumSource(ChannelConfig.Notification.class)
    void severalWritesInFlightPerRingKeepEveryRecordOnceInOrder(ChannelConfig.Notification mode) throws Exception {
        Pair p = allPairs(mode, 8192, 256, 1500, 200, c -> c.writesInFlight(8).mapped(false));
        int window = mode == ChannelConfig.Notification.WRITE_WITH_IMM ? 1 : 8;
        assertEquals(window, p.ab.writesInFlight());
        for (int a = 0; a < 2; a++) {
            for (int b = 0; b < 3; b++) {
                int peak = p.ab.writer(a, b).peakWritesInFlight();
                assertTrue(peak >= 1 && peak <= window, "peak " + peak + " of window " + window);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(ChannelConfig.Notification.class)
    void everyPairOfWorkersGetsEveryRecordInOrder(ChannelConfig.Notification mode) throws Exception {
        allPairs(mode, 64 << 10, 16 << 10, 2000, 300);
    }

    @ParameterizedTest
    @EnumSource(ChannelConfig.Notification.class)
    void smallRingsWrapAndBlockWithoutLoss(ChannelConfig.Notification mode) throws Exception {
        allPairs(mode, 2048, 512, 1500, 400);
    }

    @Test
    void batchThresholdOfOnePostsEveryRecord() throws Exception {
        allPairs(ChannelConfig.Notification.SEND, 4096, 1, 300, 100);
    }

    @Test
    void zeroCopyClaimAndMultiplexedStreams() throws Exception {
        Pair p = new Pair(1, 1, c -> c);
        ChannelWriter w = p.ab.writer(0, 0);
        for (int s = 0; s < 5; s++) {
            int at = w.tryClaim(100 + s, 4);
            assertTrue(at >= 0);
            w.buffer().putInt(at, s * 11);
            w.commit();
        }
        w.flush();
        List<String> got = new ArrayList<>();
        ChannelReader r = p.b.reader(0);
        while (got.size() < 5) {
            r.read((stream, buf, off, len, src) -> got.add(stream + "=" + buf.getInt(off) + "@" + src.peerName()),
                10, 5, TimeUnit.SECONDS);
        }
        assertEquals(List.of("100=0@" + p.nodeA.name(), "101=11@" + p.nodeA.name(), "102=22@" + p.nodeA.name(),
            "103=33@" + p.nodeA.name(), "104=44@" + p.nodeA.name()), got);
    }

    /**
     * Sends a flushed marker record from {@code marker} (another writer to the same reader), reads until it
     * arrives, and returns everything read up to then: nothing sent before the marker can arrive after it on the
     * one ordered connection, so a record that moved too early shows up in this list.
     */
    private static List<String> readUpToMarker(ChannelWriter marker, ChannelReader r) throws Exception {
        int markerStream = 999;
        assertTrue(marker.offer(markerStream, ByteBuffer.allocate(8)));
        marker.flush();
        List<String> got = new ArrayList<>();
        RecordHandler h = (s, b, o, l, src) -> got.add("worker " + src.peerWorker() + " stream " + s);
        while (got.stream().noneMatch(g -> g.endsWith(" stream " + markerStream))) {
            assertTrue(r.read(h, 10, 5, TimeUnit.SECONDS) > 0, "marker never arrived; got " + got);
        }
        r.poll(h, 10);
        return got;
    }

    @Test
    void belowThresholdNothingMovesUntilFlush() throws Exception {
        Pair p = new Pair(2, 1, c -> c.batchThreshold(1024).flushInterval(Duration.ZERO));
        ChannelWriter w = p.ab.writer(0, 0);
        ChannelWriter marker = p.ab.writer(1, 0);
        assertTrue(w.offer(1, ByteBuffer.allocate(1008)), "1016 bytes: below the 1024 threshold");
        assertEquals(1016, w.unsent());
        assertEquals(0, p.a.metrics().writesPosted());
        ChannelReader r = p.b.reader(0);
        assertEquals(List.of("worker 1 stream 999"), readUpToMarker(marker, r), "the record below the threshold"
            + " must not arrive before a marker sent after it");
        assertEquals(1016, w.unsent(), "still held back");
        AtomicInteger got = new AtomicInteger();
        assertTrue(w.offer(1, ByteBuffer.allocate(0)), "8 more bytes reach the threshold exactly");
        while (got.get() < 2) {
            assertTrue(r.read((s, b, o, l, src) -> got.incrementAndGet(), 10, 5, TimeUnit.SECONDS) > 0);
        }
        assertTrue(w.offer(1, ByteBuffer.allocate(10)));
        assertEquals(List.of("worker 1 stream 999"), readUpToMarker(marker, r));
        w.flush();
        assertEquals(1, r.read((s, b, o, l, src) -> got.incrementAndGet(), 10, 5, TimeUnit.SECONDS));
    }

    @Test
    void timeBoundFlushesALoneRecord() throws Exception {
        Pair p = new Pair(1, 1, c -> c.batchThreshold(64 << 10).flushInterval(Duration.ofMillis(5)));
        assertTrue(p.ab.writer(0, 0).offer(9, ByteBuffer.allocate(16)));
        AtomicInteger stream = new AtomicInteger(-1);
        assertEquals(1, p.b.reader(0).read((s, b, o, l, src) -> stream.set(s), 10, 5, TimeUnit.SECONDS),
            "the network thread must flush it without a flush call");
        assertEquals(9, stream.get());
    }

    @Test
    void fullBufferBlocksTheWriterUntilTheReaderConsumes() throws Exception {
        Pair p = new Pair(1, 1, c -> c.ringCapacity(4096).batchThreshold(256).readNotifyThreshold(1024));
        ChannelWriter w = p.ab.writer(0, 0);
        int n = 0;
        while (w.offer(1, ByteBuffer.allocate(248))) {
            n++;
        }
        assertEquals(16, n, "4096 / 256");
        RdmxTimeoutException t = assertThrows(RdmxTimeoutException.class,
            () -> w.claim(1, 248, 200, TimeUnit.MILLISECONDS));
        assertTrue(t.getMessage().contains(p.nodeB.name()), t.getMessage());
        long blocksBefore = p.a.metrics().writerBlocks();
        Blocking.Call<Integer> blocked = Blocking.start("blocked-writer", () -> {
            w.write(1, ByteBuffer.allocate(248), 10, TimeUnit.SECONDS);
            return 1;
        });
        Blocking.awaitBlockedIn(blocked, "ChannelWriter.claim", WAIT);
        assertEquals(blocksBefore + 1, p.a.metrics().writerBlocks(), "the blocked write is counted");
        AtomicInteger read = new AtomicInteger();
        while (read.get() < 4) {
            p.b.reader(0).read((s, b, o, l, src) -> read.incrementAndGet(), 4 - read.get(), 5, TimeUnit.SECONDS);
        }
        assertEquals(1, blocked.result().get(10, TimeUnit.SECONDS),
            "4 x 256 consumed = the credit threshold: unblocked");
        assertTrue(p.a.metrics().writerBlockedNanos() > 0);
    }

    @Test
    void creditsBelowTheReadNotificationThresholdAreNotSent() throws Exception {
        Pair p = new Pair(1, 1, c -> c.ringCapacity(4096).batchThreshold(256).readNotifyThreshold(2048));
        ChannelWriter w = p.ab.writer(0, 0);
        while (w.offer(1, ByteBuffer.allocate(248))) {
            // fill
        }
        w.flush();
        AtomicInteger read = new AtomicInteger();
        long sentBefore = p.b.metrics().notificationsSent();
        while (read.get() < 7) {
            p.b.reader(0).read((s, b, o, l, src) -> read.incrementAndGet(), 7 - read.get(), 5, TimeUnit.SECONDS);
        }
        assertEquals(sentBefore, p.b.metrics().notificationsSent(),
            "7 x 256 = 1792 bytes consumed, below the 2048 threshold: no credit sent");
        // A marker record b -> a, sent after the reads: a credit sent before it would reach a first.
        assertTrue(p.ba.writer(0, 0).offer(5, ByteBuffer.allocate(8)));
        p.ba.writer(0, 0).flush();
        assertEquals(1, p.a.reader(0).read((s, b, o, l, src) -> { }, 1, 5, TimeUnit.SECONDS));
        assertEquals(ChannelWriter.BACK_PRESSURED, w.tryClaim(1, 248), "the writer heard of no space");
        p.b.reader(0).read((s, b, o, l, src) -> read.incrementAndGet(), 1, 5, TimeUnit.SECONDS);
        assertTrue(w.claim(1, 248, 5, TimeUnit.SECONDS) >= 0, "2048 consumed: credit sent, space back");
    }

    /**
     * Busy-spin waits ({@code spinsBeforePark=Integer.MAX_VALUE}: a blocked writer or reader never parks) still
     * stream while other threads of the JVM need safepoints (here a thread asking for them without a pause; in
     * the channel benchmark it was a deoptimization the network thread waited for). 32 B records through a 16 KiB
     * ring, wrapping it 40 times, so the writer runs out of space again and again and lives on credits alone.
     * A spin loop without a safepoint poll held the network thread at the safepoint until its 2^31 spins ran
     * out: no credit came and the writer failed with "no space in the buffer" long after its timeout.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void busySpinningWriterAndReaderStreamWhileTheJvmNeedsSafepoints() throws Exception {
        int capacity = 16 << 10;
        Pair p = new Pair(1, 1, c -> c.ringCapacity(capacity).spinsBeforePark(Integer.MAX_VALUE));
        ChannelWriter w = p.ab.writer(0, 0);
        int records = 40 * capacity / RecordDescriptor.recordLength(32);
        AtomicBoolean done = new AtomicBoolean();
        Thread safepoints = new Thread(() -> {
            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            while (!done.get()) {
                threads.findDeadlockedThreads(); // a stop-the-world VM operation
            }
        }, "safepoint-requests");
        safepoints.setDaemon(true);
        Blocking.Call<Integer> reader = Blocking.start("spinning-reader", () -> {
            int[] next = new int[1];
            String[] error = new String[1];
            while (next[0] < records && error[0] == null) {
                assertTrue(p.b.reader(0).read((s, b, o, l, src) -> {
                    if (b.getInt(o) != next[0]++ || l != 32) {
                        error[0] = "record " + (next[0] - 1) + ": seq=" + b.getInt(o) + " length=" + l;
                    }
                }, 256, 10, TimeUnit.SECONDS) > 0, "no record within 10 s after " + next[0]);
            }
            if (error[0] != null) {
                throw new AssertionError(error[0]);
            }
            return next[0];
        });
        try {
            safepoints.start();
            for (int i = 0; i < records; i++) {
                int at = w.claim(1, 32, 10, TimeUnit.SECONDS);
                w.buffer().putInt(at, i);
                w.commit();
            }
            w.flush();
            assertEquals(records, reader.result().get(10, TimeUnit.SECONDS));
        } finally {
            done.set(true);
        }
    }

    @Test
    void recordLargerThanTheLimitIsRefused() throws Exception {
        Pair p = new Pair(1, 1, c -> c.ringCapacity(4096));
        ChannelWriter w = p.ab.writer(0, 0);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> w.tryClaim(1, w.maxPayload() + 1));
        assertTrue(e.getMessage().contains("maxPayload=" + w.maxPayload()), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> p.ab.writer(1, 0));
        assertTrue(w.offer(1, ByteBuffer.allocate(w.maxPayload())));
    }

    @Test
    void peerDeathWakesBlockedReaderAndWriterNamingThePeer() throws Exception {
        Pair p = new Pair(1, 1, c -> c.ringCapacity(4096).batchThreshold(256));
        ChannelWriter w = p.ba.writer(0, 0);
        while (w.offer(1, ByteBuffer.allocate(248))) {
            // fill until the writer would block
        }
        Blocking.Call<Integer> reader = Blocking.start("blocked-reader",
            () -> p.b.reader(0).read((s, b, o, l, src) -> { }, 1, 30, TimeUnit.SECONDS));
        Blocking.Call<Integer> writer = Blocking.start("blocked-writer", () -> w.claim(1, 248, 30, TimeUnit.SECONDS));
        Blocking.awaitBlockedIn(reader, "ChannelReader.read", WAIT);
        Blocking.awaitBlockedIn(writer, "ChannelWriter.claim", WAIT);
        kill(p.nodeA);
        for (Blocking.Call<Integer> f : List.of(reader, writer)) {
            Throwable e = f.failure(Duration.ofSeconds(5));
            assertTrue(e instanceof ConnectionClosedException, String.valueOf(e));
            assertEquals(p.nodeA.name(), ((ConnectionClosedException) e).peer());
            assertTrue(e.getMessage().contains(p.nodeA.name()), e.getMessage());
            assertUserFacing(e);
        }
        assertFalse(p.ba.isOpen());
        assertEquals(ChannelWriter.CLOSED, w.tryClaim(1, 8));
    }

    @Test
    void closingAnEngineRightAfterItsNodeDiedThrowsNothing() throws Exception {
        for (int i = 0; i < 10; i++) {
            Node nodeA = open("a");
            Node nodeB = open("b");
            // a's engine has no network thread: nothing notices the death before its close does
            ChannelEngine a = ChannelEngine.open(nodeA, ChannelConfig.builder(1).engineThread(false).build());
            closeables.add(a);
            ChannelEngine b = ChannelEngine.open(nodeB, ChannelConfig.builder(1).build());
            closeables.add(b);
            PeerChannel ab = a.connect(nodeB.address(), WAIT);
            b.accept(WAIT);
            ChannelWriter w = ab.writer(0, 0);
            w.write(1, ByteBuffer.allocate(64), 5, TimeUnit.SECONDS); // unflushed: close would flush it
            kill(nodeA); // releases a's regions
            a.close();
            assertFalse(ab.isOpen());
            b.close();
        }
    }

    /**
     * A reader and a writer whose own node closed under them (the records that arrived were not all read): the
     * reader hands out only whole, correct records and then reports the closure as an {@link RdmxException};
     * the writer refuses further records. Neither reaches the region memory the node's close released (on verbs
     * an FFM arena: a read there threw {@code IllegalStateException: Already closed}). Node b runs its engine
     * without a network thread, so nothing notices the close before the reader does.
     */
    @Test
    void aReaderAndWriterWhoseNodeClosedReportTheClosureNotTheReleasedMemory() throws Exception {
        Node nodeA = open("a");
        Node nodeB = open("b");
        ChannelEngine a = ChannelEngine.open(nodeA, ChannelConfig.builder(1).build());
        closeables.add(a);
        ChannelEngine b = ChannelEngine.open(nodeB, ChannelConfig.builder(1).engineThread(false).build());
        closeables.add(b);
        PeerChannel ba = b.connect(nodeA.address(), WAIT); // b's connect runs its own duty cycle
        PeerChannel ab = a.accept(WAIT);
        ChannelWriter w = ab.writer(0, 0);
        int records = 16;
        for (int i = 0; i < records; i++) {
            w.write(0, le(i), 5, TimeUnit.SECONDS);
        }
        w.flush();
        ChannelReader r = b.reader(0);
        int[] next = {0};
        RecordHandler inOrder = (s, buf, o, l, src) -> {
            assertEquals(8, l);
            assertEquals(next[0], buf.getInt(o), "record " + next[0]);
            next[0]++;
        };
        assertEquals(1, r.read(inOrder, 1, 10, TimeUnit.SECONDS)); // the rest has arrived or is arriving
        ChannelWriter back = ba.writer(0, 0);
        back.write(0, le(1), 5, TimeUnit.SECONDS); // staged in b's region, not flushed
        nodeB.close(); // releases b's regions, the rings the reader reads included
        RdmxException end = null;
        for (int i = 0; i <= records && end == null; i++) {
            try {
                if (r.read(inOrder, records, 5, TimeUnit.SECONDS) == 0) {
                    break;
                }
            } catch (RdmxException e) {
                end = e;
            }
        }
        assertTrue(end != null, "the reader of a closed node read " + next[0] + " records and no closure");
        assertTrue(next[0] <= records, String.valueOf(next[0]));
        assertThrows(RdmxException.class, () -> r.read(inOrder, records, 1, TimeUnit.SECONDS));
        assertEquals(ChannelWriter.CLOSED, back.tryClaim(0, 8));
        assertThrows(RdmxException.class, () -> back.write(0, le(2), 1, TimeUnit.SECONDS));
    }

    /**
     * A record handler that throws: the exception reaches the reader's caller, the record it was handling is
     * handed over again by the next read, and the ring is read on as before (it was left marked as being read,
     * so nothing of it was ever delivered again).
     */
    @Test
    void aHandlerThatThrowsGetsItsRecordAgainAndTheRingIsReadOn() throws Exception {
        Pair p = new Pair(1, 1, c -> c.mapped(false)); // the rings a completion queues for the reader
        ChannelWriter w = p.ab.writer(0, 0);
        for (int i = 0; i < 10; i++) {
            w.write(0, le(i), 5, TimeUnit.SECONDS);
        }
        w.flush();
        ChannelReader r = p.b.reader(0);
        List<Integer> got = new ArrayList<>();
        boolean[] thrown = {false};
        RecordHandler h = (s, buf, o, l, src) -> {
            int v = buf.getInt(o);
            if (v == 3 && !thrown[0]) {
                thrown[0] = true;
                throw new IllegalArgumentException("the handler refuses record 3");
            }
            got.add(v);
        };
        IllegalArgumentException e = null;
        while (e == null && got.size() < 10) {
            try {
                assertTrue(r.read(h, 64, 10, TimeUnit.SECONDS) > 0, "starved at " + got);
            } catch (IllegalArgumentException x) {
                e = x;
            }
        }
        assertTrue(e != null && e.getMessage().contains("record 3"), String.valueOf(e));
        w.write(0, le(10), 5, TimeUnit.SECONDS);
        w.flush();
        while (got.size() < 11) {
            assertTrue(r.read(h, 64, 10, TimeUnit.SECONDS) > 0, "starved after the throw at " + got);
        }
        assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10), got);
    }

    private static ByteBuffer le(int v) {
        return ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(0, v);
    }

    /** A user-facing error: names no internal request id and says each thing once down its cause chain. */
    private static void assertUserFacing(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            String m = String.valueOf(t.getMessage());
            assertFalse(m.contains("wrId"), "internal request id in: " + m);
            Throwable c = t.getCause();
            if (c != null && c.getMessage() != null) {
                assertFalse(m.contains(c.getMessage()), "the cause repeats its wrapper: " + m);
            }
        }
    }

    @Test
    void aReaderFedByTwoPeersReportsTheLostOneOnceAndGoesOnWithTheOther() throws Exception {
        Node nodeC = open("c");
        ChannelEngine c = ChannelEngine.open(nodeC, ChannelConfig.builder(1).build());
        closeables.add(c);
        Node nodeA = open("a");
        ChannelEngine a = ChannelEngine.open(nodeA, ChannelConfig.builder(2).build());
        closeables.add(a);
        Node nodeB = open("b");
        ChannelEngine b = ChannelEngine.open(nodeB, ChannelConfig.builder(3).build());
        closeables.add(b);
        PeerChannel ac = a.connect(nodeC.address(), WAIT);
        PeerChannel ca = c.accept(WAIT);
        PeerChannel bc = b.connect(nodeC.address(), WAIT);
        c.accept(WAIT);
        ChannelReader r = c.reader(0);
        List<String> got = new ArrayList<>();
        RecordHandler h = (stream, buf, off, len, src) -> got.add(src.peerName() + "/" + src.peerWorker() + ":"
            + buf.getInt(off));
        for (int i = 0; i < 3; i++) {
            ac.writer(1, 0).write(1, le(i), 5, TimeUnit.SECONDS);
            bc.writer(2, 0).write(1, le(10 + i), 5, TimeUnit.SECONDS);
        }
        ac.writer(1, 0).flush();
        bc.writer(2, 0).flush();
        while (got.size() < 6) {
            assertTrue(r.read(h, 10, 5, TimeUnit.SECONDS) > 0, "starved at " + got);
        }
        String a1 = nodeA.name() + "/1:";
        String b2 = nodeB.name() + "/2:";
        assertEquals(List.of(a1 + 0, a1 + 1, a1 + 2), got.stream().filter(g -> g.startsWith(a1)).toList());

        Blocking.Call<Integer> blocked = Blocking.start("reader-of-two", () -> r.read(h, 10, 30, TimeUnit.SECONDS));
        Blocking.awaitBlockedIn(blocked, "ChannelReader.read", WAIT);
        kill(nodeA);
        Throwable lost = blocked.failure(Duration.ofSeconds(10));
        assertTrue(lost instanceof ConnectionClosedException, String.valueOf(lost));
        assertEquals(nodeA.name(), ((ConnectionClosedException) lost).peer());
        assertTrue(lost.getMessage().contains("'" + nodeA.name() + "'"), lost.getMessage());
        assertUserFacing(lost);
        assertEquals(org.slf4j.event.Level.INFO, ChannelEngine.failureLogLevel(ca), "a lost peer is no clean close");

        for (int i = 3; i < 8; i++) {
            bc.writer(2, 0).write(1, le(10 + i), 5, TimeUnit.SECONDS);
        }
        bc.writer(2, 0).flush();
        while (got.size() < 11) {
            assertTrue(r.read(h, 10, 5, TimeUnit.SECONDS) > 0, "the survivor's records must still come: " + got);
        }
        List<String> fromB = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            fromB.add(b2 + (10 + i));
        }
        assertEquals(fromB, got.stream().filter(g -> g.startsWith(b2)).toList());
        assertEquals(0, r.read(h, 10, 100, TimeUnit.MILLISECONDS), "the loss is reported once, not again");

        ChannelWriter toDead = ca.writer(0, 1);
        assertEquals(ChannelWriter.CLOSED, toDead.tryClaim(1, 8));
        ConnectionClosedException w = assertThrows(ConnectionClosedException.class,
            () -> toDead.write(1, ByteBuffer.allocate(8), 5, TimeUnit.SECONDS));
        assertEquals(nodeA.name(), w.peer());
        assertTrue(w.getMessage().contains("'" + nodeA.name() + "'"), w.getMessage());
        assertUserFacing(w);
    }

    /**
     * Issue 37: a failed peer's rings, control regions, ring memory and entry go once its readers reported it, so a
     * long-lived node serves many more short-lived peers (announcing many workers each) than its ring memory holds
     * at once, closing cleanly or dying; the records sent before the end still come before the loss. Mapped where
     * the provider maps (shm, loopback), and by WRITE.
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(booleans = {true, false})
    void aServerOutlivesManyMorePeersComingAndGoingThanItsRingMemoryHoldsAtOnce(boolean mapped) throws Exception {
        int capacity = 64 << 10;
        long perPeer = new PairLayout(2, 3, capacity, true).regionLength();
        Node serverNode = open("srv");
        ChannelEngine server = ChannelEngine.open(serverNode, ChannelConfig.builder(2).ringCapacity(capacity)
            .mapped(mapped).maxPeerMemory(perPeer).maxRingMemory(2 * perPeer).build());
        closeables.add(server);
        List<Integer> got = new ArrayList<>();
        RecordHandler h = (stream, buf, off, len, src) -> got.add(buf.getInt(off));
        for (int i = 0; i < 50; i++) {
            Node clientNode = open("churn" + i);
            ChannelEngine client = ChannelEngine.open(clientNode, ChannelConfig.builder(3).ringCapacity(capacity)
                .mapped(mapped).build());
            closeables.add(client);
            PeerChannel toServer = client.connect(serverNode.address(), WAIT);
            PeerChannel fromClient = server.accept(WAIT);
            ChannelReader r = server.reader(i % 2);
            toServer.writer(2, i % 2).write(1, le(i), 5, TimeUnit.SECONDS);
            toServer.writer(2, i % 2).flush();
            got.clear();
            if (i % 2 == 0) {
                client.close(); // delivers the record first, then BYE
            } else {
                while (got.isEmpty()) {
                    assertTrue(r.read(h, 10, 5, TimeUnit.SECONDS) > 0, "peer " + i + "'s record");
                }
                kill(clientNode);
            }
            for (int w = 0; w < 2; w++) {
                ChannelReader reader = server.reader(w);
                ConnectionClosedException lost = assertThrows(ConnectionClosedException.class, () -> {
                    while (true) {
                        assertTrue(reader.read(h, 10, 10, TimeUnit.SECONDS) > 0, "no loss reported");
                    }
                });
                assertEquals(clientNode.name(), lost.peer());
            }
            assertEquals(List.of(i), got, "peer " + i + "'s record, once, before its loss");
            Blocking.awaitTrue("peer " + i + "'s ring memory released", () -> server.ringMemory() == 0, WAIT);
            assertTrue(fromClient.released(), "peer " + i + "'s regions released");
        }
        assertEquals(0, server.peerCount(), "the engine forgot every released peer");
        for (int w = 0; w < 2; w++) {
            assertEquals(0, server.reader(w).mappedRings(), "reader " + w + " forgot the lost peers' rings");
            assertEquals(0, server.reader(w).bellPeers(), "reader " + w + " forgot the lost peers' bells");
        }

        Node honestNode = open("honest");
        ChannelEngine honest = ChannelEngine.open(honestNode, ChannelConfig.builder(3).ringCapacity(capacity)
            .mapped(mapped).build());
        closeables.add(honest);
        PeerChannel toServer = honest.connect(serverNode.address(), WAIT);
        PeerChannel fromHonest = server.accept(WAIT);
        assertEquals(new PairLayout(2, 3, capacity, fromHonest.mapped()).regionLength(), server.ringMemory(),
            "ring memory is the live peer's");
        got.clear();
        for (int w = 0; w < 3; w++) {
            for (int v = 0; v < 2; v++) {
                toServer.writer(w, v).write(1, le(100 + w * 2 + v), 5, TimeUnit.SECONDS);
                toServer.writer(w, v).flush();
            }
        }
        for (int v = 0; v < 2; v++) {
            int want = got.size() + 3;
            while (got.size() < want) {
                assertTrue(server.reader(v).read(h, 10, 5, TimeUnit.SECONDS) > 0, "honest peer's records: " + got);
            }
        }
        assertEquals(List.of(100, 102, 104, 101, 103, 105), List.of(got.stream().limit(3).sorted().toList(),
            got.stream().skip(3).sorted().toList()).stream().flatMap(List::stream).toList());
        fromHonest.writer(1, 2).write(1, le(7), 5, TimeUnit.SECONDS);
        fromHonest.writer(1, 2).flush();
        got.clear();
        while (got.isEmpty()) {
            assertTrue(honest.reader(2).read(h, 10, 5, TimeUnit.SECONDS) > 0, "the server's answer");
        }
        assertEquals(List.of(7), got);
    }

    @Test
    void aCleanCloseIsNoFailureOnEitherSide() throws Exception {
        Pair p = new Pair(2, 3, c -> c);
        p.ab.writer(1, 2).write(4, ByteBuffer.allocate(8), 5, TimeUnit.SECONDS);
        p.ab.writer(1, 2).flush();
        assertEquals(1, p.b.reader(2).read((s, b, o, l, src) -> { }, 1, 5, TimeUnit.SECONDS));
        p.a.close();
        assertFalse(p.ab.isOpen());
        Blocking.awaitTrue("b hears that a closed", () -> !p.ba.isOpen(), WAIT);
        assertEquals(org.slf4j.event.Level.DEBUG, ChannelEngine.failureLogLevel(p.ab), p.ab.failure().getMessage());
        assertEquals(org.slf4j.event.Level.DEBUG, ChannelEngine.failureLogLevel(p.ba), p.ba.failure().getMessage());
        assertEquals("peer '" + p.nodeA.name() + "' closed its channel engine", p.ba.failure().getMessage());
        Throwable e = assertThrows(ConnectionClosedException.class,
            () -> p.b.reader(2).read((s, b, o, l, src) -> { }, 1, 5, TimeUnit.SECONDS));
        assertEquals(p.ba.failure().getMessage(), e.getMessage());
        assertUserFacing(e);
        assertUserFacing(p.ab.closedException());
    }

    /** Counts records and ends of stream per remote worker, and what arrived out of order. */
    private static final class EndChecker implements RecordHandler {
        final int[] expected;
        final int[] records;
        final int[] ends;
        final List<String> errors = new ArrayList<>();
        final String peer;

        EndChecker(String peer, int[] expected) {
            this.peer = peer;
            this.expected = expected;
            this.records = new int[expected.length];
            this.ends = new int[expected.length];
        }

        @Override
        public void onRecord(int streamId, ByteBuffer buffer, int offset, int length, RecordSource source) {
            int w = source.peerWorker();
            if (ends[w] > 0) {
                errors.add("record " + records[w] + " from worker " + w + " after its end of stream");
            }
            if (buffer.getInt(offset + 4) != records[w]) {
                errors.add("worker " + w + ": seq " + buffer.getInt(offset + 4) + " for " + records[w]);
            }
            records[w]++;
        }

        @Override
        public void onEndOfStream(RecordSource source) {
            int w = source.peerWorker();
            if (!peer.equals(source.peerName())) {
                errors.add("end of stream from '" + source.peerName() + "'");
            }
            if (records[w] != expected[w]) {
                errors.add("end of stream from worker " + w + " after " + records[w] + " of " + expected[w]
                    + " records");
            }
            ends[w]++;
        }

        boolean allEnded() {
            for (int e : ends) {
                if (e == 0) {
                    return false;
                }
            }
            return true;
        }
    }

    @ParameterizedTest
    @EnumSource(ChannelConfig.Notification.class)
    void everyWriterEndsItsStreamOnceAfterAllItsRecords(ChannelConfig.Notification mode) throws Exception {
        int wa = 3;
        int wb = 2;
        // worker 0 writes nothing before its end: finishing an empty writer; small rings wrap and block
        int[] counts = {0, 300, 700};
        Pair p = new Pair(wa, wb, c -> c.notification(mode).ringCapacity(2048).batchThreshold(512));
        ExecutorService ex = Executors.newFixedThreadPool(wa + wb);
        try {
            List<Future<?>> writers = new ArrayList<>();
            for (int w = 0; w < wa; w++) {
                int me = w;
                writers.add(ex.submit(() -> {
                    for (int i = 0; i < counts[me]; i++) {
                        for (int r = 0; r < wb; r++) {
                            p.ab.writer(me, r).write(1, record(me, i, 8 + (i % 50)), 10, TimeUnit.SECONDS);
                        }
                    }
                    for (int r = 0; r < wb; r++) {
                        p.ab.writer(me, r).finish(10, TimeUnit.SECONDS);
                        assertTrue(p.ab.writer(me, r).isFinished());
                    }
                    return null;
                }));
            }
            List<Future<EndChecker>> readers = new ArrayList<>();
            for (int r = 0; r < wb; r++) {
                ChannelReader reader = p.b.reader(r);
                readers.add(ex.submit(() -> {
                    EndChecker c = new EndChecker(p.nodeA.name(), counts);
                    while (!c.allEnded()) {
                        assertTrue(reader.read(c, 64, 10, TimeUnit.SECONDS) > 0, "reader " + reader.worker()
                            + " starved with records=" + java.util.Arrays.toString(c.records) + " ends="
                            + java.util.Arrays.toString(c.ends));
                    }
                    assertEquals(0, reader.read(c, 64, 100, TimeUnit.MILLISECONDS), "nothing after the ends");
                    return c;
                }));
            }
            for (Future<?> f : writers) {
                f.get(60, TimeUnit.SECONDS);
            }
            for (Future<EndChecker> f : readers) {
                EndChecker c = f.get(60, TimeUnit.SECONDS);
                assertEquals(List.of(), c.errors);
                assertEquals(List.of(1, 1, 1), java.util.Arrays.stream(c.ends).boxed().toList(), "each end once");
                assertEquals(java.util.Arrays.stream(counts).boxed().toList(),
                    java.util.Arrays.stream(c.records).boxed().toList());
            }
        } finally {
            ex.shutdownNow();
        }
        long marks = (long) wa * wb;
        long records = (long) wb * java.util.Arrays.stream(counts).sum();
        assertEquals(records + marks, p.a.metrics().recordsWritten(), "an end counts as a record written");
        assertEquals(records + marks, p.b.metrics().recordsRead(), "and as a record read");
    }

    @Test
    void aFinishedWriterRefusesMoreRecordsNamingPeerAndWorker() throws Exception {
        Pair p = new Pair(1, 2, c -> c);
        ChannelWriter w = p.ab.writer(0, 1);
        assertTrue(w.offer(3, record(0, 0, 16)));
        w.finish(5, TimeUnit.SECONDS);
        w.finish(5, TimeUnit.SECONDS); // idempotent: no second end
        String who = "peer '" + p.nodeB.name() + "' worker 1";
        for (org.junit.jupiter.api.function.Executable misuse : List.<org.junit.jupiter.api.function.Executable>of(
            () -> w.tryClaim(3, 8),
            () -> w.claim(3, 8, 1, TimeUnit.SECONDS),
            () -> w.offer(3, ByteBuffer.allocate(8)),
            () -> w.write(3, ByteBuffer.allocate(8), 1, TimeUnit.SECONDS))) {
            IllegalStateException e = assertThrows(IllegalStateException.class, misuse);
            assertTrue(e.getMessage().contains(who) && e.getMessage().contains("finished"), e.getMessage());
        }
        List<String> got = new ArrayList<>();
        RecordHandler h = new RecordHandler() {
            @Override
            public void onRecord(int streamId, ByteBuffer buffer, int offset, int length, RecordSource source) {
                got.add("record " + streamId + " from " + source.peerWorker());
            }

            @Override
            public void onEndOfStream(RecordSource source) {
                got.add("end from " + source.peerName() + " " + source.peerWorker());
            }
        };
        while (got.size() < 2) {
            assertTrue(p.b.reader(1).read(h, 10, 5, TimeUnit.SECONDS) > 0, "got " + got);
        }
        assertEquals(0, p.b.reader(1).read(h, 10, 100, TimeUnit.MILLISECONDS));
        assertEquals(List.of("record 3 from 0", "end from " + p.nodeA.name() + " 0"), got);
        // the other ring of the same writer worker is not finished
        assertTrue(p.ab.writer(0, 0).offer(3, ByteBuffer.allocate(8)));
    }

    @Test
    void finishThenEngineCloseIsACleanCloseOnBothSides() throws Exception {
        Pair p = new Pair(2, 1, c -> c);
        p.ab.writer(0, 0).write(4, record(0, 0, 8), 5, TimeUnit.SECONDS);
        p.ab.writer(0, 0).finish(5, TimeUnit.SECONDS);
        p.ab.writer(1, 0).finish(5, TimeUnit.SECONDS);
        EndChecker c = new EndChecker(p.nodeA.name(), new int[] {1, 0});
        while (!c.allEnded()) {
            assertTrue(p.b.reader(0).read(c, 10, 5, TimeUnit.SECONDS) > 0, "ends " + java.util.Arrays.toString(c.ends));
        }
        assertEquals(List.of(), c.errors);
        p.a.close();
        assertFalse(p.ab.isOpen());
        Blocking.awaitTrue("b hears that a closed", () -> !p.ba.isOpen(), WAIT);
        assertEquals(org.slf4j.event.Level.DEBUG, ChannelEngine.failureLogLevel(p.ab), p.ab.failure().getMessage());
        assertEquals(org.slf4j.event.Level.DEBUG, ChannelEngine.failureLogLevel(p.ba), p.ba.failure().getMessage());
        assertEquals("peer '" + p.nodeA.name() + "' closed its channel engine", p.ba.failure().getMessage());
        Throwable e = assertThrows(ConnectionClosedException.class,
            () -> p.b.reader(0).read(c, 1, 5, TimeUnit.SECONDS));
        assertUserFacing(e);
        assertEquals(List.of(), c.errors, "nothing more after the ends");
    }

    @Test
    void moreRingsThanAnImmediateCanNameFailTheHandshakeOnBothSides() throws Exception {
        Node na = open("a");
        Node nb = open("b");
        ChannelConfig.Notification imm = ChannelConfig.Notification.WRITE_WITH_IMM;
        ChannelEngine a = ChannelEngine.open(na, ChannelConfig.builder(64).notification(imm).ringCapacity(1024)
            .build());
        closeables.add(a);
        ChannelEngine b = ChannelEngine.open(nb, ChannelConfig.builder(65).notification(imm).ringCapacity(1024)
            .build());
        closeables.add(b);
        RdmxException ea = assertThrows(RdmxException.class, () -> a.connect(nb.address(), WAIT));
        assertTrue(ea.getMessage().contains("workers local=64 x peer=65") && ea.getMessage().contains("4096"),
            ea.getMessage());
        RdmxException eb = assertThrows(RdmxException.class, () -> b.accept(WAIT));
        assertTrue(eb.getMessage().contains("workers local=65 x peer=64") && eb.getMessage().contains("4096"),
            eb.getMessage());
        assertUserFacing(ea);
        assertUserFacing(eb);
    }

    @Test
    void configurationMismatchFailsTheHandshakeClearly() throws Exception {
        Node na = open("a");
        Node nb = open("b");
        ChannelEngine a = ChannelEngine.open(na, ChannelConfig.builder(1).ringCapacity(4096).build());
        closeables.add(a);
        ChannelEngine b = ChannelEngine.open(nb, ChannelConfig.builder(1).ringCapacity(8192).build());
        closeables.add(b);
        RdmxException e = assertThrows(RdmxException.class, () -> a.connect(nb.address(), WAIT));
        assertTrue(e.getMessage().contains("ringCapacity local=4096 peer=8192"), e.getMessage());
    }

    @Test
    void malformedControlMessageFailsOnlyThatPeer() throws Exception {
        Pair p = new Pair(1, 1, c -> c);
        Node rogue = open("rogue");
        Connection c = rogue.connect(p.nodeB.address(), WAIT);
        Region r = rogue.register(64, Access.ALL);
        r.buffer().put(0, (byte) 3).put(1, (byte) 99);
        c.post(WorkRequest.send(r, 0, 8));
        RdmxException e = assertThrows(RdmxException.class, () -> p.b.accept(WAIT));
        assertTrue(e.getMessage().contains("unsupported channel protocol version=99"), e.getMessage());
        assertTrue(e.getMessage().contains(rogue.name()), e.getMessage());
        assertTrue(p.ab.writer(0, 0).offer(1, ByteBuffer.allocate(8)));
        p.ab.writer(0, 0).flush();
        assertEquals(1, p.b.reader(0).read((s, b, o, l, src) -> { }, 1, 5, TimeUnit.SECONDS),
            "the good peer is unaffected");
    }

    @Test
    void metricsAreExposedThroughJmx() throws Exception {
        Pair p = new Pair(1, 1, c -> c);
        for (int i = 0; i < 10; i++) {
            p.ab.writer(0, 0).write(1, ByteBuffer.allocate(100), 5, TimeUnit.SECONDS);
        }
        p.ab.writer(0, 0).flush();
        AtomicInteger n = new AtomicInteger();
        while (n.get() < 10) {
            p.b.reader(0).read((s, b, o, l, src) -> n.incrementAndGet(), 10, 5, TimeUnit.SECONDS);
        }
        ObjectName name = new ObjectName("io.rdmx:type=ChannelEngine,node=" + ObjectName.quote(p.nodeA.name()));
        assertEquals(10L, ManagementFactory.getPlatformMBeanServer().getAttribute(name, "RecordsWritten"));
        assertEquals(1000L, ManagementFactory.getPlatformMBeanServer().getAttribute(name, "BytesWritten"));
        assertEquals(10, p.b.metrics().recordsRead());
    }

    @Test
    void closingTheEngineWakesItsReaders() throws Exception {
        Pair p = new Pair(1, 1, c -> c);
        Blocking.Call<Integer> reader = Blocking.start("blocked-reader",
            () -> p.b.reader(0).read((s, b, o, l, src) -> { }, 1, 30, TimeUnit.SECONDS));
        Blocking.awaitBlockedIn(reader, "ChannelReader.read", WAIT);
        p.b.close();
        Throwable e = reader.failure(Duration.ofSeconds(5));
        assertTrue(e instanceof RdmxException, String.valueOf(e));
    }

    /**
     * {@link ChannelReader#park}, the wait of a caller that cannot take records: it may return early, so the
     * caller parks again until what it waits for happened (as the shuffle's worker does). Each park below would
     * last an hour unless its wake-up ends it; the bound on each wait only keeps a missing wake-up from hanging
     * the build, it makes no claim about speed. The loss it woke for is reported by the next read.
     */
    @Test
    void aParkedReaderIsWokenByWakeupByALostPeerAndByClose() throws Exception {
        Pair p = new Pair(1, 1, c -> c);
        ChannelReader r = p.b.reader(0);
        AtomicBoolean happened = new AtomicBoolean();
        Callable<Integer> parkUntil = () -> {
            int parks = 0;
            while (!happened.get()) {
                r.park(1, TimeUnit.HOURS);
                parks++;
            }
            return parks;
        };
        Blocking.Call<Integer> woken = Blocking.start("parked-reader", parkUntil);
        Blocking.awaitBlockedIn(woken, "ChannelReader.park", WAIT);
        happened.set(true);
        r.wakeup();
        assertTrue(woken.result().get(30, TimeUnit.SECONDS) > 0);

        happened.set(false);
        Blocking.Call<Integer> lost = Blocking.start("parked-reader", parkUntil);
        Blocking.awaitBlockedIn(lost, "ChannelReader.park", WAIT);
        happened.set(true);
        kill(p.nodeA);
        assertTrue(lost.result().get(30, TimeUnit.SECONDS) > 0);
        ConnectionClosedException e = assertThrows(ConnectionClosedException.class,
            () -> r.read((st, b, o, l, src) -> { }, 1, 10, TimeUnit.SECONDS));
        assertEquals(p.nodeA.name(), e.peer());

        happened.set(false);
        Blocking.Call<Integer> closed = Blocking.start("parked-reader", parkUntil);
        Blocking.awaitBlockedIn(closed, "ChannelReader.park", WAIT);
        happened.set(true);
        p.b.close();
        assertTrue(closed.result().get(30, TimeUnit.SECONDS) > 0);
        assertThrows(RdmxException.class, () -> r.read((st, b, o, l, src) -> { }, 1, 1, TimeUnit.SECONDS));
    }

    @Test
    void closeEndsTheAcceptorsWaitForConnections() throws Exception {
        Pair p = new Pair(1, 1, c -> c);
        String name = "rdmx-accept-" + p.nodeB.name();
        Thread acceptor = Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals(name))
            .findFirst().orElseThrow(() -> new AssertionError("no thread " + name));
        p.b.close();
        // close waits for the acceptor a few seconds at most; its wait for a connection lasts far longer
        assertFalse(acceptor.isAlive(), name + " still waits for connections after the engine closed: "
            + java.util.Arrays.toString(acceptor.getStackTrace()));
    }

    @Test
    void connectWaitsForAPeerNodeThatStartsLater(@TempDir Path scratch) throws Exception {
        ChannelEngine a = ChannelEngine.open(open("a"), ChannelConfig.builder(1).build());
        closeables.add(a);
        NodeOptions.Builder later = NodeOptions.builder().name("chlater-" + ProcessHandle.current().pid() + "-"
            + SEQ.incrementAndGet());
        String address = reserveAddress(later, scratch);
        Blocking.Call<PeerChannel> connecting = Blocking.start("connect", () -> a.connect(address, WAIT));
        // the first attempt found nothing listening and the engine waits to try again
        Blocking.awaitBlockedIn(connecting, "ChannelEngine.backOff", WAIT);
        Node nodeB = fabric().open(later.build());
        closeables.add(nodeB);
        assertEquals(address, nodeB.address());
        ChannelEngine b = ChannelEngine.open(nodeB, ChannelConfig.builder(1).build());
        closeables.add(b);
        PeerChannel ab = connecting.result().get(WAIT.toSeconds(), TimeUnit.SECONDS);
        PeerChannel ba = b.accept(WAIT);
        assertEquals(nodeB.name(), ab.name());
        assertEquals(a.node().name(), ba.name());
    }

    @Test
    void connectToAnAddressWhereNothingEverListensFailsAfterTheTimeoutNamingIt(@TempDir Path scratch)
        throws Exception {
        ChannelEngine a = ChannelEngine.open(open("a"), ChannelConfig.builder(1).build());
        closeables.add(a);
        NodeOptions.Builder never = NodeOptions.builder().name("chnever-" + ProcessHandle.current().pid() + "-"
            + SEQ.incrementAndGet());
        String address = reserveAddress(never, scratch);
        RdmxTimeoutException e = assertThrows(RdmxTimeoutException.class,
            () -> a.connect(address, Duration.ofSeconds(2))); // a first dial alone may take 500 ms when loaded
        assertTrue(e.getMessage().contains("address=" + address), e.getMessage());
        assertTrue(e.getMessage().contains("'" + a.node().name() + "'"), e.getMessage());
        // the last attempt's failure is the cause, not repeated in the message
        assertTrue(e.getCause() instanceof io.rdmx.transport.PeerNotListeningException, String.valueOf(e.getCause()));
        assertTrue(e.getCause().getMessage().contains(address), e.getCause().getMessage());
        assertFalse(e.getMessage().contains(e.getCause().getMessage()), e.getMessage());
    }

    @Test
    void aSecondEngineOnANodeIsRefusedNamingTheNode() throws Exception {
        Node n = open("a");
        ChannelEngine first = ChannelEngine.open(n, ChannelConfig.builder(1).build());
        closeables.add(first);
        IllegalStateException e = assertThrows(IllegalStateException.class,
            () -> ChannelEngine.open(n, ChannelConfig.builder(1).build()));
        assertTrue(e.getMessage().contains("'" + n.name() + "'"), e.getMessage());
        // the first engine still works: a peer connects to it and a record goes through
        Node other = open("b");
        ChannelEngine b = ChannelEngine.open(other, ChannelConfig.builder(1).build());
        closeables.add(b);
        PeerChannel ba = b.connect(n.address(), WAIT);
        first.accept(WAIT);
        ba.writer(0, 0).write(0, ByteBuffer.wrap(new byte[] {1, 2, 3}), WAIT.toMillis(), TimeUnit.MILLISECONDS);
        ba.writer(0, 0).flush();
        AtomicInteger got = new AtomicInteger();
        assertEquals(1, first.reader(0).read((s, buf, off, len, src) -> got.addAndGet(len), 16, WAIT.toMillis(),
            TimeUnit.MILLISECONDS));
        assertEquals(3, got.get());
        // once the first engine is closed, the node takes a new one
        first.close();
        ChannelEngine second = ChannelEngine.open(n, ChannelConfig.builder(1).build());
        closeables.add(second);
        assertTrue(second.isOpen());
    }

    /**
     * A log call that throws a {@link LinkageError} while a peer's failure is handled (what the SLF4J 2 fluent API
     * did under Hadoop's SLF4J 1.7: {@code NoSuchMethodError: Logger.atLevel}, on the I/O thread) fails that peer
     * only: the network and I/O threads live on, another peer's records still flow both ways, and a new peer
     * connects. slf4j-simple looks System.err up on every line, so a System.err that throws makes every log call
     * throw while the peer goes.
     */
    @Test
    void aLogCallThatThrowsWhileAPeerFailsKillsNoThread() throws Exception {
        Node nodeS = open("s");
        ChannelEngine s = ChannelEngine.open(nodeS, ChannelConfig.builder(1).build());
        closeables.add(s);
        ChannelEngine[] clients = new ChannelEngine[3];
        Node[] nodes = new Node[3];
        for (int i = 0; i < 3; i++) {
            nodes[i] = open("c" + i);
            clients[i] = ChannelEngine.open(nodes[i], ChannelConfig.builder(1).build());
            closeables.add(clients[i]);
        }
        clients[0].connect(nodeS.address(), WAIT);
        PeerChannel s0 = s.accept(WAIT);
        PeerChannel c1 = clients[1].connect(nodeS.address(), WAIT);
        PeerChannel s1 = s.accept(WAIT);
        java.util.Set<String> threads = threadsOf(nodeS.name());
        assertTrue(threads.stream().anyMatch(t -> t.startsWith("rdmx-channel-")), "no network thread: " + threads);
        // the tests' slf4j-simple logs at WARN; the engine logs a peer's end at INFO: let it, for this test
        int level = engineLogLevel(-1);
        java.io.PrintStream err = System.err;
        java.util.Set<String> threw = java.util.concurrent.ConcurrentHashMap.newKeySet();
        System.setErr(new java.io.PrintStream(new java.io.OutputStream() {
            @Override
            public void write(int b) {
                threw.add(Thread.currentThread().getName());
                throw new NoSuchMethodError("'org.slf4j.spi.LoggingEventBuilder org.slf4j.Logger.atLevel("
                    + "org.slf4j.event.Level)'");
            }
        }, true));
        try {
            kill(nodes[0]);
            long deadline = System.nanoTime() + WAIT.toNanos();
            // until the node logged the peer's end: a thread not of the killed node wrote to System.err (one of the
            // node's threads; on loopback, whose completions are delivered by the thread that causes them, this one)
            while ((s0.isOpen() || threw.stream().allMatch(t -> t.contains(nodes[0].name())))
                && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
        } finally {
            System.setErr(err);
            engineLogLevel(level);
        }
        assertFalse(s0.isOpen(), "the killed peer is still open");
        assertFalse(threw.stream().allMatch(t -> t.contains(nodes[0].name())), "no log call of the node threw: "
            + threw);
        assertTrue(s1.isOpen() && c1.isOpen(), "the other peer went down");
        assertTrue(threadsOf(nodeS.name()).containsAll(threads), "threads of the node died: before " + threads
            + ", now " + threadsOf(nodeS.name()));
        String gone = nodes[0].name();
        echo(c1, s, s1, clients[1], gone);
        PeerChannel c2 = clients[2].connect(nodeS.address(), WAIT);
        PeerChannel s2 = s.accept(WAIT);
        echo(c2, s, s2, clients[2], gone);
        echo(c1, s, s1, clients[1], gone);
    }

    /**
     * One record from the client to the server and one back, each read within {@link #WAIT}; the server's reader
     * reports the failure of the peer {@code gone} (once) before.
     */
    private static void echo(PeerChannel client, ChannelEngine server, PeerChannel atServer, ChannelEngine clientEngine,
                             String gone) throws Exception {
        client.writer(0, 0).write(1, ByteBuffer.allocate(16), 10, TimeUnit.SECONDS);
        client.writer(0, 0).flush();
        AtomicInteger got = new AtomicInteger();
        assertEquals(1, readOne(server.reader(0), got, gone));
        atServer.writer(0, 0).write(2, ByteBuffer.allocate(24), 10, TimeUnit.SECONDS);
        atServer.writer(0, 0).flush();
        assertEquals(1, readOne(clientEngine.reader(0), got, gone));
        assertEquals(40, got.get());
    }

    /**
     * Sets the level of {@link ChannelEngine}'s logger (slf4j-simple's {@code SimpleLogger.currentLogLevel}, the
     * tests' binding); aborts the test under another binding.
     *
     * @param level the level to set, or -1 for INFO
     * @return the level it had
     */
    private static int engineLogLevel(int level) throws ReflectiveOperationException {
        java.lang.reflect.Field log = ChannelEngine.class.getDeclaredField("LOG");
        log.setAccessible(true);
        Object logger = log.get(null);
        org.junit.jupiter.api.Assumptions.assumeTrue(
            logger.getClass().getName().equals("org.slf4j.simple.SimpleLogger"),
            "the test sets the level of slf4j-simple's logger; the binding is " + logger.getClass().getName());
        java.lang.reflect.Field current = logger.getClass().getDeclaredField("currentLogLevel");
        current.setAccessible(true);
        int was = current.getInt(logger);
        if (level < 0) {
            java.lang.reflect.Field info = logger.getClass().getDeclaredField("LOG_LEVEL_INFO");
            info.setAccessible(true);
            level = info.getInt(null);
        }
        current.setInt(logger, level);
        return was;
    }

    /** The names of the live threads named after a node (its I/O and network threads). */
    private static java.util.Set<String> threadsOf(String node) {
        java.util.Set<String> names = new java.util.TreeSet<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive() && t.getName().contains(node)) {
                names.add(t.getName());
            }
        }
        return names;
    }

    private static int readOne(ChannelReader r, AtomicInteger bytes, String gone) throws Exception {
        for (int i = 0; ; i++) {
            try {
                return r.read((st, b, o, l, src) -> bytes.addAndGet(l), 1, 10, TimeUnit.SECONDS);
            } catch (ConnectionClosedException e) {
                if (i > 0 || !gone.equals(e.peer())) {
                    throw e;
                }
            }
        }
    }
}
