package io.rdmx.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.channel.RingBuffer;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link Packer} on its own, for worker 0 of one process of two workers writing two in-memory rings: packs,
 * back-pressure from a full ring and from a window, broadcasts resumed after back-pressure, ends-of-stream.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class PackerTest {
    private static final int PACK = 16;

    private final RingBuffer[] rings = {TestRings.ring(1024), TestRings.ring(1024)};
    private final ShuffleTransport.Outbox[] outboxes = TestRings.outboxes(rings);
    private final Exchange<RowView> ex = TestRings.ints(3);

    private Packer packer(int windowBytes) {
        ExchangeWindow window = new ExchangeWindow(0, outboxes, windowBytes, 64, id -> false);
        return new Packer(0, outboxes, rings, PACK, window);
    }

    private static void fill(RingBuffer ring) {
        while (ring.tryClaim(9, 200) >= 0) {
            ring.commit();
        }
        while (ring.tryClaim(9, 0) >= 0) {
            ring.commit();
        }
    }

    @Test
    void intsForOneWorkerArePackedIntoOneRecordUntilThePackIsFull() throws Exception {
        Packer p = packer(1 << 20);
        for (int v = 1; v <= 9; v += 2) { // odd values: worker 1
            assertEquals(Worker.OK, p.offerInt(ex, v));
        }
        List<TestRings.Rec> got = TestRings.drain(rings[1]);
        assertEquals(1, got.size(), "the fifth int did not fit the first pack: it went out");
        assertEquals(ex.dataStream(), got.get(0).stream());
        assertEquals(PACK, got.get(0).length());
        assertEquals(7, got.get(0).intAt(12));
        assertEquals(1, p.openPacks());
        assertEquals(Worker.OK, p.flush());
        got = TestRings.drain(rings[1]);
        assertEquals(4, got.get(0).length());
        assertEquals(9, got.get(0).intAt(0));
        assertTrue(TestRings.drain(rings[0]).isEmpty());
        assertEquals(5, p.rowsSent());
    }

    @Test
    void aFullRingBackPressuresNamingTheDestinationAndItsTail() throws Exception {
        Packer p = packer(1 << 20);
        fill(rings[1]);
        for (int v = 1; v <= 7; v += 2) {
            assertEquals(Worker.OK, p.offerInt(ex, v));
        }
        assertEquals(Worker.BACK_PRESSURED, p.offerInt(ex, 9), "the full pack cannot go out");
        assertEquals(1, p.pressuredDst());
        assertFalse(p.pressuredByWindow());
        assertEquals(rings[1].tailAcquire(), p.spaceTail());
        assertEquals(1, p.backPressured());
        assertEquals(1, p.localWorker(1));
        p.clearPressure();
        assertEquals(-1, p.pressuredDst());
    }

    @Test
    void aClosedWindowBackPressuresAsAWindowHit() throws Exception {
        Packer p = packer(PACK + Inbox.HEADER); // one pack
        for (int v = 1; v <= 7; v += 2) {
            assertEquals(Worker.OK, p.offerInt(ex, v));
        }
        assertEquals(Worker.BACK_PRESSURED, p.offerInt(ex, 9), "the next pack would pass the window");
        assertEquals(1, p.pressuredDst());
        assertTrue(p.pressuredByWindow());
        assertEquals(1, TestRings.drain(rings[1]).size(), "the full pack went; the next one waits for a credit");
    }

    @Test
    void anInterruptedBroadcastResumesAtTheWorkerItStoppedAt() throws Exception {
        Packer p = packer(1 << 20);
        Exchange<Integer> all = new Exchange<>(4, Routing.broadcast(), RowSerializer.INT, 0, 64);
        fill(rings[1]);
        assertEquals(Worker.BACK_PRESSURED, p.offer(all, 42));
        TestRings.drain(rings[1]);
        assertEquals(1, TestRings.drain(rings[0]).size(), "worker 0 took it");
        assertEquals(Worker.OK, p.offer(all, 42));
        assertTrue(TestRings.drain(rings[0]).isEmpty(), "worker 0 does not get it twice");
        List<TestRings.Rec> one = TestRings.drain(rings[1]);
        assertEquals(1, one.size());
        assertEquals(42, one.get(0).intAt(0));
        assertEquals(1, p.rowsSent());
    }

    @Test
    void anEndOfStreamGoesToEveryWorkerAsAControlRecordNamingTheSender() throws Exception {
        Packer p = packer(1 << 20);
        assertEquals(Worker.OK, p.offerInt(ex, 1));
        assertEquals(Worker.OK, p.offerFinish(ex));
        List<TestRings.Rec> one = TestRings.drain(rings[1]);
        assertEquals(2, one.size(), "the pack first, then the end-of-stream");
        assertEquals(ex.eosStream(), one.get(1).stream());
        assertEquals(ShuffleFrameDescriptor.EOS_LENGTH, one.get(1).length());
        assertEquals(0, one.get(1).intAt(0));
        assertEquals(1, TestRings.drain(rings[0]).size());
    }

    @Test
    void dropForgetsTheExchangesUnsentRows() throws Exception {
        Packer p = packer(1 << 20);
        assertEquals(Worker.OK, p.offerInt(ex, 1));
        p.drop(ex.id());
        assertEquals(0, p.openPacks());
        p.flush();
        assertTrue(TestRings.drain(rings[1]).isEmpty());
    }

    @Test
    void anObjectRowLargerThanTheLimitIsRefusedBeforeAnyCopy() {
        Packer p = packer(1 << 20);
        p.limitRows(2);
        Exchange<Integer> all = new Exchange<>(4, Routing.broadcast(), RowSerializer.INT, 0, 2);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> p.offer(all, 1));
        assertTrue(e.getMessage().contains("row of 4 bytes on exchange 4 exceeds maxRowBytes=2"), e.getMessage());
        assertTrue(TestRings.drain(rings[0]).isEmpty());
    }
}
