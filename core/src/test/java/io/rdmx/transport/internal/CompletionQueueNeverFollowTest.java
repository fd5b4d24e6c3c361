package io.rdmx.transport.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.capability.InputFollowing;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link CompletionQueueImpl#neverFollow}: the thread named there sleeps on the queue and never reads the input
 * itself (a channel engine's network thread), while any other waiter does.
 */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
class CompletionQueueNeverFollowTest {
    /** An input that counts the waits on it and returns at once with nothing read. */
    private static final class CountingInput implements InputFollowing {
        final AtomicInteger awaits = new AtomicInteger();

        @Override
        public int awaitInput(long nanos) {
            awaits.incrementAndGet();
            return 0;
        }

        @Override
        public void wakeInput() {
            // nothing waits
        }
    }

    @Test
    void aWaiterReadsTheInputItselfUnlessItIsTheThreadThatNeverFollows() throws Exception {
        CompletionQueueImpl cq = new CompletionQueueImpl("never-follow");
        CountingInput in = new CountingInput();
        cq.followInput(() -> in);

        assertEquals(0, cq.await(c -> { }, 16, 20, TimeUnit.MILLISECONDS));
        assertTrue(in.awaits.get() > 0, "an ordinary waiter did not read the input itself");

        cq.neverFollow(Thread.currentThread());
        in.awaits.set(0);
        assertEquals(0, cq.await(c -> { }, 16, 20, TimeUnit.MILLISECONDS));
        assertEquals(0, in.awaits.get(), "the thread that never follows waited on the input");
    }
}
