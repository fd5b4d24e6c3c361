package io.rdmx.jcstress;

import io.rdmx.transport.internal.InputHold;
import java.util.concurrent.TimeUnit;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * No lost wake-up of the I/O thread when a follower gives back a socket's input that followers hold
 * ({@link InputHold}): a follower reads the socket, the I/O thread is about to sleep. The I/O thread polls the held
 * input (r1 = 1: it may sleep with no deadline, a follower reads); the follower gives the input back (r2 = 1: it
 * wakes the I/O thread). The I/O thread sleeping with no deadline while nobody wakes it (1, 0) leaves input that
 * comes after the follower left unread for as long as it sleeps - what happens if the poll reads {@code owned}
 * before it stores {@code wakeOnRelease}, or the give-back reads {@code wakeOnRelease} before it clears
 * {@code owned}.
 */
@JCStressTest
@Description("InputHold: a follower's give-back wakes an I/O thread that sleeps with no deadline")
@Outcome(id = "1, 1", expect = Expect.ACCEPTABLE, desc = "the I/O thread sleeps, the follower wakes it")
@Outcome(id = "0, 0", expect = Expect.ACCEPTABLE, desc = "the I/O thread saw the give-back: sleeps the grace at most")
@Outcome(id = "0, 1", expect = Expect.ACCEPTABLE_INTERESTING, desc = "both: one wake-up too many")
@Outcome(id = "1, 0", expect = Expect.FORBIDDEN, desc = "lost wake-up: the I/O thread sleeps, nobody wakes it")
@State
public class InputHoldWakeTest {
    private static final long GRACE = TimeUnit.HOURS.toNanos(1);
    private final InputHold hold = new InputHold();

    /** A follower reads the held input; the I/O thread has seen it given back before (no wake asked for). */
    public InputHoldWakeTest() {
        hold.take();
        hold.hold();
        hold.giveBack(0);
        hold.take();
    }

    /** The I/O thread, before it sleeps. */
    @Actor
    public void ioThread(II_Result r) {
        r.r1 = hold.poll(1, GRACE, true) == InputHold.NO_DEADLINE ? 1 : 0;
    }

    /** The follower, done reading. */
    @Actor
    public void follower(II_Result r) {
        r.r2 = hold.giveBack(1) ? 1 : 0;
    }
}
