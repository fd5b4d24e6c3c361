package io.rdmx.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.channel.RingBuffer;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntPredicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link ExchangeWindow} on its own, over two in-memory rings: what a window admits, when a receiver owes a
 * credit, the credit it writes, and the credits it refuses. (The windows inside running workers:
 * {@link ExchangeWindowTest}.)
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ExchangeWindowCreditsTest {
    private static final int WINDOW = 200;
    private static final IntPredicate STILL_COMING = id -> false;

    private final RingBuffer[] rings = {TestRings.ring(1024), TestRings.ring(1024)};

    private ExchangeWindow window(IntPredicate noMoreOf) {
        // a largest record of 20 bytes: credits at half the window
        return new ExchangeWindow(0, TestRings.outboxes(rings), WINDOW, 20, noMoreOf);
    }

    @Test
    void aRecordThatWouldPassTheWindowWaitsForACredit() {
        ExchangeWindow w = window(STILL_COMING);
        assertTrue(w.open(1, 7, 80));
        w.sent(1, 7, 80); // charged 100 with its inbox header
        assertEquals(Inbox.charge(80), w.uncredited(1, 7));
        assertTrue(w.open(1, 7, 80), "100 + 100 fits a window of 200");
        w.sent(1, 7, 80);
        assertFalse(w.open(1, 7, 4), "200 + 24 does not");
        assertTrue(w.takeHit(), "the window, not a full buffer, stopped it");
        assertFalse(w.takeHit(), "cleared once taken");
        assertEquals(7, w.hitExchange());
        assertTrue(w.open(0, 7, 4), "another receiver's window is its own");
        assertTrue(w.open(1, 8, 4), "another exchange's window is its own");
        w.credited(1, 7, 100, ShuffleFrameDescriptor.CREDIT_MARK);
        assertTrue(w.open(1, 7, 4));
    }

    @Test
    void aRecordLargerThanTheWindowGoesAloneWhenNothingIsHeld() {
        ExchangeWindow w = window(STILL_COMING);
        assertTrue(w.open(1, 3, 10 * WINDOW));
        w.sent(1, 3, 10 * WINDOW);
        assertFalse(w.open(1, 3, 4));
    }

    @Test
    void aReceiverCreditsAtTheThresholdAsAControlRecordOfTheExchange() {
        ExchangeWindow w = window(STILL_COMING);
        assertEquals(WINDOW / 2, w.creditAt());
        w.took(1, 5, 60);
        assertFalse(w.owes(), "60 of a threshold of 100");
        w.took(1, 5, 60);
        assertTrue(w.owes());
        w.sendCredits();
        assertFalse(w.owes());
        assertEquals(0, w.taken(1, 5));
        List<TestRings.Rec> got = TestRings.drain(rings[1]);
        assertEquals(1, got.size());
        TestRings.Rec credit = got.get(0);
        assertEquals(ShuffleFrameDescriptor.controlStream(5), credit.stream());
        assertEquals(ShuffleFrameDescriptor.CREDIT_LENGTH, credit.length());
        assertEquals(120, ShuffleFrameDescriptor.creditBytes(credit.payload(), 0));
        assertEquals(ShuffleFrameDescriptor.CREDIT_MARK, ShuffleFrameDescriptor.creditMark(credit.payload(), 0));
        assertTrue(TestRings.drain(rings[0]).isEmpty(), "nothing to the other worker");
    }

    @Test
    void anExchangeNothingMoreOfWillComeIsCreditedAtOnce() {
        ExchangeWindow w = window(id -> id == 9);
        w.took(1, 9, 24);
        assertTrue(w.owes(), "below the threshold, but nothing more of exchange 9 comes to round it up");
        w.took(1, 4, 24);
        w.sendCredits();
        assertEquals(24, w.taken(1, 4), "exchange 4 waits for its threshold");
        assertEquals(0, w.taken(1, 9));
    }

    @Test
    void oweAllCreditsEverySenderBelowTheThreshold() {
        ExchangeWindow w = window(STILL_COMING);
        w.took(0, 2, 24);
        w.took(1, 2, 48);
        assertFalse(w.owes());
        w.oweAll(2);
        w.sendCredits();
        assertEquals(1, TestRings.drain(rings[0]).size());
        assertEquals(48, ShuffleFrameDescriptor.creditBytes(TestRings.drain(rings[1]).get(0).payload(), 0));
    }

    @Test
    void aCreditWhoseBufferIsFullStaysOwed() {
        ExchangeWindow w = window(STILL_COMING);
        RingBuffer full = rings[1];
        while (full.tryClaim(1, 200) >= 0) {
            full.commit();
        }
        while (full.tryClaim(1, 0) >= 0) {
            full.commit();
        }
        w.took(1, 5, 120);
        w.sendCredits();
        assertTrue(w.owes());
        assertEquals(120, w.taken(1, 5));
        TestRings.drain(full);
        w.sendCredits();
        assertFalse(w.owes());
        assertEquals(1, TestRings.drain(full).size());
    }

    @Test
    void aCreditForBytesNotSentIsRefusedNamingTheWorkersAndValues() {
        ExchangeWindow w = window(STILL_COMING);
        w.sent(1, 6, 80);
        IllegalStateException more = assertThrows(IllegalStateException.class,
            () -> w.credited(1, 6, 101, ShuffleFrameDescriptor.CREDIT_MARK));
        assertEquals("worker 0: credit from worker 1 for exchange 6: bytes=101 outside [1, 100] (the uncredited"
            + " bytes), it holds 100 uncredited bytes of it", more.getMessage());
        IllegalStateException mark = assertThrows(IllegalStateException.class, () -> w.credited(1, 6, 100, 0));
        assertTrue(mark.getMessage().contains("mark=0x0"), mark.getMessage());
        assertEquals(100, w.uncredited(1, 6), "a refused credit changes nothing");
    }
}
