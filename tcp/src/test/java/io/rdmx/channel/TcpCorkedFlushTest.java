package io.rdmx.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.shm.ShmConnection;
import io.rdmx.transport.tcp.TcpFabric;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A thread that flushes several rings to one peer inside {@link ChannelWriter#cork} (the shuffle worker's flush:
 * one ring per worker of the peer) makes one write system call for all of them, not one per ring, and every
 * record still arrives at its own reader.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpCorkedFlushTest {
    private static final int WORKERS = 4;
    private static final AtomicInteger SEQ = new AtomicInteger();
    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private ChannelEngine engine(String role) throws Exception {
        Node n = new TcpFabric().open(NodeOptions.builder().name(role + "-" + SEQ.incrementAndGet()).build());
        open.add(n);
        // a threshold far above the records: nothing is posted before the flush
        ChannelEngine e = ChannelEngine.open(n, ChannelConfig.builder(WORKERS).batchThreshold(16 << 10).build());
        open.add(e);
        return e;
    }

    /** Commits one record in each of the sender's rings to the peer's workers, flushes them all; the writes made. */
    private static long flushAll(ChannelWriter[] to, ShmConnection c, int round, boolean corked) {
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
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (at[w].read((s, buf, o, l, src) -> got[0] = buf.getLong(o), 1, 100, TimeUnit.MILLISECONDS) == 0) {
                assertEquals(true, System.nanoTime() < deadline, "worker " + w + " got nothing in round " + round);
            }
            assertEquals(round * 100L + w, got[0], "worker " + w + " in round " + round);
        }
    }

    @Test
    void flushingEveryRingToOnePeerInsideOneCorkIsOneWriteSystemCall() throws Exception {
        ChannelEngine a = engine("sender");
        ChannelEngine b = engine("receiver");
        PeerChannel ab = a.connect(b.node().address(), Duration.ofSeconds(10));
        b.accept(Duration.ofSeconds(10));
        ChannelWriter[] to = new ChannelWriter[WORKERS];
        ChannelReader[] at = new ChannelReader[WORKERS];
        for (int w = 0; w < WORKERS; w++) {
            to[w] = ab.writer(0, w);
            at[w] = b.reader(w);
        }
        ShmConnection c = (ShmConnection) ab.connection();
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
