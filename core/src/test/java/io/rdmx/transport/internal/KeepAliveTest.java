package io.rdmx.transport.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.internal.KeepAlive.Decision;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The RDMA providers' keep-alive policy, on a fake clock: when to probe, when the peer is presumed dead. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class KeepAliveTest {
    private static final long MS = 1_000_000L;
    private static final long TIMEOUT = 2000 * MS;
    private static final long INTERVAL = TIMEOUT / 4;

    @Test
    void idleConnectionProbesEveryQuarterOfThePeerTimeout() {
        long t0 = 123_456_789L;
        KeepAlive k = new KeepAlive(TIMEOUT, t0);
        assertEquals(INTERVAL, k.interval());
        assertEquals(Decision.WAIT, k.decide(t0, false));
        assertEquals(Decision.WAIT, k.decide(t0 + INTERVAL - 1, false));
        assertEquals(Decision.PROBE, k.decide(t0 + INTERVAL, false));
        k.probePosted(t0 + INTERVAL);
        assertTrue(k.probeInFlight());
        // one probe at a time: no second one while the first is in flight
        assertEquals(Decision.WAIT, k.decide(t0 + 2 * INTERVAL, false));
        k.probeCompleted(t0 + INTERVAL + 5 * MS);
        assertFalse(k.probeInFlight());
        // the next interval counts from the completion
        assertEquals(Decision.WAIT, k.decide(t0 + 2 * INTERVAL + 5 * MS - 1, false));
        assertEquals(Decision.PROBE, k.decide(t0 + 2 * INTERVAL + 5 * MS, false));
    }

    @Test
    void outstandingSendsAreTheProbes() {
        long t0 = 0;
        KeepAlive k = new KeepAlive(TIMEOUT, t0);
        // however long the sends take, they are the probes (the hardware's retries report a dead peer)
        assertEquals(Decision.WAIT, k.decide(t0 + INTERVAL, true));
        assertEquals(Decision.WAIT, k.decide(t0 + 10 * TIMEOUT, true));
        // idle again: probe at once, the interval has long passed
        assertEquals(Decision.PROBE, k.decide(t0 + 10 * TIMEOUT, false));
    }

    @Test
    void aProbeUnansweredForThePeerTimeoutMeansThePeerIsSilent() {
        long t0 = 42;
        KeepAlive k = new KeepAlive(TIMEOUT, t0);
        long posted = t0 + INTERVAL;
        assertEquals(Decision.PROBE, k.decide(posted, false));
        k.probePosted(posted);
        assertEquals(Decision.WAIT, k.decide(posted + TIMEOUT, false));
        assertEquals(Decision.PEER_SILENT, k.decide(posted + TIMEOUT + 1, false));
        // user sends posted meanwhile do not excuse the silent probe
        assertEquals(Decision.PEER_SILENT, k.decide(posted + TIMEOUT + 1, true));
    }

    @Test
    void theClockMayWrap() {
        long t0 = Long.MAX_VALUE - INTERVAL / 2;
        KeepAlive k = new KeepAlive(TIMEOUT, t0);
        assertEquals(Decision.WAIT, k.decide(t0 + INTERVAL - 1, false));
        long posted = t0 + INTERVAL; // past Long.MAX_VALUE: negative
        assertTrue(posted < 0);
        assertEquals(Decision.PROBE, k.decide(posted, false));
        k.probePosted(posted);
        assertEquals(Decision.WAIT, k.decide(posted + TIMEOUT, false));
        assertEquals(Decision.PEER_SILENT, k.decide(posted + TIMEOUT + 1, false));
    }

    @Test
    void theClockMayReadZero() {
        // a probe posted at nanoTime 0 is still in flight (no 0-means-none sentinel)
        KeepAlive k = new KeepAlive(TIMEOUT, -INTERVAL);
        assertEquals(Decision.PROBE, k.decide(0, false));
        k.probePosted(0);
        assertTrue(k.probeInFlight());
        assertEquals(Decision.PEER_SILENT, k.decide(TIMEOUT + 1, false));
    }

    @Test
    void reasonsNameThePeerAndTheTimeout() {
        KeepAlive k = new KeepAlive(TIMEOUT, 0);
        String silent = k.silentPeerReason("server-1", "10.0.0.2:4791");
        assertTrue(silent.contains("'server-1'") && silent.contains("10.0.0.2:4791") && silent.contains("2000 ms"),
            silent);
        String unreachable = KeepAlive.unreachableReason("server-1", "10.0.0.2:4791", "ibv_wc_status 12");
        assertTrue(unreachable.contains("'server-1'") && unreachable.contains("ibv_wc_status 12"), unreachable);
    }

    @Test
    void aNonPositiveTimeoutIsRejectedWithItsValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new KeepAlive(0, 0));
        assertTrue(e.getMessage().contains("peerTimeoutNanos=0"), e.getMessage());
    }
}
