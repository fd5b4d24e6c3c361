package io.rdmx.transport.shm;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.selector.SocketHandler;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The timers of a dialing connection ({@link SocketHandler#tick}): nothing is timed while its TCP connect is still
 * pending (the dialer's own timeout bounds that), and once connected a silent peer fails the dial after the peer
 * timeout. Before, the I/O thread's first tick after a dial was registered could fail a connect still in
 * progress as "peer silent for ... ms" (its last read counted from 0): ChaosTest's tcp rounds failed so in about
 * one set-up in ten.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ShmHandlerTimerTest {
    private static final NodeOptions OPTIONS = NodeOptions.builder().name("timer-node")
        .peerTimeout(Duration.ofMillis(1500)).build();
    private static final long PEER_TIMEOUT = TimeUnit.MILLISECONDS.toNanos(1500);

    @Test
    void aPendingConnectIsNotTimedByThePeerTimeout() throws Exception {
        ShmHandlerFuzzTest.FuzzNode node = new ShmHandlerFuzzTest.FuzzNode(OPTIONS, false);
        try {
            CompletableFuture<AbstractConnection> dial = new CompletableFuture<>();
            ShmHandlerFuzzTest.FakeIo io = new ShmHandlerFuzzTest.FakeIo();
            SocketHandler h = new SocketHandler(node, io, true, ShmHandlerFuzzTest.DIALED, dial);
            io.handler = h;
            // a monotonic clock far from 0, as System.nanoTime() is on a machine up for a while
            long now = 7_000_000_000_000L;
            h.tick(now);
            h.tick(now + 10 * PEER_TIMEOUT);
            assertFalse(dial.isDone(), "a dial whose connect is pending was failed by a timer: " + dial);
            assertFalse(io.closed, "a dial whose connect is pending was closed by a timer");

            long connected = now + 11 * PEER_TIMEOUT;
            h.start(connected);
            h.tick(connected + PEER_TIMEOUT / 2);
            assertFalse(dial.isDone(), "failed before the peer timeout: " + dial);
            h.tick(connected + PEER_TIMEOUT + 1);
            assertTrue(dial.isDone(), "a connected peer that stays silent past the peer timeout was not reported");
            ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, dial::get);
            assertTrue(e.getCause().getMessage().contains("silent for 1500 ms"), e.getCause().getMessage());
        } finally {
            node.close();
        }
    }
}
