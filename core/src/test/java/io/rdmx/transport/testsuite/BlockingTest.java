package io.rdmx.transport.testsuite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The helper itself: it must pass only for a thread parked in the named method, and say why otherwise. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class BlockingTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private volatile boolean release;

    private int parkUntilReleased() {
        while (!release) {
            LockSupport.park(this);
        }
        return 7;
    }

    @Test
    void seesAThreadParkedInTheNamedMethod() throws Exception {
        Blocking.Call<Integer> call = Blocking.start("parker", this::parkUntilReleased);
        Blocking.awaitBlockedIn(call, "parkUntilReleased", WAIT);
        Blocking.awaitBlockedIn(call, "BlockingTest.parkUntilReleased", WAIT);
        assertFalse(call.result().isDone());
        release = true;
        LockSupport.unpark(call.thread());
        assertEquals(7, call.result().get(10, TimeUnit.SECONDS));
    }

    @Test
    void failsForACallThatReturnsWithoutBlocking() {
        Blocking.Call<Integer> call = Blocking.start("quick", () -> 42);
        AssertionError e = assertThrows(AssertionError.class, () -> Blocking.awaitBlockedIn(call, "call", WAIT));
        assertTrue(e.getMessage().contains("ended without blocking in call"), e.getMessage());
        assertTrue(e.getMessage().contains("result 42"), e.getMessage());
    }

    @Test
    void failsForACallThatThrowsWithoutBlocking() throws Exception {
        Blocking.Call<Integer> call = Blocking.start("thrower", () -> {
            throw new IllegalStateException("boom");
        });
        AssertionError e = assertThrows(AssertionError.class, () -> Blocking.awaitBlockedIn(call, "call", WAIT));
        assertTrue(e.getMessage().contains("IllegalStateException: boom"), e.getMessage());
        assertInstanceOf(IllegalStateException.class, call.failure(WAIT));
    }

    @Test
    void aThreadParkedElsewhereDoesNotCount() throws Exception {
        CountDownLatch never = new CountDownLatch(1);
        Blocking.Call<Boolean> call = Blocking.start("latch", () -> never.await(30, TimeUnit.SECONDS));
        Blocking.awaitTrue("the thread parks in the latch",
            () -> call.thread().getState() == Thread.State.TIMED_WAITING, WAIT);
        AssertionError e = assertThrows(AssertionError.class,
            () -> Blocking.awaitBlockedIn(call, "await", Duration.ofMillis(200)),
            "CountDownLatch.await is a JDK method, not an rdmx one");
        assertTrue(e.getMessage().contains("not blocked in await"), e.getMessage());
        assertTrue(e.getMessage().contains("CountDownLatch.await"), "names where it is parked: " + e.getMessage());
        call.thread().interrupt();
        assertInstanceOf(InterruptedException.class, call.failure(WAIT));
    }

    @Test
    void awaitTrueReturnsOnceTheStateIsReachedAndFailsNamingItOtherwise() throws Exception {
        Blocking.awaitTrue("already true", () -> true, WAIT);
        AssertionError e = assertThrows(AssertionError.class,
            () -> Blocking.awaitTrue("the flag is set", () -> false, Duration.ofMillis(50)));
        assertTrue(e.getMessage().contains("the flag is set"), e.getMessage());
    }

    @Test
    void failureOfACallThatReturnsIsAnError() throws Exception {
        Blocking.Call<String> call = Blocking.start("ok", () -> "fine");
        AssertionError e = assertThrows(AssertionError.class, () -> call.failure(WAIT));
        assertTrue(e.getMessage().contains("returned fine instead of throwing"), e.getMessage());
    }
}
