package io.rdmx.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.tcp.TcpFabric;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * On the WRITE path (tcp) a reader's credit whose predecessor went out already waits for the next notification
 * to the peer: a data notification of a writer of the same node carries it (one SEND for both, not two), and a
 * reader that finds nothing to read sends it itself (the writer may be waiting for that space). No flush interval
 * here, so the engine's scan sends nothing.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpLazyCreditTest {
    private static final AtomicInteger SEQ = new AtomicInteger();
    private static final int RING = 64 << 10;
    private static final int RECORD = 1000;
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
        ChannelEngine e = ChannelEngine.open(n, ChannelConfig.builder(1).ringCapacity(RING).batchThreshold(1)
            .flushInterval(Duration.ZERO).build());
        open.add(e);
        return e;
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, what);
            Thread.sleep(1);
        }
    }

    private static void write(ChannelWriter w, int records) throws Exception {
        ByteBuffer r = ByteBuffer.allocate(RECORD);
        for (int i = 0; i < records; i++) {
            w.write(1, r.clear(), 10, TimeUnit.SECONDS);
        }
        w.flush();
    }

    /** Polls one record at a time, {@code records} times; every record is there already, so each poll finds one. */
    private static void readEach(ChannelReader r, int records) {
        for (int i = 0; i < records; i++) {
            assertEquals(1, r.poll((s, buf, o, l, src) -> {
            }, 1), "record " + i + " was not there");
        }
    }

    @Test
    void aCreditRidesOnTheNextDataNotificationOrGoesWhenTheReaderFindsNothing() throws Exception {
        ChannelEngine a = engine("lazy-a");
        ChannelEngine b = engine("lazy-b");
        PeerChannel ab = a.connect(b.node().address(), Duration.ofSeconds(10));
        PeerChannel ba = b.accept(Duration.ofSeconds(10));
        ChannelWriter toB = ab.writer(0, 0);
        ChannelWriter toA = ba.writer(0, 0);
        ChannelReader atB = b.reader(0);
        ChannelReader atA = a.reader(0);
        int threshold = b.config().readNotifyThreshold();
        int perThreshold = threshold / (RECORD + RecordDescriptor.HEADER_LENGTH) + 1;
        write(toB, 2 * perThreshold);
        await(toB::quiet, "A's records are not all announced to B");
        await(ba::quiet, "B's handshake notifications are not all complete");
        // B reads past one threshold without ever finding its ring empty: the credit waits, nothing is sent
        long sentBefore = b.counters.getNotificationsSent();
        readEach(atB, perThreshold);
        assertEquals(sentBefore, b.counters.getNotificationsSent(), "the credit went out in a SEND of its own");
        assertEquals(0, toB.ring().tailAcquire(), "A heard of the credit without a notification from B");
        // B writes to A: the data notification carries the credit, one SEND for both
        write(toA, 1);
        await(() -> toB.ring().tailAcquire() > 0, "the data notification did not carry the credit");
        assertEquals(sentBefore + 1, b.counters.getNotificationsSent(), "the credit and the data went apart");
        int[] one = {0};
        await(() -> atA.poll((s, buf, o, l, src) -> one[0]++, 1) > 0 || one[0] > 0, "A got no record");
        // past the next threshold, then nothing left: the reader's empty poll sends the credit itself
        long credited = toB.ring().tailAcquire();
        readEach(atB, perThreshold);
        assertEquals(credited, toB.ring().tailAcquire(), "the second credit went before the reader ran dry");
        int none = atB.poll((s, buf, o, l, src) -> {
        }, 1);
        assertEquals(0, none);
        await(() -> toB.ring().tailAcquire() > credited, "the reader found nothing and kept the credit");
    }
}
