package io.rdmx.jcstress;

import io.rdmx.channel.PairLayout;
import io.rdmx.channel.SharedRing;
import io.rdmx.transport.internal.Futex;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Mode;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.Signal;
import org.openjdk.jcstress.annotations.State;

/**
 * No lost wake-up with real futex sleeps (Java 22+ on Linux): the reader does what {@code ChannelReader.read}
 * does on a mapped ring — stores {@link SharedRing#PARKED_FUTEX} in its parked word, checks the head once more,
 * sleeps on the word's futex (an hour: only a wake ends it) — and the writer what {@code ChannelWriter} does when
 * it publishes: release-stores the head, takes the parked word, {@code FUTEX_WAKE}s it if it held
 * {@link SharedRing#PARKED_FUTEX}. A reader still asleep after the writer finished is a lost wake-up (STALE).
 * Without futexes on the running JVM the reader spins instead of sleeping, and the test shows the flag protocol
 * only.
 */
@JCStressTest(Mode.Termination)
@Description("SharedRing + Futex: a reader asleep on its parked word is woken by the writer's publication")
@Outcome(id = "TERMINATED", expect = Expect.ACCEPTABLE, desc = "the reader saw the head, or was woken")
@Outcome(id = "STALE", expect = Expect.FORBIDDEN, desc = "lost wake-up: the reader sleeps, data published")
@State
public class SharedRingFutexWakeTest {
    private static final PairLayout LAYOUT = new PairLayout(1, 1, 1024, true);
    private static final long HOUR = TimeUnit.HOURS.toNanos(1);
    private final ByteBuffer region = ByteBuffer.allocateDirect(LAYOUT.regionLength());
    private final SharedRing writerSide = new SharedRing(region.duplicate(), LAYOUT.ringHeaderOffset(true, 0),
        LAYOUT.readerHeaderOffset(false, 0));
    private final SharedRing readerSide = new SharedRing(region.duplicate(), LAYOUT.ringHeaderOffset(true, 0),
        LAYOUT.readerHeaderOffset(false, 0));
    private final Futex.WaitSet sleep;

    /** Prepares the reader's wait set on its parked word. */
    public SharedRingFutexWakeTest() {
        Futex f = Futex.get();
        sleep = f == null ? null : f.newWaitSet(1);
        if (sleep != null) {
            sleep.set(0, readerSide.readerParkedAddress(), SharedRing.PARKED_FUTEX);
        }
    }

    /** Reader: arm, check, sleep until the word changes; again after a spurious return. */
    @Actor
    public void reader() {
        while (true) {
            readerSide.readerParkedVolatile(SharedRing.PARKED_FUTEX);
            if (readerSide.headAcquire() > 0) {
                readerSide.readerParkedVolatile(SharedRing.AWAKE);
                return;
            }
            if (sleep != null) {
                sleep.await(1, HOUR);
            } else {
                Thread.onSpinWait();
            }
        }
    }

    /** Writer: publish, take the word, wake by futex. */
    @Signal
    public void writer() {
        int taken = writerSide.publishHeadRelease(64);
        SharedRing.wakeByFutex(taken, writerSide.readerParkedAddress());
    }
}
