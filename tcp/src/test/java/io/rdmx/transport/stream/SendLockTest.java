package io.rdmx.transport.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The tcp send lock's owed ACK: the event loop never waits for the lock, and whatever it owes is written once,
 * carried by the holder or alone. (The race itself is the jcstress test {@code SendLockOwedAckTest}.)
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SendLockTest {
    private final List<Long> alone = new ArrayList<>();
    private final SendLock lock = new SendLock(alone::add);

    @Test
    void aFreeLockWritesTheAckAtOnce() {
        lock.owe(3);
        assertEquals(List.of(3L), alone);
        assertEquals(0, lock.owed());
    }

    @Test
    void owingDoesNotWaitForAHolderThatWritesItOnUnlock() throws Exception {
        lock.lock();
        // another thread owes while this one holds the lock: it must return without the lock
        CompletableFuture.runAsync(() -> lock.owe(5)).get(10, TimeUnit.SECONDS);
        assertEquals(List.of(), alone, "written while another thread held the lock");
        assertEquals(5, lock.owed());
        lock.unlock();
        assertEquals(List.of(5L), alone, "the owed ACK was not written when the holder let go");
        assertEquals(0, lock.owed());
    }

    @Test
    void aHolderCarriesTheHighestOwedAckOnce() throws Exception {
        lock.lock();
        CompletableFuture.runAsync(() -> {
            lock.owe(5);
            lock.owe(7);
        }).get(10, TimeUnit.SECONDS);
        assertEquals(7, lock.takeOwed(), "cumulative: only the highest sequence number counts");
        assertEquals(0, lock.takeOwed());
        lock.unlock();
        assertEquals(List.of(), alone, "a carried ACK was written again alone");
    }

    @Test
    void anAckGivenBackGoesAloneOnUnlock() {
        lock.lock();
        lock.restoreOwed(0);
        assertEquals(0, lock.owed());
        lock.restoreOwed(9);
        lock.unlock();
        assertEquals(List.of(9L), alone);
    }
}
