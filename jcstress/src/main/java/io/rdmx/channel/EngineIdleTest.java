package io.rdmx.channel;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * No commit left unflushed by a channel engine's network thread that went idle ({@link EngineIdle}): a writer
 * publishes a commit that leaves data unposted (a volatile store of its head, as the ring's release store) and
 * asks whether it must wake the network thread (r1 = 1: it kicks); the network thread, after a scan that found
 * nothing, goes idle and looks at the writer's unposted data once more (r2 = 1: it sleeps with no scan due). Both
 * missing each other (r2 = 1, r1 = 0) leaves the data unposted for as long as the thread sleeps - what happens if
 * the writer reads the flag before its fence, or the thread looks at the head before it sets the flag.
 */
@JCStressTest
@Description("EngineIdle: a commit that leaves data unposted wakes a network thread that went idle")
@Outcome(id = "1, 1", expect = Expect.ACCEPTABLE, desc = "the thread went idle, the writer woke it")
@Outcome(id = "0, 0", expect = Expect.ACCEPTABLE, desc = "the thread saw the data and keeps scanning")
@Outcome(id = "1, 0", expect = Expect.ACCEPTABLE_INTERESTING, desc = "both: one wake-up too many")
@Outcome(id = "0, 1", expect = Expect.FORBIDDEN, desc = "lost: the thread sleeps, the data waits, nobody woke it")
@State
public class EngineIdleTest {
    private final EngineIdle idle = new EngineIdle();
    private volatile long head;
    private final long postedEnd = 0;

    /** The writer: commit (publish the head), then the idle check. */
    @Actor
    public void writer(II_Result r) {
        head = 1;
        r.r1 = idle.wakeIfIdle() ? 1 : 0;
    }

    /** The network thread, after an empty scan. */
    @Actor
    public void network(II_Result r) {
        r.r2 = idle.goIdle(() -> head > postedEnd) ? 1 : 0;
    }
}
