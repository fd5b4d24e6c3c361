package io.rdmx.jcstress;

import io.rdmx.transport.Completion;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Status;
import io.rdmx.transport.internal.CompletionQueueImpl;
import io.rdmx.transport.internal.InputFollower;
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
 * No lost wake-up for a completion-queue waiter that reads its node's input itself (leader/follower,
 * {@link CompletionQueueImpl#followInput}): the waiter runs the queue's own {@code await} (an hour), which
 * publishes the input, polls once more and then waits on it, here a select on an empty selector as the shm/tcp
 * provider's follower does ({@code Selector.wakeup()} ends it); another thread {@code add}s a completion. Nothing
 * arrives on the input: a waiter still waiting after the completion was added is a lost wake-up (STALE) - what
 * happens without the poll after the input is published (the completion added between the loop's first poll
 * and the publication), or with {@code add} not waking the input.
 */
@JCStressTest(Mode.Termination)
@Description("CompletionQueueImpl: add() ends a waiter's wait on the node's input")
@Outcome(id = "TERMINATED", expect = Expect.ACCEPTABLE, desc = "the waiter polled the completion, or was woken")
@Outcome(id = "STALE", expect = Expect.FORBIDDEN, desc = "lost wake-up: the waiter waits, a completion is queued")
@State
public class CompletionQueueFollowerTest {
    private static final long HOUR = TimeUnit.HOURS.toNanos(1);
    private static final Completion DONE = new Completion(null, 1, Opcode.RECV, Status.SUCCESS, 8, 0, false, null);
    private final CompletionQueueImpl cq = new CompletionQueueImpl("jcstress");
    private final Selector selector;

    /** A queue whose waiter reads a stand-in input: a select on an empty selector, as the provider's is. */
    public CompletionQueueFollowerTest() {
        try {
            selector = Selector.open();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        InputFollower.Input input = selectOn(selector);
        cq.followInput(() -> input);
    }

    private static InputFollower.Input selectOn(Selector selector) {
        return new InputFollower.Input() {
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

    /** Waiter: the queue's await, until it returns the completion. */
    @Actor
    public void waiter() {
        try {
            while (cq.await(c -> { }, 1, HOUR, TimeUnit.NANOSECONDS) == 0) {
                Thread.onSpinWait(); // an early return without the completion: wait again
            }
        } catch (RdmxException e) {
            throw new IllegalStateException(e);
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

    /** Producer: add a completion (another thread than the waiter, as an I/O thread or a posting thread). */
    @Signal
    public void producer() {
        cq.add(DONE);
    }
}
