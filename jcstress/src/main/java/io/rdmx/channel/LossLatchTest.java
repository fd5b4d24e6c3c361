package io.rdmx.channel;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * A peer fails on one thread while its rings are attached on another ({@link LossLatch}): exactly one of them tells
 * the readers of the loss. Nobody (r1 = r2 = 0) leaves the readers holding the peer's rings, and its memory, for
 * ever; both would take the readers' holds twice, and the memory would never go - what happens if either side
 * reads the other's flag before publishing its own.
 */
@JCStressTest
@Description("LossLatch: a peer that fails while its rings are attached is announced to the readers exactly once")
@Outcome(id = "1, 0", expect = Expect.ACCEPTABLE, desc = "the failing thread saw the rings and announced")
@Outcome(id = "0, 1", expect = Expect.ACCEPTABLE, desc = "the attaching thread saw the failure and announced")
@Outcome(id = "0, 0", expect = Expect.FORBIDDEN, desc = "nobody announced: the readers hold the rings for ever")
@Outcome(id = "1, 1", expect = Expect.FORBIDDEN, desc = "announced twice: holds nobody drops")
@State
public class LossLatchTest {
    private final LossLatch latch = new LossLatch();

    /** The thread that fails the peer. */
    @Actor
    public void fail(II_Result r) {
        r.r1 = latch.fail() ? 1 : 0;
    }

    /** The completion thread, handling the peer's HELLO: the rings exist. */
    @Actor
    public void attach(II_Result r) {
        r.r2 = latch.attach() ? 1 : 0;
    }
}
