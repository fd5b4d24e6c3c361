package io.rdmx.rpc;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.Z_Result;

/**
 * A leaving reader hands the role ({@link ReaderRole#handOff}) to a queued follower, and another caller takes the
 * role at once (the reader's actor does both: two actors, as this 2-CPU machine can schedule), while the follower,
 * awake, finds itself out of the queue, queues itself again ({@link ReaderRole#follow}) and tries the role, as
 * {@code AnswerReader.await} does. Whatever the order, a follower that is still queued at the end
 * must be reached by the next hand-off (the arbiter's, standing for whoever holds the role then): a follower queued
 * with the stale state of an earlier hand-off would be passed over and left asleep with nobody reading for it.
 */
@JCStressTest
@Outcome(id = "true", expect = Expect.ACCEPTABLE,
    desc = "the follower holds the role, was handed it, or the next hand-off reaches it")
@Outcome(id = "false", expect = Expect.FORBIDDEN, desc = "queued, and passed over by the next hand-off")
@State
public class ReaderRoleRequeueTest {
    private final ReaderRole<PendingCall> role = new ReaderRole<>();
    private final PendingCall follower = waiter();
    private boolean tookIt;

    /** The reader holds the role; the follower is queued. */
    public ReaderRoleRequeueTest() {
        role.tryTake();
        follower.queued = true;
        role.follow(follower);
    }

    /** The reader leaving, then another caller that takes the role as it comes free. */
    @Actor
    public void reader() {
        role.handOff();
        role.tryTake();
    }

    /** The follower, awake: out of the queue, it queues itself again, then tries the role. */
    @Actor
    public void follower() {
        if (!follower.queued) {
            follower.queued = true;
            role.follow(follower);
        }
        if (role.tryTake()) {
            role.took(follower);
            tookIt = true;
        }
    }

    /**
     * After all three: a follower still queued must be reached by the next hand-off.
     *
     * @param r r1: true unless the follower waits in the queue and the next hand-off passes it over
     */
    @Arbiter
    public void arbiter(Z_Result r) {
        boolean waiting = follower.queued && !tookIt;
        PendingCall next = role.handOff();
        r.r1 = !waiting || next == follower;
    }

    /** @return a blocking call's waiter, as {@code AnswerReader} queues it (the real follower, not a copy) */
    private static PendingCall waiter() {
        return new PendingCall("test", false, Long.MAX_VALUE, 0);
    }
}
