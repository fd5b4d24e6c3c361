package io.rdmx.rpc;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.ZZZ_Result;

/**
 * The one answer of an {@link RpcCall} of an asynchronous handler: the thread that answers (say, Hadoop's handler
 * sending a deferred response) and the server answering for the handler (say, a handler that threw after handing
 * the call on) race to claim it. Exactly one wins, so a call is answered exactly once (never twice into the
 * client's ring, never not at all), and whoever looks afterwards sees it answered. (In this package of the
 * jcstress module so that it reaches the package-private claim.)
 */
@JCStressTest
@Outcome(id = {"true, false, true", "false, true, true"}, expect = Expect.ACCEPTABLE, desc = "one claim wins")
@Outcome(id = "true, true, true", expect = Expect.FORBIDDEN, desc = "answered twice")
@Outcome(expect = Expect.FORBIDDEN, desc = "not answered, or not seen answered")
@State
public class RpcCallAnswerOnceTest {
    private final RpcCall call = new RpcCall(null, "peer", null, null, 1, 7L, 0L, 0L, new byte[0], null);
    private boolean first;
    private boolean second;

    @Actor
    public void responder() {
        first = call.tryClaimAnswer();
    }

    @Actor
    public void server() {
        second = call.tryClaimAnswer();
    }

    /**
     * Both claims, then whether the call reads as answered.
     *
     * @param r the result
     */
    @org.openjdk.jcstress.annotations.Arbiter
    public void arbiter(ZZZ_Result r) {
        r.r1 = first;
        r.r2 = second;
        r.r3 = call.isAnswered();
    }
}
