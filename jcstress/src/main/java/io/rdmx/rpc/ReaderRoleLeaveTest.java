package io.rdmx.rpc;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.ZZZ_Result;

/**
 * A leaving reader hands the role ({@link ReaderRole#handOff}) to a queued follower whose call completes at that
 * moment (completed by another thread, or timed out), so that the follower leaves without reading. Either the
 * reader hands it the role and the follower then learns it must pass the role on, or the follower leaves first
 * and the reader passes it over: never a hand-off to a follower that has left without passing it on, which would
 * leave the followers queued behind it asleep with nobody reading for them (until the idle reader thread's next
 * look, up to 200 ms later). A second follower is queued behind the first, as the one the role should reach.
 */
@JCStressTest
@Outcome(id = "true, true, false", expect = Expect.ACCEPTABLE,
    desc = "handed to the follower as it left: it passes the role on")
@Outcome(id = "false, false, true", expect = Expect.ACCEPTABLE,
    desc = "the follower left first: the reader hands the role to the next one")
@Outcome(id = "true, false, false", expect = Expect.FORBIDDEN,
    desc = "handed to a follower that left without it: the hand-off is lost")
@Outcome(expect = Expect.FORBIDDEN, desc = "the role handed twice, or to nobody while a follower waits")
@State
public class ReaderRoleLeaveTest {
    private final ReaderRole<PendingCall> role = new ReaderRole<>();
    private final PendingCall leaving = waiter();
    private final PendingCall next = waiter();

    /** The reader holds the role; the leaving follower is queued first, another behind it. */
    public ReaderRoleLeaveTest() {
        role.tryTake();
        leaving.queued = true;
        role.follow(leaving);
        next.queued = true;
        role.follow(next);
    }

    /**
     * The reader leaving.
     *
     * @param r r1: whether it handed the role to the first follower; r3: to the second
     */
    @Actor
    public void reader(ZZZ_Result r) {
        PendingCall handed = role.handOff();
        r.r1 = handed == leaving;
        r.r3 = handed == next;
    }

    /**
     * The first follower: its call completes and it stops waiting, as {@code AnswerReader.await} does.
     *
     * @param r r2: whether it learned that it was handed the role (and so passes it on)
     */
    @Actor
    public void follower(ZZZ_Result r) {
        leaving.complete(null);
        role.unfollow(leaving);
        r.r2 = !leaving.leave();
    }

    /** @return a blocking call's waiter, as {@code AnswerReader} queues it (the real follower, not a copy) */
    private static PendingCall waiter() {
        return new PendingCall("test", false, Long.MAX_VALUE, 0);
    }
}
