package io.rdmx.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.internal.CompletionQueueImpl;
import io.rdmx.transport.tcp.TcpFabric;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * On tcp, a notification reaches the blocked reader from the I/O thread that received it: no completion goes
 * through the node's completion queue and the engine's network thread.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpInlineDeliveryTest {
    private static final AtomicInteger SEQ = new AtomicInteger();
    private final List<AutoCloseable> open = new ArrayList<>();
    private PeerChannel received;
    /**
     * Open the nodes with the completion queue's waiter off the socket ({@link CompletionQueueImpl#FOLLOWER_READS_PROP}
     * false): a spinning reader is then the only thread besides the I/O thread that reads it (while the engine's
     * network thread waits on the queue it holds the socket's input, and a spinner's look finds it taken).
     */
    private boolean spinnerOnly;

    @AfterEach
    void tearDown() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private ChannelEngine engine(String role) throws Exception {
        return engine(role, ChannelConfig.builder(1).build());
    }

    private ChannelEngine engine(String role, ChannelConfig config) throws Exception {
        NodeOptions o = NodeOptions.builder().name(role + "-" + SEQ.incrementAndGet()).build();
        Node n;
        String before = System.getProperty(CompletionQueueImpl.FOLLOWER_READS_PROP);
        if (spinnerOnly) {
            System.setProperty(CompletionQueueImpl.FOLLOWER_READS_PROP, "false");
        }
        try {
            n = new TcpFabric().open(o);
        } finally {
            if (before == null) {
                System.clearProperty(CompletionQueueImpl.FOLLOWER_READS_PROP);
            } else {
                System.setProperty(CompletionQueueImpl.FOLLOWER_READS_PROP, before);
            }
        }
        open.add(n);
        ChannelEngine e = ChannelEngine.open(n, config);
        open.add(e);
        return e;
    }

    /** Streams records to a reader that is parked when they come; returns the two engines. */
    private ChannelEngine[] stream(int records) throws Exception {
        return send(records, false);
    }

    /**
     * Sends records to a reader that is blocked before the first is sent; in lock step, one at a time, each only
     * once the reader is blocked again and the one before was read: with follower reads on, the reader then
     * normally waits in its own select on the peer's socket, holding the input, so the I/O thread leaves the socket
     * to it. Sets {@link #received}; returns the two engines.
     */
    private ChannelEngine[] send(int records, boolean lockStep) throws Exception {
        ChannelEngine a = engine("writer");
        ChannelEngine b = engine("reader");
        PeerChannel p = a.connect(b.node().address(), Duration.ofSeconds(10));
        PeerChannel q = b.accept(Duration.ofSeconds(10));
        received = q;
        ChannelWriter w = p.writer(0, 0);
        ChannelReader r = b.reader(0);
        AtomicLong got = new AtomicLong();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread reader = new Thread(() -> {
            try {
                while (got.get() < records) {
                    got.addAndGet(r.read((s, buf, o, l, src) -> { }, 1024, 20, TimeUnit.SECONDS));
                }
            } catch (Throwable t) {
                failed.set(t);
            }
        }, "test-reader");
        reader.start();
        // the reader sleeps before anything is sent: only a wake-up brings the data to it
        io.rdmx.transport.testsuite.Blocking.awaitBlockedIn(reader, "ChannelReader.read", Duration.ofSeconds(10));
        ByteBuffer payload = ByteBuffer.allocate(100);
        for (int i = 0; i < records; i++) {
            w.write(1, payload, 10, TimeUnit.SECONDS);
            if (lockStep) {
                w.flush();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (got.get() <= i && failed.get() == null && System.nanoTime() - deadline < 0) {
                    Thread.onSpinWait();
                }
                assertEquals(null, failed.get());
                assertEquals(i + 1, got.get(), "record " + i + " did not reach the reader");
                if (i + 1 < records) {
                    io.rdmx.transport.testsuite.Blocking.awaitBlockedIn(reader, "ChannelReader.read",
                        Duration.ofSeconds(10));
                }
            } else if (i % 10 == 9) {
                w.flush();
            }
        }
        w.flush();
        reader.join(TimeUnit.SECONDS.toMillis(30));
        assertFalse(reader.isAlive(), "reader still waiting");
        assertEquals(null, failed.get());
        assertEquals(records, got.get());
        assertTrue(p.isOpen() && q.isOpen());
        return new ChannelEngine[] {a, b};
    }

    @Test
    void theIoThreadWakesTheReaderWithoutTheQueueOrTheNetworkThread() throws Exception {
        ChannelEngine[] e = stream(2000);
        for (ChannelEngine x : e) {
            assertEquals(0, x.queuedCompletions(), "node '" + x.node().name() + "': completions went through the "
                + "queue to the network thread");
            assertEquals(0, x.node().completionQueue().size());
        }
        assertTrue(received.inlineCompletions() > 0, "no completion was handled inline at the reader's node");
    }

    /** Spins of the spinning case: then the reader parks until its timeout. */
    private static final int SPINS = 256;
    /**
     * Waits tried in the spinning case, the first that looks often enough passes: while the I/O thread reads the
     * socket (handling what came at connect, say) a spinner's look finds it busy, and 256 spins that only find it
     * busy last a few microseconds.
     */
    private static final int ATTEMPTS = 4;

    /**
     * Everything a tcp peer sends comes through its socket, so a spin that does not read the socket cannot see it
     * (each look skipped adds to every message's latency). Nothing is sent here: the reader spins {@link #SPINS}
     * times, then parks until its timeout. One look per 32 spins, as beside mapped rings, would make
     * {@code SPINS / 32} looks plus the few of the parked wait, in every attempt.
     */
    @Test
    void aSpinningReaderOfATcpPeerReadsTheSocketOnEverySpin() throws Exception {
        spinnerOnly = true;
        ChannelEngine a = engine("writer");
        ChannelEngine b = engine("reader", ChannelConfig.builder(1).spinsBeforePark(SPINS).build());
        a.connect(b.node().address(), Duration.ofSeconds(10));
        io.rdmx.transport.selector.SocketConnection c =
            (io.rdmx.transport.selector.SocketConnection) b.accept(Duration.ofSeconds(10)).connection();
        ChannelReader r = b.reader(0);
        long looks = 0;
        for (int i = 0; i < ATTEMPTS && looks < SPINS / 2; i++) {
            long before = c.followerLooks();
            assertEquals(0, r.read((s, buf, o, l, src) -> { }, 1, 100, TimeUnit.MILLISECONDS));
            looks = c.followerLooks() - before;
        }
        assertTrue(looks >= SPINS / 2, looks + " reads of the socket in " + SPINS + " spins and a parked wait");
    }

    @Test
    void theBlockedReaderReadsTheSocketItselfUnlessFollowerReadsAreOff() throws Exception {
        // a reader waiting in its own select owns the input: the I/O thread skips the socket and the reader reads
        // it. A round can still go to the I/O thread (its timer held the read lock at that moment, or it took the
        // input back just as the reader came to wait, which then sleeps instead): hence 20 rounds, not a stream
        // that the I/O thread may read in one go before the reader runs
        send(20, true);
        long followed = ((io.rdmx.transport.selector.SocketConnection) received.connection()).followerReads();
        assertTrue(followed > 0, "the reader never read its peer's socket itself");
        String before = System.getProperty(TcpFabric.FOLLOWER_READS_PROP);
        System.setProperty(TcpFabric.FOLLOWER_READS_PROP, "false");
        try {
            send(20, true);
        } finally {
            if (before == null) {
                System.clearProperty(TcpFabric.FOLLOWER_READS_PROP);
            } else {
                System.setProperty(TcpFabric.FOLLOWER_READS_PROP, before);
            }
        }
        assertEquals(0, ((io.rdmx.transport.selector.SocketConnection) received.connection()).followerReads(),
            "a reader read the socket with " + TcpFabric.FOLLOWER_READS_PROP + "=false");
    }

    /**
     * A writer out of space waits on its sole peer's socket, which brings the credits, and reads it itself: the
     * credit and the ACK that completes its WRITEs are handled on the writer's thread, which then posts the data
     * committed meanwhile itself (before, it slept until the I/O thread had read the credit and woken it, and the
     * I/O thread posted the data). Lock step: the writer fills the ring and blocks, then the reader reads it all;
     * 20 rounds, as a round can still go to the I/O thread (its timer held the socket's read lock, or it took the
     * input back just as the writer came to wait). With follower reads off, the I/O thread reads every credit.
     */
    @Test
    void aWriterOutOfSpaceReadsItsPeersSocketItselfUnlessFollowerReadsAreOff() throws Exception {
        assertTrue(creditRounds(20) > 0, "the writer never read its peer's socket itself");
        String before = System.getProperty(TcpFabric.FOLLOWER_READS_PROP);
        System.setProperty(TcpFabric.FOLLOWER_READS_PROP, "false");
        try {
            assertEquals(0, creditRounds(20), "a writer read the socket with " + TcpFabric.FOLLOWER_READS_PROP
                + "=false");
        } finally {
            if (before == null) {
                System.clearProperty(TcpFabric.FOLLOWER_READS_PROP);
            } else {
                System.setProperty(TcpFabric.FOLLOWER_READS_PROP, before);
            }
        }
    }

    /**
     * Rounds of: a writer thread fills a 4 KiB ring and blocks on the next record; the test reads all it wrote.
     * Then the rest is read as the writer writes it.
     *
     * @return the reads the writer's side made on its own thread (the writer following its socket)
     */
    private long creditRounds(int rounds) throws Exception {
        ChannelConfig small = ChannelConfig.builder(1).ringCapacity(4096).build();
        ChannelEngine a = engine("writer", small);
        ChannelEngine b = engine("reader", small);
        PeerChannel p = a.connect(b.node().address(), Duration.ofSeconds(10));
        b.accept(Duration.ofSeconds(10));
        ChannelWriter w = p.writer(0, 0);
        ChannelReader r = b.reader(0);
        long total = (long) rounds * 2 * 4096 / 100; // twice what the ring holds per round: the writer blocks again
        AtomicLong written = new AtomicLong();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread writer = new Thread(() -> {
            ByteBuffer payload = ByteBuffer.allocate(100);
            try {
                for (long i = 0; i < total; i++) {
                    w.write(1, payload.clear(), 20, TimeUnit.SECONDS);
                    written.incrementAndGet();
                }
                w.flush();
            } catch (Throwable t) {
                failed.set(t);
            }
        }, "test-writer");
        writer.start();
        long got = 0;
        for (int round = 0; round < rounds; round++) {
            io.rdmx.transport.testsuite.Blocking.awaitBlockedIn(writer, "ChannelWriter.claim", Duration.ofSeconds(10));
            long upTo = written.get();
            while (got < upTo) {
                got += r.read((s, buf, o, l, src) -> { }, 1024, 10, TimeUnit.SECONDS);
            }
        }
        while (got < total && failed.get() == null) {
            got += r.read((s, buf, o, l, src) -> { }, 1024, 10, TimeUnit.SECONDS);
        }
        writer.join(TimeUnit.SECONDS.toMillis(30));
        assertFalse(writer.isAlive(), "writer still waiting");
        assertEquals(null, failed.get());
        assertEquals(total, got);
        assertTrue(p.isOpen());
        return ((io.rdmx.transport.selector.SocketConnection) p.connection()).followerReads();
    }
}
