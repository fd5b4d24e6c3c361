package io.rdmx.jcstress;

import io.rdmx.transport.Completion;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.Status;
import io.rdmx.transport.internal.CompletionQueueImpl;
import io.rdmx.transport.internal.InputFollower;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * The hand-off of a completion-queue waiter that reads its node's input itself (leader/follower,
 * {@link CompletionQueueImpl#followInput}): the waiter publishes its input and polls once more
 * ({@link CompletionQueueImpl#publishAndPoll}, as {@code await} does before it waits on the input); a producer
 * {@link CompletionQueueImpl#add adds} a completion, which wakes a published input. Either the waiter's poll
 * gets the completion or the producer's add wakes the input: both missing (0, 0) is a lost wake-up - the waiter
 * would wait on a socket that brings nothing while its completion is queued. Fails without the poll after the
 * publication, and without the wake in {@code add}.
 */
@JCStressTest
@Description("CompletionQueueImpl: the waiter's poll after publishing its input, or add()'s wake of it, sees the other")
@Outcome(id = "1, 1", expect = Expect.ACCEPTABLE, desc = "both saw each other")
@Outcome(id = "1, 0", expect = Expect.ACCEPTABLE, desc = "the poll got the completion; add came before publication")
@Outcome(id = "0, 1", expect = Expect.ACCEPTABLE, desc = "add woke the input; the poll came first")
@Outcome(id = "0, 0", expect = Expect.FORBIDDEN, desc = "lost wake-up: neither saw the other")
@State
public class CompletionQueueFollowerHandOffTest {
    private static final Completion DONE = new Completion(null, 1, Opcode.RECV, Status.SUCCESS, 8, 0, false, null);
    private final CompletionQueueImpl cq = new CompletionQueueImpl("jcstress");
    /** Written by the producer's thread only (add() calls wakeInput on it). */
    private boolean woken;
    private final InputFollower.Input input = new Input(this);

    /** The stand-in input: only a wake is expected here (the waiter does not reach its wait). */
    private static final class Input implements InputFollower.Input {
        private final CompletionQueueFollowerHandOffTest test;

        Input(CompletionQueueFollowerHandOffTest test) {
            this.test = test;
        }

        @Override
        public int awaitInput(long nanos) {
            throw new UnsupportedOperationException("awaitInput");
        }

        @Override
        public void wakeInput() {
            test.woken = true;
        }
    }

    /** Waiter: publish the input, poll once more. */
    @Actor
    public void waiter(II_Result r) {
        r.r1 = cq.publishAndPoll(input, c -> { }, 1);
    }

    /** Producer: add, which wakes a published input. */
    @Actor
    public void producer(II_Result r) {
        cq.add(DONE);
        r.r2 = woken ? 1 : 0;
    }
}
