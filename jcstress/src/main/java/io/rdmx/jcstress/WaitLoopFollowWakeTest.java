package io.rdmx.jcstress;

import io.rdmx.transport.capability.InputFollowing;
import io.rdmx.transport.internal.WaitLoop;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.Selector;
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
 * No lost wake-up for a thread that waits in the one wait loop ({@link WaitLoop#await}, an hour, no spins) while
 * it reads its input itself (leader/follower): the input's wait is a select on an empty selector, as the shm and
 * tcp providers' followers wait ({@code Selector.wakeup()} ends it); another thread sets the condition and
 * {@link WaitLoop#wake wakes}. Nothing arrives on the input: a waiter still waiting after the wake is a lost
 * wake-up (STALE) - what happens without the re-check after the input is published, or with {@code wake} not
 * waking the input. The channel reader's and the completion queue's waits are this loop.
 */
@JCStressTest(Mode.Termination)
@Description("WaitLoop: wake() ends a wait on the followed input")
@Outcome(id = "TERMINATED", expect = Expect.ACCEPTABLE, desc = "the waiter saw the condition, or was woken")
@Outcome(id = "STALE", expect = Expect.FORBIDDEN, desc = "lost wake-up: the waiter waits, the condition holds")
@State
public class WaitLoopFollowWakeTest {
    private static final long HOUR = TimeUnit.HOURS.toNanos(1);
    private final WaitLoop loop = new WaitLoop("jcstress");
    private final Selector selector;
    private final InputFollowing input;
    private volatile boolean ready;
    private final WaitLoop.Waiting<RuntimeException> condition = new WaitLoop.Waiting<>() {
        @Override
        public int check() {
            return ready ? 1 : WaitLoop.NOT_YET;
        }

        @Override
        public InputFollowing followInput() {
            return input;
        }

        @Override
        public String waiter() {
            return "jcstress";
        }
    };

    /** A stand-in input whose wait is a select on an empty selector, as the providers' is. */
    public WaitLoopFollowWakeTest() {
        try {
            selector = Selector.open();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        input = new InputFollowing() {
            @Override
            public int awaitInput(long nanos) {
                try {
                    selector.select(Math.max(1, nanos / 1_000_000));
                } catch (IOException | ClosedSelectorException e) {
                    return -1;
                }
                return 0;
            }

            @Override
            public void wakeInput() {
                selector.wakeup();
            }
        };
    }

    /** Waiter: the loop's await, until the condition holds. */
    @Actor
    public void waiter() {
        try {
            while (loop.await(condition, System.nanoTime() + HOUR, 0, 0) != 1) {
                Thread.onSpinWait(); // not reached: the loop returns only once the condition holds (or in an hour)
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            try {
                selector.close();
            } catch (IOException e) {
                // closed either way
            }
        }
    }

    /** Waker: set the condition, then wake. */
    @Signal
    public void waker() {
        ready = true;
        loop.wake();
    }
}
