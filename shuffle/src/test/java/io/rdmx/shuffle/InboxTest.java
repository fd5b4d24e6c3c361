package io.rdmx.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
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

/** {@link Inbox} on its own: order per exchange, refusals, the eager credit half, drops and compaction. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class InboxTest {
    private static final int SOURCE = 1;

    private final RingBuffer[] rings = {TestRings.ring(4096), TestRings.ring(4096)};
    private final Consumers consumers = new Consumers(0, 2);
    // a window far larger than anything staged here: credits are owed only at oweAll or for ended exchanges
    private final ExchangeWindow window = new ExchangeWindow(0, TestRings.outboxes(rings), 1 << 20, 64,
        consumers::noMoreOf);
    private final List<String> delivered = new ArrayList<>();

    private Inbox inbox(int capacity) {
        return new Inbox(0, capacity, 64, consumers, window);
    }

    private void consume(int id) {
        consumers.register(TestRings.ints(id), Consumers.KIND_INT, (Handlers.IntHandler) v -> true, 0);
    }

    private static void stage(Inbox inbox, int id, int... values) {
        ByteBuffer b = ByteBuffer.allocate(4 * values.length).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < values.length; i++) {
            b.putInt(4 * i, values[i]);
        }
        inbox.stage(SOURCE, id, b, 0, b.capacity(), Inbox.charge(b.capacity()));
    }

    /** A decoder that takes every int, noting "exchange:value". */
    private int takeAll(int stream, ByteBuffer buf, int off, int len) {
        for (int i = 0; i < len; i += 4) {
            delivered.add(stream + ":" + buf.getInt(off + i));
        }
        return len;
    }

    @Test
    void recordsComeBackInArrivalOrderAndLeaveTheInboxEmpty() {
        consume(1);
        consume(2);
        Inbox inbox = inbox(1024);
        stage(inbox, 1, 10, 11);
        stage(inbox, 2, 20);
        stage(inbox, 1, 12);
        assertEquals(3, inbox.records());
        assertEquals(2, consumers.get(1).staged);
        assertEquals(3, inbox.deliver(this::takeAll));
        assertEquals(List.of("1:10", "1:11", "2:20", "1:12"), delivered);
        assertEquals(0, inbox.records());
        assertEquals(0, inbox.live());
        assertEquals(0, consumers.get(1).staged);
    }

    @Test
    void aRefusalHoldsBackOnlyItsExchangeAndTheNextPassResumesWhereItStopped() {
        consume(1);
        consume(2);
        Inbox inbox = inbox(1024);
        stage(inbox, 1, 10, 11, 12);
        stage(inbox, 2, 20);
        stage(inbox, 1, 13);
        // exchange 1 takes one row, then refuses
        inbox.deliver((stream, buf, off, len) -> {
            if (stream == 1) {
                delivered.add("1:" + buf.getInt(off));
                return 4;
            }
            return takeAll(stream, buf, off, len);
        });
        assertEquals(List.of("1:10", "2:20"), delivered, "13 waits behind the refused record; 20 goes on");
        assertEquals(2, inbox.records());
        delivered.clear();
        inbox.deliver(this::takeAll);
        assertEquals(List.of("1:11", "1:12", "1:13"), delivered);
    }

    @Test
    void recordsOfAnExchangeNobodyConsumesYetWaitForItsConsumer() {
        Inbox inbox = inbox(1024);
        stage(inbox, 3, 30);
        assertEquals(0, inbox.deliver(this::takeAll));
        assertEquals(1, inbox.count(3));
        consumers.register(TestRings.ints(3), Consumers.KIND_INT, (Handlers.IntHandler) v -> true, inbox.count(3));
        assertEquals(1, inbox.deliver(this::takeAll));
        assertEquals(List.of("3:30"), delivered);
    }

    @Test
    void upToHalfTheInboxIsCreditedWhenSetAsideTheRestWhenDelivered() {
        consume(1);
        Inbox inbox = inbox(256); // records of 4 bytes are charged 24: five fit the eager half of 128
        for (int i = 0; i < 8; i++) {
            stage(inbox, 1, i);
        }
        assertEquals(5 * Inbox.charge(4), window.taken(SOURCE, 1), "the first five only, at once");
        inbox.deliver(this::takeAll);
        assertEquals(8 * Inbox.charge(4), window.taken(SOURCE, 1), "the other three once delivered");
        stage(inbox, 1, 9);
        assertEquals(9 * Inbox.charge(4), window.taken(SOURCE, 1), "the eager half was given back on delivery");
    }

    @Test
    void droppingAnAbandonedExchangeGivesItsSendersTheSpace() {
        consume(1);
        consume(2);
        Inbox inbox = inbox(1024);
        stage(inbox, 1, 10);
        stage(inbox, 2, 20);
        stage(inbox, 1, 11);
        inbox.drop(1);
        assertEquals(1, inbox.records());
        assertEquals(Inbox.charge(4), inbox.live());
        inbox.deliver(this::takeAll);
        assertEquals(List.of("2:20"), delivered);
    }

    @Test
    void roomCountsLiveBytesAndAStageCompactsTheGaps() {
        consume(1);
        consume(2);
        // records of 64 bytes take 84: four fit in 360
        Inbox inbox = inbox(360);
        assertEquals(360 / Inbox.charge(64), inbox.room());
        int[] row = new int[16];
        stage(inbox, 2, row);
        stage(inbox, 1, row);
        stage(inbox, 2, row);
        stage(inbox, 2, row);
        assertEquals(0, inbox.room());
        // exchange 2 refuses: exchange 1's record, between two of 2, is delivered and leaves a gap
        inbox.deliver((stream, buf, off, len) -> stream == 1 ? len : 0);
        assertEquals(1, inbox.room(), "the gap counts as room");
        stage(inbox, 1, row); // does not fit after the tail: compacts
        assertEquals(4, inbox.records());
        delivered.clear();
        inbox.deliver(this::takeAll);
        assertEquals(4 * 16, delivered.size());
    }

    @Test
    void anOverflowNamesTheRecordAndTheUse() {
        consume(1);
        Inbox inbox = inbox(100);
        stage(inbox, 1, new int[16]);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> stage(inbox, 1, new int[16]));
        assertTrue(e.getMessage().contains("inbox overflow (record length=64, 84 of 100 bytes used)"),
            e.getMessage());
    }
}
