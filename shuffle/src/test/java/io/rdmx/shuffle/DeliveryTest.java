package io.rdmx.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.channel.RingBuffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link Delivery} on its own, for worker 0 of one process of two workers: decoding per handler kind, refusals
 * kept in order, credits, ends-of-stream, released exchanges, and the reads of the in-process rings (the
 * transport has no peers: {@link CorkedFlushTest.Recording}).
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class DeliveryTest {
    private final ShuffleConfig cfg = ShuffleConfig.builder(0, 1, 2).provider("shm").job("delivery").build();
    private final RingBuffer[] out = {TestRings.ring(4096), TestRings.ring(4096)};
    private final RingBuffer[] in = {TestRings.ring(4096), TestRings.ring(4096)};
    private final Consumers consumers = new Consumers(0, 2);
    private final ExchangeWindow window = new ExchangeWindow(0, TestRings.outboxes(out), 1 << 20, 1024,
        consumers::noMoreOf);
    private final Inbox inbox = new Inbox(0, 8192, 1024, consumers, window);
    private final List<Integer> freed = new ArrayList<>();
    private final Delivery delivery = new Delivery(cfg, new CorkedFlushTest.Recording(), 0, in, consumers, window,
        inbox, freed::add, e -> e);
    private final List<Object> got = new ArrayList<>();

    private static ByteBuffer ints(int... values) {
        ByteBuffer b = ByteBuffer.allocateDirect(4 * values.length).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < values.length; i++) {
            b.putInt(4 * i, values[i]);
        }
        return b;
    }

    private void dispatch(int source, int stream, ByteBuffer b) {
        delivery.dispatch(source, stream, b, 0, b.capacity());
    }

    private void endOfStream(int source, int id) {
        ByteBuffer b = ByteBuffer.allocateDirect(4).order(ByteOrder.LITTLE_ENDIAN);
        ShuffleFrameDescriptor.putEndOfStream(b, 0, source);
        dispatch(source, ShuffleFrameDescriptor.controlStream(id), b);
    }

    @Test
    void rowsAreDecodedForTheirHandlersKind() {
        consumers.register(TestRings.ints(1), Consumers.KIND_INT, (Handlers.IntHandler) v -> got.add(v), 0);
        consumers.register(new Exchange<>(2, TestRings.BY_VALUE, null, 8, 8), Consumers.KIND_LONG,
            (Handlers.LongHandler) v -> got.add(v), 0);
        consumers.register(TestRings.ints(3), Consumers.KIND_BATCH,
            (Handlers.BatchHandler) rows -> {
                got.add("batch of " + rows.count());
                return rows.count();
            }, 0);
        consumers.register(new Exchange<>(4, Routing.<Integer>byKey(), RowSerializer.INT, 0, 64),
            Consumers.KIND_OBJECT, (java.util.function.Consumer<Object>) got::add, 0);
        dispatch(1, 1, ints(5, 6));
        ByteBuffer longs = ByteBuffer.allocateDirect(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, 1L << 40);
        dispatch(1, 2, longs);
        dispatch(1, 3, ints(1, 2, 3));
        dispatch(1, 4, ints(77));
        assertEquals(List.of(5, 6, 1L << 40, "batch of 3", 77), got);
        assertEquals(2, consumers.rowsReceived(TestRings.ints(1)));
        assertEquals(Inbox.charge(8) + Inbox.charge(8) + Inbox.charge(12) + Inbox.charge(4),
            window.taken(1, 1) + window.taken(1, 2) + window.taken(1, 3) + window.taken(1, 4),
            "each delivered record is counted for its sender's credit");
    }

    @Test
    void aRefusedRowAndWhatFollowsOfItsExchangeWaitInTheInboxInOrder() {
        boolean[] refuse = {true};
        consumers.register(TestRings.ints(1), Consumers.KIND_INT, (Handlers.IntHandler) v -> {
            if (v == 2 && refuse[0]) {
                refuse[0] = false;
                return false;
            }
            return got.add(v);
        }, 0);
        consumers.register(TestRings.ints(2), Consumers.KIND_INT, (Handlers.IntHandler) v -> got.add(-v), 0);
        dispatch(1, 1, ints(1, 2, 3));
        dispatch(1, 1, ints(4));
        dispatch(1, 2, ints(9));
        assertEquals(List.of(1, -9), got,
            "4 waits behind the refused rows of its exchange; exchange 2 is not held back");
        assertEquals(2, inbox.records());
        assertEquals(2, consumers.get(1).staged);
        delivery.deliverInbox();
        assertEquals(List.of(1, -9, 2, 3, 4), got);
        assertTrue(consumers.get(1).staged == 0 && inbox.records() == 0);
    }

    @Test
    void aCreditIsCountedAgainstTheWindowAndDeliveredToNoHandler() {
        consumers.register(TestRings.ints(5), Consumers.KIND_INT, (Handlers.IntHandler) v -> got.add(v), 0);
        window.sent(1, 5, 80);
        ByteBuffer credit = ByteBuffer.allocateDirect(8).order(ByteOrder.LITTLE_ENDIAN);
        ShuffleFrameDescriptor.putCredit(credit, 0, Inbox.charge(80));
        dispatch(1, ShuffleFrameDescriptor.controlStream(5), credit);
        assertEquals(0, window.uncredited(1, 5));
        assertTrue(got.isEmpty());
        assertEquals(0, inbox.records());
    }

    @Test
    void anEndOfStreamFromEveryWorkerEndsTheExchange() {
        Exchange<RowView> ex = TestRings.ints(6);
        consumers.register(ex, Consumers.KIND_INT, (Handlers.IntHandler) v -> got.add(v), 0);
        endOfStream(0, 6);
        assertFalse(consumers.done(ex));
        endOfStream(1, 6);
        assertTrue(consumers.done(ex));
        IllegalStateException twice = assertThrows(IllegalStateException.class, () -> endOfStream(1, 6));
        assertEquals("worker 0: end-of-stream of exchange 6 from worker=1 (length=4): not a worker of [0, 2) that"
            + " had not ended it yet", twice.getMessage());
        ByteBuffer five = ByteBuffer.allocateDirect(5).order(ByteOrder.LITTLE_ENDIAN);
        IllegalStateException length = assertThrows(IllegalStateException.class,
            () -> dispatch(1, ShuffleFrameDescriptor.controlStream(6), five));
        assertTrue(length.getMessage().contains("from worker=-1 (length=5)"), length.getMessage());
    }

    @Test
    void recordsOfAReleasedExchangeAreDroppedAndCreditedAtOnce() {
        Exchange<RowView> ex = TestRings.ints(7);
        consumers.register(ex, Consumers.KIND_INT, (Handlers.IntHandler) v -> got.add(v), 0);
        assertTrue(consumers.release(ex), "released before it was done");
        dispatch(1, 7, ints(1, 2));
        assertTrue(got.isEmpty());
        assertEquals(0, inbox.records(), "dropped, not set aside");
        assertTrue(window.owes(), "nothing more of it comes: its sender is credited at once");
    }

    @Test
    void recordsOfAnExchangeNobodyConsumesYetAreSetAside() {
        dispatch(1, 8, ints(1));
        assertEquals(1, inbox.records());
        consumers.register(TestRings.ints(8), Consumers.KIND_INT, (Handlers.IntHandler) v -> got.add(v),
            inbox.count(8));
        delivery.deliverInbox();
        assertEquals(List.of(1), got);
    }

    @Test
    void whilePausedRecordsAreSetAsideAndTheInboxIsNotDelivered() {
        consumers.register(TestRings.ints(1), Consumers.KIND_INT, (Handlers.IntHandler) v -> got.add(v), 0);
        delivery.pause();
        dispatch(1, 1, ints(3));
        assertEquals(0, delivery.deliverInbox());
        assertTrue(got.isEmpty());
        delivery.resume();
        delivery.deliverInbox();
        assertEquals(List.of(3), got);
    }

    @Test
    void readAllReadsEveryInProcessRingAsItsWritersRecordsAndTellsThoseWriters() throws Exception {
        consumers.register(TestRings.ints(1), Consumers.KIND_INT, (Handlers.IntHandler) v -> got.add(v), 0);
        for (int w = 0; w < 2; w++) {
            int at = in[w].tryClaim(1, 4);
            in[w].buffer().putInt(at, 10 + w);
            in[w].commit();
        }
        assertEquals(2, delivery.readAll());
        assertEquals(List.of(10, 11), got);
        assertEquals(Inbox.charge(4), window.taken(0, 1));
        assertEquals(Inbox.charge(4), window.taken(1, 1), "worker 1's record is counted for worker 1");
        assertEquals(List.of(1), freed, "the other worker is told its ring has room; this one is not");
    }

    @Test
    void aFixedWidthRecordOfPartRowsIsRefusedNamingItsLength() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> Delivery.rowsIn(3, 4, 10, 4));
        assertEquals("worker 3: record of exchange 4 with length=10, not a multiple of its width=4", e.getMessage());
    }
}
