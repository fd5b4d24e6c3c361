package io.rdmx.transport.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Completion;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Status;
import io.rdmx.transport.testsuite.Blocking;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link CompletionQueueImpl#await} spinning without end ({@code spinsBeforePark=Integer.MAX_VALUE}): the spin
 * obeys the timeout and close, and sees a completion added meanwhile.
 */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
class CompletionQueueImplTest {
    private static final int FOREVER = Integer.MAX_VALUE;

    @Test
    void aSpinningAwaitEndsOnItsTimeout() throws Exception {
        CompletionQueueImpl cq = new CompletionQueueImpl("spinner", FOREVER);
        assertEquals(0, cq.await(c -> { }, 16, 50, TimeUnit.MILLISECONDS));
    }

    @Test
    void aSpinningAwaitEndsWhenTheQueueCloses() throws Exception {
        CompletionQueueImpl cq = new CompletionQueueImpl("spinner", FOREVER);
        Blocking.Call<Integer> call = Blocking.start("await", () -> cq.await(c -> { }, 16, 60, TimeUnit.SECONDS));
        Blocking.awaitTrue("await spinning", () -> spinningInAwait(call.thread()), Duration.ofSeconds(10));
        cq.close();
        Throwable t = call.failure(Duration.ofSeconds(10));
        assertTrue(t instanceof RdmxException, String.valueOf(t));
        assertTrue(t.getMessage().contains("'spinner'"), t.getMessage());
    }

    @Test
    void aSpinningAwaitTakesACompletionAddedMeanwhile() throws Exception {
        CompletionQueueImpl cq = new CompletionQueueImpl("spinner", FOREVER);
        List<Completion> got = new ArrayList<>();
        Blocking.Call<Integer> call = Blocking.start("await", () -> cq.await(got::add, 16, 60, TimeUnit.SECONDS));
        Blocking.awaitTrue("await spinning", () -> spinningInAwait(call.thread()), Duration.ofSeconds(10));
        Completion c = new Completion(null, 7L, Opcode.SEND, Status.SUCCESS, 0, 0, false, null);
        cq.add(c);
        assertEquals(1, call.result().get(10, TimeUnit.SECONDS));
        assertEquals(List.of(c), got);
    }

    /** Runnable inside await: spinning, since this queue parks only after Integer.MAX_VALUE polls. */
    private static boolean spinningInAwait(Thread t) {
        if (t.getState() != Thread.State.RUNNABLE) {
            return false;
        }
        for (StackTraceElement f : t.getStackTrace()) {
            if (f.getClassName().equals(CompletionQueueImpl.class.getName()) && f.getMethodName().equals("await")) {
                return true;
            }
        }
        return false;
    }

    @Test
    void negativeSpinsAreRefusedNamingTheValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> new CompletionQueueImpl("x", -1));
        assertTrue(e.getMessage().contains("spinsBeforePark=-1"), e.getMessage());
    }
}
