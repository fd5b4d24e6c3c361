package io.rdmx.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.selector.SocketConnection;
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
 * A ping-pong over tcp ring channels (the channel's default SEND notifications, readers reading the socket
 * themselves) costs each side one write system call per message: the WRITE and the notification SEND behind it go
 * out together ({@link io.rdmx.transport.capability.Corking#cork}), and the ACK of the message a reader just read rides on
 * its reply instead of going out alone before it. It used to be three: WRITE, SEND, ACK. And a thread that
 * flushes several rings to one peer inside {@link ChannelWriter#cork} (the shuffle worker's flush: one ring per
 * worker of the peer) makes one write system call for all of them, not one per ring, every record still arriving at
 * its own reader.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpRoundTripWritesTest {
    private static final AtomicInteger SEQ = new AtomicInteger();
    /** Rings to the peer in the corked-flush test: one per worker there, as a shuffle worker's. */
    private static final int WORKERS = 4;
    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private ChannelEngine engine(String role) throws Exception {
        return engine(role, 1);
    }

    /** An engine of {@code workers} workers; with several, a 16 KiB threshold: nothing is posted before a flush. */
    private ChannelEngine engine(String role, int workers) throws Exception {
        Node n = new TcpFabric().open(NodeOptions.builder().name(role + "-" + SEQ.incrementAndGet()).build());
        open.add(n);
        ChannelEngine e = ChannelEngine.open(n, (workers == 1 ? ChannelConfig.builder(1)
            : ChannelConfig.builder(workers).batchThreshold(16 << 10)).build());
        open.add(e);
        return e;
    }

    @Test
    void aRoundTripCostsEachSideOneWriteSystemCall() throws Exception {
        ChannelEngine a = engine("ping");
        ChannelEngine b = engine("pong");
        PeerChannel ab = a.connect(b.node().address(), Duration.ofSeconds(10));
        PeerChannel ba = b.accept(Duration.ofSeconds(10));
        ChannelWriter toB = ab.writer(0, 0);
        ChannelReader fromB = a.reader(0);
        ChannelWriter toA = ba.writer(0, 0);
        ChannelReader fromA = b.reader(0);
        int warm = 200;
        int rounds = 1000;
        AtomicReference<Throwable> failed = new AtomicReference<>();
        AtomicLong echoed = new AtomicLong();
        Thread echo = new Thread(() -> {
            ByteBuffer reply = ByteBuffer.allocate(8);
            try {
                for (int i = 0; i < warm + rounds; i++) {
                    long[] got = new long[1];
                    while (fromA.read((s, buf, o, l, src) -> got[0] = buf.getLong(o), 1, 10, TimeUnit.SECONDS) == 0) {
                        assertTrue(ab.isOpen(), "the pinging side went away");
                    }
                    reply.clear();
                    reply.putLong(0, got[0]);
                    toA.write(1, reply, 10, TimeUnit.SECONDS);
                    toA.flush();
                    echoed.incrementAndGet();
                }
            } catch (Throwable t) {
                failed.set(t);
            }
        }, "test-echo");
        echo.start();
        SocketConnection ca = (SocketConnection) ab.connection();
        SocketConnection cb = (SocketConnection) ba.connection();
        ByteBuffer ping = ByteBuffer.allocate(8);
        long writesA = 0;
        long writesB = 0;
        for (int i = 0; i < warm + rounds; i++) {
            if (i == warm) {
                writesA = ca.socketWrites();
                writesB = cb.socketWrites();
            }
            ping.clear();
            ping.putLong(0, i);
            toB.write(1, ping, 10, TimeUnit.SECONDS);
            toB.flush();
            long[] got = {-1};
            while (fromB.read((s, buf, o, l, src) -> got[0] = buf.getLong(o), 1, 10, TimeUnit.SECONDS) == 0) {
                assertEquals(null, failed.get());
            }
            assertEquals(i, got[0], "round " + i + " came back with another record");
        }
        writesA = ca.socketWrites() - writesA;
        writesB = cb.socketWrites() - writesB;
        echo.join(TimeUnit.SECONDS.toMillis(10));
        assertFalse(echo.isAlive());
        assertEquals(null, failed.get());
        assertEquals(warm + rounds, echoed.get());
        // one per message; slack for an I/O thread that took the input back and sent an owed ACK alone (a reader
        // descheduled past the grace on a loaded machine); three before (WRITE, SEND, ACK)
        assertTrue(writesA <= rounds * 3 / 2, "the pinging side made " + writesA + " writes for " + rounds + " pings");
        assertTrue(writesB <= rounds * 3 / 2, "the echoing side made " + writesB + " writes for " + rounds + " pongs");
    }

    /** Commits one record in each of the sender's rings to the peer's workers, flushes them all; the writes made. */
    private static long flushAll(ChannelWriter[] to, SocketConnection c, int round, boolean corked) {
        for (int w = 0; w < WORKERS; w++) {
            int at = to[w].tryClaim(1, 8);
            assertEquals(true, at >= 0, "ring to worker " + w + " has no room in round " + round);
            to[w].buffer().putLong(at, round * 100L + w);
            to[w].commit();
        }
        long before = c.socketWrites();
        if (corked) {
            to[0].cork();
        }
        try {
            for (ChannelWriter w : to) {
                w.flush();
            }
        } finally {
            if (corked) {
                to[0].uncork();
            }
        }
        return c.socketWrites() - before;
    }

    private static void expectRound(ChannelReader[] at, int round) throws Exception {
        for (int w = 0; w < WORKERS; w++) {
            long[] got = {-1};
            // at most 100 waits of 100 ms: the record is there long before, or the test fails naming the worker
            int n = 0;
            for (int tries = 0; n == 0 && tries < 100; tries++) {
                n = at[w].read((s, buf, o, l, src) -> got[0] = buf.getLong(o), 1, 100, TimeUnit.MILLISECONDS);
            }
            assertEquals(1, n, "worker " + w + " got nothing in round " + round);
            assertEquals(round * 100L + w, got[0], "worker " + w + " in round " + round);
        }
    }

    @Test
    void flushingEveryRingToOnePeerInsideOneCorkIsOneWriteSystemCall() throws Exception {
        ChannelEngine a = engine("sender", WORKERS);
        ChannelEngine b = engine("receiver", WORKERS);
        PeerChannel ab = a.connect(b.node().address(), Duration.ofSeconds(10));
        b.accept(Duration.ofSeconds(10));
        ChannelWriter[] to = new ChannelWriter[WORKERS];
        ChannelReader[] at = new ChannelReader[WORKERS];
        for (int w = 0; w < WORKERS; w++) {
            to[w] = ab.writer(0, w);
            at[w] = b.reader(w);
        }
        SocketConnection c = (SocketConnection) ab.connection();
        int rounds = 50;
        long corked = 0;
        long uncorked = 0;
        for (int r = 0; r < rounds; r++) {
            uncorked += flushAll(to, c, 2 * r, false);
            expectRound(at, 2 * r);
            corked += flushAll(to, c, 2 * r + 1, true);
            expectRound(at, 2 * r + 1);
        }
        // one per corked flush; slack for the few control frames the I/O thread writes meanwhile (the ACK of a
        // credit, a keep-alive)
        assertTrue(corked >= rounds && corked <= rounds + rounds / 5, "writes of " + rounds + " corked flushes of "
            + WORKERS + " rings each: " + corked);
        // without the cork each ring's WRITE is a system call of its own (the I/O thread may join two that were
        // handed to it): what the cork saved
        assertTrue(uncorked >= 3L * rounds, "writes of " + rounds + " flushes without a cork: " + uncorked);
    }
}
