package io.rdmx.transport.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Opcode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The outstanding-request ring that shm and tcp connections share: order, ACK and NAK matching, wrap-around. */
@Timeout(10)
class OutstandingRingTest {

    @Test
    void acksCompleteInOrderUpToTheAckedSequenceNumber() {
        OutstandingRing r = new OutstandingRing(4);
        r.add(1, Opcode.SEND, 101, 10, true);
        r.add(2, Opcode.WRITE, 102, 20, false);
        r.add(3, Opcode.WRITE_WITH_IMM, 103, 30, true);
        assertEquals(3, r.count());

        int i = r.takeAcked(2);
        assertEquals(101, r.wrId(i));
        assertEquals(Opcode.SEND, r.op(i));
        assertEquals(10, r.length(i));
        assertTrue(r.signaled(i));
        i = r.takeAcked(2);
        assertEquals(102, r.wrId(i));
        assertEquals(Opcode.WRITE, r.op(i));
        assertFalse(r.signaled(i));
        assertEquals(-1, r.takeAcked(2), "seq=3 is not covered by an ACK of 2");
        assertEquals(1, r.count());
        i = r.takeAcked(3);
        assertEquals(103, r.wrId(i));
        assertEquals(Opcode.WRITE_WITH_IMM, r.op(i));
        assertEquals(30, r.length(i));
        assertEquals(-1, r.takeAcked(Long.MAX_VALUE));
        assertEquals(-1, r.take());
    }

    @Test
    void aPlacedWriteSharesTheSequenceNumberOfTheFrameBeforeIt() {
        OutstandingRing r = new OutstandingRing(4);
        r.add(5, Opcode.SEND, 1, 1, true);
        r.add(5, Opcode.WRITE, 2, 2, true);
        assertEquals(1, r.wrId(r.takeAcked(5)));
        assertEquals(2, r.wrId(r.takeAcked(5)), "the ACK of its frame completes the placed WRITE behind it");
    }

    @Test
    void aNakTakesOnlyTheOldestAndOnlyIfItIsTheRefusedOne() {
        OutstandingRing r = new OutstandingRing(2);
        r.add(7, Opcode.SEND, 70, 1, true);
        r.add(8, Opcode.SEND, 80, 1, true);
        assertEquals(-1, r.takeSeq(8), "seq=8 is not the oldest");
        assertEquals(2, r.count());
        assertEquals(70, r.wrId(r.takeSeq(7)));
        assertEquals(-1, r.takeSeq(7));
        assertEquals(80, r.wrId(r.take()));
        assertEquals(-1, r.takeSeq(8), "nothing is outstanding");
    }

    @Test
    void fullAtTheDepthAndReusesSlotsInOrderAcrossTheWrap() {
        OutstandingRing r = new OutstandingRing(3);
        long seq = 0;
        long completed = 0;
        for (int round = 0; round < 10; round++) {
            while (!r.isFull()) {
                seq++;
                r.add(seq, Opcode.SEND, 1000 + seq, (int) seq, true);
            }
            assertEquals(3, r.count());
            assertEquals(3, r.capacity());
            // ACK two of the three: the oldest two complete, in order
            for (int k = 0; k < 2; k++) {
                int i = r.takeAcked(completed + 2);
                completed++;
                assertEquals(1000 + completed, r.wrId(i));
                assertEquals((int) completed, r.length(i));
            }
            assertFalse(r.isFull());
        }
        while (r.count() > 0) {
            completed++;
            assertEquals(1000 + completed, r.wrId(r.take()));
        }
        assertEquals(seq, completed);
    }
}
