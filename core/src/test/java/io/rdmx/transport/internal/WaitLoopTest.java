package io.rdmx.transport.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.capability.InputFollowing;
import io.rdmx.transport.testsuite.Blocking;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The one wait loop ({@link WaitLoop}): it ends on the clock, on a wake-up, on the input it follows, on an
 * interrupt and on a failed check, and it looks at the spinning input only on the spins the mask names.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class WaitLoopTest {
    private static final long MINUTE = TimeUnit.MINUTES.toNanos(1);
    private static final Duration WAIT = Duration.ofSeconds(10);

    /** A condition that holds once {@link #ready} is set; steps as the fields say. */
    private static final class Flag implements WaitLoop.Waiting<IllegalStateException> {
        volatile boolean ready;
        volatile boolean failed;
        /** The step before a sleep ({@link #prepare}) makes the condition hold: the wait ends after its spins. */
        boolean readyBeforeSleep;
        InputFollowing spin;
        InputFollowing follow;

        @Override
        public int check() {
            if (failed) {
                throw new IllegalStateException("gone");
            }
            return ready ? 1 : WaitLoop.NOT_YET;
        }

        @Override
        public InputFollowing spinInput() {
            return spin;
        }

        @Override
        public boolean prepare() {
            if (readyBeforeSleep) {
                ready = true;
                return true;
            }
            return false;
        }

        @Override
        public InputFollowing followInput() {
            return follow;
        }

        @Override
        public String waiter() {
            return "the test's waiter";
        }
    }

    @Test
    void aSpinningWaitEndsOnTheClockWithNotYet() throws Exception {
        WaitLoop loop = new WaitLoop(this);
        assertEquals(WaitLoop.NOT_YET, loop.await(new Flag(), System.nanoTime() + 50_000_000L, Integer.MAX_VALUE, 0));
    }

    @Test
    void aSleepingWaitEndsOnTheClockWithNotYet() throws Exception {
        WaitLoop loop = new WaitLoop(this);
        assertEquals(WaitLoop.NOT_YET, loop.await(new Flag(), System.nanoTime() + 50_000_000L, 0, 0));
    }

    @Test
    void aWakeEndsASleep() throws Exception {
        WaitLoop loop = new WaitLoop(this);
        Flag f = new Flag();
        Blocking.Call<Integer> call = Blocking.start("waiter", () -> loop.await(f, System.nanoTime() + MINUTE, 0, 0));
        Blocking.awaitBlockedIn(call.thread(), "WaitLoop.await", WAIT);
        f.ready = true;
        loop.wake();
        assertEquals(1, call.result().get(10, TimeUnit.SECONDS));
    }

    @Test
    void aWakeEndsAWaitOnTheFollowedInput() throws Exception {
        WaitLoop loop = new WaitLoop(this);
        Flag f = new Flag();
        CountDownLatch woken = new CountDownLatch(1);
        CountDownLatch waiting = new CountDownLatch(1);
        f.follow = new InputFollowing() {
            @Override
            public int awaitInput(long nanos) {
                waiting.countDown();
                try {
                    woken.await(nanos, TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return 0;
            }

            @Override
            public void wakeInput() {
                woken.countDown();
            }
        };
        Blocking.Call<Integer> call = Blocking.start("follower", () -> loop.await(f, System.nanoTime() + MINUTE, 0, 0));
        assertTrue(waiting.await(10, TimeUnit.SECONDS), "the waiter waits on its input");
        f.ready = true;
        loop.wake();
        assertEquals(1, call.result().get(10, TimeUnit.SECONDS));
    }

    @Test
    void aFollowerThatReadsWhatItWaitsForNeedsNoWake() throws Exception {
        WaitLoop loop = new WaitLoop(this);
        Flag f = new Flag();
        AtomicInteger reads = new AtomicInteger();
        f.follow = new InputFollowing() {
            @Override
            public int awaitInput(long nanos) {
                reads.incrementAndGet();
                f.ready = true; // the input it read brought what it waits for, handled on this thread
                return 8;
            }

            @Override
            public void wakeInput() {
                throw new AssertionError("the waiter's own input is not woken");
            }
        };
        assertEquals(1, loop.await(f, System.nanoTime() + MINUTE, 0, 0));
        assertEquals(1, reads.get());
    }

    @Test
    void anInputNotOfferedNowLeavesTheWaiterToSleep() throws Exception {
        WaitLoop loop = new WaitLoop(this);
        Flag f = new Flag();
        f.follow = new InputFollowing() {
            @Override
            public int awaitInput(long nanos) {
                return -1;
            }

            @Override
            public void wakeInput() {
            }
        };
        Blocking.Call<Integer> call = Blocking.start("waiter", () -> loop.await(f, System.nanoTime() + MINUTE, 0, 0));
        Blocking.awaitBlockedIn(call.thread(), "Sleeper.sleep", WAIT);
        f.ready = true;
        loop.wake();
        assertEquals(1, call.result().get(10, TimeUnit.SECONDS));
    }

    @Test
    void anInterruptEndsTheWaitNamingTheWaiter() throws Exception {
        WaitLoop loop = new WaitLoop(this);
        Blocking.Call<Integer> call = Blocking.start("waiter",
            () -> loop.await(new Flag(), System.nanoTime() + MINUTE, 0, 0));
        Blocking.awaitBlockedIn(call.thread(), "WaitLoop.await", WAIT);
        call.thread().interrupt();
        Throwable t = call.failure(WAIT);
        assertTrue(t instanceof InterruptedException, String.valueOf(t));
        assertEquals("the test's waiter", t.getMessage());
    }

    @Test
    void aFailedCheckEndsTheWaitWithItsException() throws Exception {
        WaitLoop loop = new WaitLoop(this);
        Flag f = new Flag();
        Blocking.Call<Integer> call = Blocking.start("waiter", () -> loop.await(f, System.nanoTime() + MINUTE, 0, 0));
        Blocking.awaitBlockedIn(call.thread(), "WaitLoop.await", WAIT);
        f.failed = true;
        loop.wake();
        Throwable t = call.failure(WAIT);
        assertTrue(t instanceof IllegalStateException, String.valueOf(t));
        assertEquals("gone", t.getMessage());
    }

    @Test
    void aSpinnerLooksAtItsInputOnTheSpinsTheMaskNames() throws Exception {
        WaitLoop loop = new WaitLoop(this);
        Flag f = new Flag();
        AtomicInteger looks = new AtomicInteger();
        f.spin = new InputFollowing() {
            @Override
            public int awaitInput(long nanos) {
                looks.incrementAndGet();
                return 0;
            }

            @Override
            public void wakeInput() {
            }
        };
        // 8 spins, mask 3: the looks come when 4 and 0 spins are left. The wait ends at its first step after the
        // spins (prepare, before it would sleep), not on the clock: the count never depends on the machine's speed
        f.readyBeforeSleep = true;
        assertEquals(1, loop.await(f, System.nanoTime() + MINUTE, 8, 3));
        assertEquals(2, looks.get());
    }
}
