package io.rdmx.transport.stream;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;

/**
 * The tcp send lock's owed ACK ({@link SendLock}): the event loop owes an ACK (stores it, then tries the lock)
 * while a posting thread holds the lock, takes an owed ACK to carry it in front of its frame, and releases the
 * lock (then looks for an ACK owed meanwhile). The ACK is written exactly once, carried or alone: never left
 * owed with nobody to write it (a lost ACK: the peer's requests would never complete), never written twice.
 * (In this package of the jcstress module so that it reaches the package-private lock.)
 */
@JCStressTest
@Description("tcp SendLock: owe (store, tryLock, write) against a holder (lock, take, unlock, look again)")
@Outcome(id = "1, 0, 0", expect = Expect.ACCEPTABLE, desc = "written alone (by the event loop or on unlock)")
@Outcome(id = "0, 1, 0", expect = Expect.ACCEPTABLE, desc = "carried in front of the holder's frame")
@Outcome(id = "0, 0, 1", expect = Expect.FORBIDDEN, desc = "lost: owed, nobody writes it")
@Outcome(id = "1, 1, 0", expect = Expect.FORBIDDEN, desc = "written twice")
@Outcome(expect = Expect.FORBIDDEN, desc = "impossible")
@State
public class SendLockOwedAckTest {
    private int alone;
    private int carried;
    private final SendLock lock = new SendLock(seq -> alone++);

    /** The event loop: ACK up to request 1. */
    @Actor
    public void eventLoop() {
        lock.owe(1);
    }

    /** A posting thread writing one frame, carrying an owed ACK in front of it. */
    @Actor
    public void poster() {
        lock.lock();
        try {
            if (lock.takeOwed() != 0) {
                carried++;
            }
        } finally {
            lock.unlock();
        }
    }

    /** What was written, and what is still owed. */
    @Arbiter
    public void arbiter(III_Result r) {
        r.r1 = alone;
        r.r2 = carried;
        r.r3 = (int) lock.owed();
    }
}
