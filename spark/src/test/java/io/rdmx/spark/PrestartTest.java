package io.rdmx.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The executor's servers opened ahead of the first task: taken once, or closed when nobody takes them. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class PrestartTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    /** Counts its closes. */
    private static final class Res implements AutoCloseable {
        final AtomicInteger closes = new AtomicInteger();
        final CountDownLatch closed = new CountDownLatch(1);

        @Override
        public void close() {
            closes.incrementAndGet();
            closed.countDown();
        }
    }

    @Test
    void takeHandsOverTheOpenedResourceAndAbandonThenLeavesItOpen() throws Exception {
        Res r = new Res();
        Prestart<Res> p = Prestart.start("test", () -> r);
        assertSame(r, p.take(WAIT));
        p.abandon();
        assertEquals(0, r.closes.get(), "a taken resource is the taker's: abandon must not close it");
    }

    @Test
    void aFailedOpenIsTakenAsItsCause() {
        Prestart<Res> p = Prestart.start("test", () -> {
            throw new IOException("no shm on this host");
        });
        ExecutionException e = assertThrows(ExecutionException.class, () -> p.take(WAIT));
        assertTrue(e.getCause() instanceof IOException && e.getCause().getMessage().contains("no shm"),
            e.toString());
    }

    @Test
    void aSecondTakeIsRefused() throws Exception {
        Prestart<Res> p = Prestart.start("servers", Res::new);
        p.take(WAIT);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> p.take(WAIT));
        assertTrue(e.getMessage().contains("servers"), e.getMessage());
    }

    @Test
    void abandonedBeforeItOpensIsClosedWhenItOpens() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        Res r = new Res();
        Prestart<Res> p = Prestart.start("test", () -> {
            release.await();
            return r;
        });
        p.abandon();
        assertEquals(0, r.closes.get());
        release.countDown();
        assertTrue(r.closed.await(WAIT.toMillis(), TimeUnit.MILLISECONDS), "the late resource was not closed");
        assertEquals(1, r.closes.get());
        assertThrows(IllegalStateException.class, () -> p.take(WAIT));
    }

    @Test
    void abandonedAfterItOpenedIsClosed() throws Exception {
        Res r = new Res();
        CountDownLatch opened = new CountDownLatch(1);
        Prestart<Res> p = Prestart.start("test", () -> {
            opened.countDown();
            return r;
        });
        assertTrue(opened.await(WAIT.toMillis(), TimeUnit.MILLISECONDS));
        p.abandon();
        p.abandon();
        assertTrue(r.closed.await(WAIT.toMillis(), TimeUnit.MILLISECONDS), "the unused resource was not closed");
        assertEquals(1, r.closes.get(), "closed once however often it is abandoned");
    }

    /**
     * The manager's take: a first take that was interrupted (the executor's first task killed while it waited)
     * claims the resource; the next task's take gets null and opens its own servers, instead of a refusal that
     * failed every later task of the executor.
     */
    @Test
    void aTakeAfterAnInterruptedTakeIsNullNotARefusal() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        Res r = new Res();
        Prestart<Res> p = Prestart.start("servers", () -> {
            release.await();
            return r;
        });
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, () -> p.takeUnlessTaken(WAIT));
        assertEquals(null, p.takeUnlessTaken(WAIT));
        release.countDown();
        assertTrue(r.closed.await(WAIT.toMillis(), TimeUnit.MILLISECONDS), "the unclaimed resource was not closed");
    }

    @Test
    void aResourceThatOpensAfterATimedOutTakeIsClosed() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        Res r = new Res();
        Prestart<Res> p = Prestart.start("test", () -> {
            release.await();
            return r;
        });
        // the opener cannot finish before release: the take must time out, whatever its wait
        assertThrows(TimeoutException.class, () -> p.take(Duration.ofMillis(20)));
        release.countDown();
        assertTrue(r.closed.await(WAIT.toMillis(), TimeUnit.MILLISECONDS), "the late resource was not closed");
    }
}
