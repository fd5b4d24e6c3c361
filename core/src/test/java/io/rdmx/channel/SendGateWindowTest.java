package io.rdmx.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link SendGate}'s window on one thread: sends in order up to the window, completions retire them in order
 * (one at a time or up to a notified position), threshold and flush as before, and nothing allocated per send or
 * completion. (The hand-offs between threads: {@code SendGateTest} in the jcstress module.)
 */
@Timeout(10)
class SendGateWindowTest {
    /** A ring reduced to its committed head, recording the sends. */
    private static final class Ring implements SendGate.Sender {
        long head;
        boolean stays = true;
        final List<String> sends = new ArrayList<>();
        long count;
        /** Looks at the gate: {@link SendGate#trySend} asks {@code open()} once per pass. */
        long looks;

        @Override
        public long committedAcquire() {
            return head;
        }

        @Override
        public boolean open() {
            looks++;
            return true;
        }

        @Override
        public boolean send(long from, long to) {
            if (sends.size() < 64) {
                sends.add(from + "-" + to);
            }
            count++;
            return stays;
        }
    }

    @Test
    void sendsUpToTheWindowThenLeavesTheRestToCompletions() {
        Ring r = new Ring();
        SendGate g = new SendGate(10, 3, r);
        for (int i = 1; i <= 5; i++) {
            r.head = 10L * i;
            g.committed();
        }
        assertEquals(List.of("0-10", "10-20", "20-30"), r.sends, "three in flight, the rest waits");
        assertEquals(3, g.inFlightCount());
        assertEquals(30, g.postedEnd());
        assertEquals(0, g.sent());
        g.completeOldest();
        assertEquals(List.of("0-10", "10-20", "20-30", "30-50"), r.sends, "a place freed: all that is due goes");
        assertEquals(10, g.sent());
        g.complete(50); // a notification of 50: every WRITE up to it
        assertEquals(0, g.inFlightCount());
        assertEquals(50, g.sent());
        assertFalse(g.inFlight());
        assertEquals(3, g.peakInFlight());
    }

    @Test
    void aWriterFindingTheWindowFullLooksAgainAThresholdLaterNotOnEveryRecord() {
        Ring r = new Ring();
        SendGate g = new SendGate(100, 1, r);
        r.head = 100;
        g.committed(); // [0, 100) in flight: the window of one is full
        assertEquals(List.of("0-100"), r.sends);
        long looks = r.looks;
        for (int i = 1; i <= 1000; i++) {
            r.head = 100 + i; // a 1-byte record per commit
            g.committed();
        }
        // one look at each threshold the head crossed (10), where each of the 900 commits past the first
        // threshold used to try the gate (a CAS and two fences each)
        assertTrue(r.looks - looks <= 10, "gate tries with the window full: " + (r.looks - looks));
        assertEquals(List.of("0-100"), r.sends, "nothing sent while the window is full");
        g.completeOldest(); // the completion that frees the place sends everything due
        assertEquals(List.of("0-100", "100-1100"), r.sends);
        assertEquals(100, g.sent());
    }

    @Test
    void aNotificationRetiresOnlyTheWritesUpToItsPosition() {
        Ring r = new Ring();
        SendGate g = new SendGate(1, 4, r);
        for (int i = 1; i <= 4; i++) {
            r.head = 8L * i;
            g.committed();
        }
        g.complete(16);
        assertEquals(2, g.inFlightCount());
        assertEquals(16, g.sent());
        g.complete(16); // a second notice of the same position changes nothing
        assertEquals(2, g.inFlightCount());
        g.complete(32);
        assertEquals(0, g.inFlightCount());
        assertEquals(32, g.sent());
    }

    @Test
    void belowTheThresholdOnlyAFlushSendsAndAFlushWaitsForAPlace() {
        Ring r = new Ring();
        SendGate g = new SendGate(100, 1, r);
        r.head = 40;
        g.committed();
        assertEquals(List.of(), r.sends, "below the threshold");
        g.flush();
        assertEquals(List.of("0-40"), r.sends);
        r.head = 60;
        g.flush(); // the window is full: the flush is remembered
        assertEquals(List.of("0-40"), r.sends);
        g.completeOldest();
        assertEquals(List.of("0-40", "40-60"), r.sends, "the completion sends what the flush asked for");
        g.completeOldest();
        r.head = 70;
        g.committed();
        assertEquals(2, r.sends.size(), "the flush was used up");
    }

    @Test
    void sendsDoneAtOnceNeverOccupyTheWindow() {
        Ring r = new Ring();
        r.stays = false; // a mapped publish
        SendGate g = new SendGate(1, 1, r);
        for (int i = 1; i <= 3; i++) {
            r.head = i;
            g.committed();
        }
        assertEquals(List.of("0-1", "1-2", "2-3"), r.sends);
        assertEquals(3, g.sent());
        assertFalse(g.inFlight());
    }

    @Test
    void badWindowsFail() {
        Ring r = new Ring();
        assertThrows(IllegalArgumentException.class, () -> new SendGate(1, 0, r));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new SendGate(1, 257, r));
        assertTrue(e.getMessage().contains("window=257"), e.getMessage());
        assertEquals(5, new SendGate(1, 5, r).window(), "a window that is not a power of two");
    }

    /**
     * The writer's commit looks at the gate only once its head reaches a bound kept from the last look; a send
     * made meanwhile by another thread (a flush) moves the real bound, and a commit still sends exactly when
     * the threshold past the new posted end is reached, never before it and never later.
     */
    @Test
    void aCommitSendsAtTheThresholdPastWhateverWasPostedMeanwhile() {
        Ring r = new Ring();
        SendGate g = new SendGate(100, 4, r);
        r.head = 40;
        g.committed(); // below the threshold: no send, the next look is due at 100
        r.head = 70;
        g.flush(); // another thread posts [0, 70): the next send is due at 170
        assertEquals(List.of("0-70"), r.sends);
        for (long h = 71; h < 170; h++) {
            r.head = h;
            g.committed();
        }
        assertEquals(List.of("0-70"), r.sends, "nothing due before 70 + threshold");
        r.head = 170;
        g.committed();
        assertEquals(List.of("0-70", "70-170"), r.sends, "due at 70 + threshold");
        for (long h = 171; h < 270; h++) {
            r.head = h;
            g.committed();
        }
        r.head = 275;
        g.committed();
        assertEquals(List.of("0-70", "70-170", "170-275"), r.sends, "a commit past the threshold sends all");
    }

    @Test
    void nothingIsAllocatedPerSendOrCompletion() {
        Ring r = new Ring();
        SendGate g = new SendGate(1, 4, r);
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long id = Thread.currentThread().getId();
        cycle(r, g, 10_000); // warm up (the JIT, the sends list's growth)
        long before = mx.getThreadAllocatedBytes(id);
        cycle(r, g, 100_000);
        long allocated = mx.getThreadAllocatedBytes(id) - before;
        // 100 000 sends and completions; a single object per send would be 1.6 MB at least
        assertTrue(allocated < 64 << 10, allocated + " bytes allocated for 100000 sends and completions");
    }

    private static void cycle(Ring r, SendGate g, int n) {
        for (int i = 0; i < n; i++) {
            r.head++;
            g.committed();
            if (g.inFlightCount() == 4) {
                if ((i & 1) == 0) {
                    g.completeOldest();
                } else {
                    g.complete(g.postedEnd());
                }
            }
        }
    }
}
