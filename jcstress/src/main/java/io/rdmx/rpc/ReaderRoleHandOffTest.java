package io.rdmx.rpc;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.ZZ_Result;

/**
 * The hand-off of an {@link RpcClient}'s reader role ({@link ReaderRole}): a calling thread that read its own
 * response gives the role back while another caller, which found the role taken, counts itself as a follower and
 * tries the role once more before it sleeps (as {@code AnswerReader.CallerWait} does in its wait loop: prepare
 * queues it, the loop's re-check tries the role). Either the follower takes the role, or the leaving reader finds
 * it queued (and hands it the role, waking its wait loop): never neither, which would leave the follower asleep
 * with its response unread until its timeout. That the wake-up reaches a follower about to sleep is the wait
 * loop's own hand-off ({@code SleeperLocalWakeTest}); this is the role's flag against its queue. (In this package
 * of the jcstress module to reach the package-private class.)
 */
@JCStressTest
@Outcome(id = {"true, true", "true, false", "false, true"}, expect = Expect.ACCEPTABLE,
    desc = "the follower reads, or the leaving reader sees it")
@Outcome(id = "false, false", expect = Expect.FORBIDDEN, desc = "a follower asleep with nobody reading for it")
@State
public class ReaderRoleHandOffTest {
    private final ReaderRole<PendingCall> role = new ReaderRole<>();
    private final PendingCall follower = waiter();

    /** The leader holds the role when both actors start. */
    public ReaderRoleHandOffTest() {
        role.tryTake();
    }

    /**
     * The reader leaving.
     *
     * @param r r1: whether it found the follower queued (and so hands it the role)
     */
    @Actor
    public void leader(ZZ_Result r) {
        r.r1 = role.handOff() == follower;
    }

    /**
     * A caller that found the role taken: counts itself, then tries once more.
     *
     * @param r r2: whether it took the role
     */
    @Actor
    public void follower(ZZ_Result r) {
        follower.queued = true;
        role.follow(follower);
        r.r2 = role.tryTake();
    }

    /** @return a blocking call's waiter, as {@code AnswerReader} queues it (the real follower, not a copy) */
    private static PendingCall waiter() {
        return new PendingCall("test", false, Long.MAX_VALUE, 0);
    }
}
