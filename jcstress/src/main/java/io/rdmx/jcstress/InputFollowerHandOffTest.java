package io.rdmx.jcstress;

import io.rdmx.transport.Connection;
import io.rdmx.transport.internal.InputFollower;
import java.lang.reflect.Proxy;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * The hand-off of leader/follower input ({@link InputFollower}), as the channel reader runs it: the waiter
 * publishes its connection ({@code begin}) and then re-checks its condition (the ready queue; a flag here); a
 * waker sets the condition and then {@code wake}s. Either the re-check sees the flag or the waker sees the
 * connection and ends the wait: both missing (0, 0) is a lost wake-up - the waiter would wait on a socket that
 * brings nothing while its data is ready. Fails if the re-check moves before {@code begin}.
 */
@JCStressTest
@Description("InputFollower: the waiter's re-check after begin() or the waker's wake() sees the other")
@Outcome(id = "1, 1", expect = Expect.ACCEPTABLE, desc = "both saw each other")
@Outcome(id = "1, 0", expect = Expect.ACCEPTABLE, desc = "the re-check saw the flag; the waker came before begin")
@Outcome(id = "0, 1", expect = Expect.ACCEPTABLE, desc = "the waker woke the wait; the re-check came first")
@Outcome(id = "0, 0", expect = Expect.FORBIDDEN, desc = "lost wake-up: neither saw the other")
@State
public class InputFollowerHandOffTest {
    /** A stand-in connection: only wakeInput is called (awaitInput is never reached here). */
    private static final Connection STAND_IN = (Connection) Proxy.newProxyInstance(
        Connection.class.getClassLoader(), new Class<?>[] {Connection.class}, (proxy, m, args) -> {
            if (m.getName().equals("wakeInput")) {
                return null;
            }
            throw new UnsupportedOperationException(m.getName());
        });
    private static final InputFollower.Input CONNECTION = InputFollower.Input.of(STAND_IN);

    private final InputFollower follower = new InputFollower();
    private volatile boolean ready;

    /** Waiter: begin, then re-check. */
    @Actor
    public void waiter(II_Result r) {
        follower.begin(CONNECTION);
        r.r1 = ready ? 1 : 0;
    }

    /** Waker: set the condition, then wake. */
    @Actor
    public void waker(II_Result r) {
        ready = true;
        r.r2 = follower.wake() ? 1 : 0;
    }
}
