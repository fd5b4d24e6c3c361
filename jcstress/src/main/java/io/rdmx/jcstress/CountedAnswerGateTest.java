package io.rdmx.jcstress;

import io.rdmx.rpc.hadoop.CountedAnswer;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * The gate of a Hadoop call's answer over rdmx ({@link CountedAnswer}): one thread answers the call (a postponed
 * or deferred answer comes from any thread), Hadoop's handler says it counted the call; whichever is second
 * completes the future, with the answer. Not completed (0, 0) is a lost answer: the client would wait for its
 * call timeout (both sides thought they were first); completed with anything but the answer (1, 0) means the
 * counting side read the answer before the answerer's store was visible.
 */
@JCStressTest
@Description("CountedAnswer: answer() and counted() race; the second completes the future, with the answer")
@Outcome(id = "1, 1", expect = Expect.ACCEPTABLE, desc = "completed, with the answer")
@Outcome(expect = Expect.FORBIDDEN, desc = "lost or wrong answer")
@State
public class CountedAnswerGateTest {
    /** The answer, with a field written before it is handed over: the completer must see it. */
    static final class Answer {
        int payload;
    }

    private final CountedAnswer<Answer> answer = new CountedAnswer<>();
    /** The thread that answers the call. */
    @Actor
    public void answerer() {
        Answer a = new Answer();
        a.payload = 42;
        answer.answer(a);
    }

    /** Hadoop's handler, after updateMetrics. */
    @Actor
    public void counter() {
        answer.counted();
    }

    /** After both: done, with the answer's payload. */
    @Arbiter
    public void arbiter(II_Result r) {
        r.r1 = answer.isDone() ? 1 : 0;
        Answer a = answer.getNow(null);
        r.r2 = a != null && a.payload == 42 ? 1 : 0;
    }
}
