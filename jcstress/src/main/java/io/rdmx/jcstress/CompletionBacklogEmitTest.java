package io.rdmx.jcstress;

import io.rdmx.transport.Opcode;
import io.rdmx.transport.Status;
import io.rdmx.transport.internal.CompletionBacklog;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;

/**
 * The hand-over of a connection's deferred completions ({@link CompletionBacklog#emit}, used by loopback and
 * verbs): two threads each add a completion and emit. The thread that finds the other handing over leaves its
 * completion to it and returns at once, so the one handing over must take it before it stops. Checked after both:
 * every completion handed over exactly once (a sum of 1 + 2 = 3 and a count of 2) and never two hand-overs at a
 * time (overlaps 0). A completion left in the backlog (count 1) is a lost hand-over; fails without the drain-again
 * loop on the emitters count.
 */
@JCStressTest
@Description("CompletionBacklog.emit: two adders, every completion handed over once, one at a time")
@Outcome(id = "2, 3, 0", expect = Expect.ACCEPTABLE, desc = "both handed over once, never at the same time")
@Outcome(expect = Expect.FORBIDDEN, desc = "lost, repeated or overlapping hand-over")
@State
public class CompletionBacklogEmitTest implements CompletionBacklog.Sink {
    private final CompletionBacklog backlog = new CompletionBacklog();
    /** Hand-overs under way; above 1 is an overlap. */
    private final AtomicInteger inside = new AtomicInteger();
    private final AtomicInteger count = new AtomicInteger();
    private final AtomicLong sum = new AtomicLong();
    private volatile int overlaps;

    @Override
    public void handOver(Opcode op, long wrId, Status status, int len, int imm, boolean hasImm, String detail) {
        if (inside.incrementAndGet() != 1) {
            overlaps++;
        }
        count.incrementAndGet();
        sum.addAndGet(wrId);
        inside.decrementAndGet();
    }

    /** A thread that released its lock after producing completion 1. */
    @Actor
    public void first() {
        backlog.add(Opcode.RECV, 1, Status.SUCCESS, 8, 0, false, null);
        backlog.emit(this);
    }

    /** Another, after producing completion 2. */
    @Actor
    public void second() {
        backlog.add(Opcode.SEND, 2, Status.SUCCESS, 8, 0, false, null);
        backlog.emit(this);
    }

    /** What was handed over once both returned. */
    @Arbiter
    public void check(III_Result r) {
        r.r1 = count.get();
        r.r2 = (int) sum.get();
        r.r3 = overlaps;
    }
}
