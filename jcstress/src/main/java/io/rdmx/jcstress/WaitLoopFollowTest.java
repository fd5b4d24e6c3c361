package io.rdmx.jcstress;

import io.rdmx.transport.capability.InputFollowing;
import io.rdmx.transport.internal.WaitLoop;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * The leader/follower hand-off of the one wait loop ({@link WaitLoop}), as the channel readers and the completion
 * queue run it: the waiter publishes the input it will read and checks its condition once more
 * ({@link WaitLoop#publishAndCheck}, what {@code await} does before it waits on the input); a waker sets the
 * condition and then {@link WaitLoop#wake wakes}, which ends a wait on a published input. Either the re-check sees
 * the condition or the wake reaches the input: both missing (0, 0) is a lost wake-up - the waiter would wait on a
 * socket that brings nothing while what it waits for is there. Fails if the publication moves after the re-check,
 * or without the fence between them, or if {@code wake} does not wake the follower.
 */
@JCStressTest
@Description("WaitLoop: the follower's re-check after publishing its input, or wake() of that input, sees the other")
@Outcome(id = "1, 1", expect = Expect.ACCEPTABLE, desc = "both saw each other")
@Outcome(id = "1, 0", expect = Expect.ACCEPTABLE, desc = "the re-check saw the condition; the wake came before")
@Outcome(id = "0, 1", expect = Expect.ACCEPTABLE, desc = "the wake reached the input; the re-check came first")
@Outcome(id = "0, 0", expect = Expect.FORBIDDEN, desc = "lost wake-up: neither saw the other")
@State
public class WaitLoopFollowTest {
    private final WaitLoop loop = new WaitLoop("jcstress");
    /** The condition; set by the waker. */
    private volatile boolean ready;
    /** Written by the waker's thread only (wake() calls wakeInput on a published input). */
    private boolean woken;
    private final Condition condition = new Condition(this);
    private final Input input = new Input(this);

    /** The waiter's condition: 1 once set. */
    private static final class Condition implements WaitLoop.Waiting<RuntimeException> {
        private final WaitLoopFollowTest test;

        Condition(WaitLoopFollowTest test) {
            this.test = test;
        }

        @Override
        public int check() {
            return test.ready ? 1 : WaitLoop.NOT_YET;
        }

        @Override
        public String waiter() {
            return "jcstress";
        }
    }

    /** The stand-in input: only a wake is expected here (the waiter does not reach its wait). */
    private static final class Input implements InputFollowing {
        private final WaitLoopFollowTest test;

        Input(WaitLoopFollowTest test) {
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

    /** Waiter: publish the input, check once more. */
    @Actor
    public void waiter(II_Result r) {
        r.r1 = loop.publishAndCheck(condition, input) == 1 ? 1 : 0;
    }

    /** Waker: set the condition, then wake. */
    @Actor
    public void waker(II_Result r) {
        ready = true;
        loop.wake();
        r.r2 = woken ? 1 : 0;
    }
}
