package io.rdmx.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.RdmxException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 42: with three processes, rank 1 is lost; rank 2, which waited on it, notices and closes its service at
 * once; rank 0, which had all it needed from rank 1 but still waits on rank 2, then failed naming rank 2 only
 * ({@code peer '...-r2' closed its channel engine}). The BYE of rank 2 now says why it closed, so rank 0's
 * failure names rank 1, the cause.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LostPeerCascadeTest {
    private static final long DEADLINE_NANOS = TimeUnit.SECONDS.toNanos(60);

    @ParameterizedTest
    @ValueSource(strings = {"loopback", "shm", "tcp"})
    void aRankThatClosesBecauseAnotherWasLostMakesTheOthersFailNamingTheLostOne(String provider) throws Exception {
        try (Cluster c = new Cluster(provider, 3, 1, b -> b)) {
            ShuffleService s0 = c.services.get(0);
            ShuffleService s1 = c.services.get(1);
            ShuffleService s2 = c.services.get(2);
            Worker w0 = s0.worker(0);
            Worker w1 = s1.worker(0);
            Worker w2 = s2.worker(0);
            // toRank2: rank 2 consumes it and waits on rank 1's end-of-stream, which never comes
            Exchange<RowView> toRank2 = s2.intExchange(50, Routing.gather(2));
            w2.consumeInts(toRank2, v -> true);
            // toRank0: rank 0 consumes it; rank 1 ends it, rank 2 never does
            Exchange<RowView> toRank0 = s0.intExchange(51, Routing.gather(0));
            w0.consumeInts(toRank0, v -> true);
            // sync: ended by every rank after rank 1 ended toRank0, so once rank 0 is done with it, it holds rank
            // 1's end of toRank0 too (one ring from rank 1's worker to rank 0's, in order)
            Exchange<RowView> sync0 = s0.intExchange(52, Routing.gather(0));
            w0.consumeInts(sync0, v -> true);
            Exchange<RowView> toRank0At1 = s1.intExchange(51, Routing.gather(0));
            Exchange<RowView> sync1 = s1.intExchange(52, Routing.gather(0));
            Exchange<RowView> sync2 = s2.intExchange(52, Routing.gather(0));
            offered(w1, () -> w1.offerFinish(toRank0At1));
            offered(w1, () -> w1.offerFinish(sync1));
            offered(w2, () -> w2.offerFinish(sync2));
            offered(w0, () -> w0.offerFinish(sync0));
            pollUntil(w0, () -> w0.done(sync0), "rank 0 never saw every end of the sync exchange");

            s1.close(); // rank 1 is lost to rank 2 (it did not end toRank2), not to rank 0 (it ended toRank0)
            ConnectionClosedException atRank2 = failureOf(w2);
            assertEquals(s2.config().nodeName(1), atRank2.peer(), atRank2.getMessage());
            s2.close(); // the survivor closes as soon as it notices

            ConnectionClosedException atRank0 = failureOf(w0);
            String m = atRank0.getMessage();
            assertEquals(s0.config().nodeName(2), atRank0.peer(), m);
            assertTrue(m.contains("'" + s0.config().nodeName(1) + "'"), "rank 0's failure names rank 1, the cause: "
                + m);
            assertTrue(m.contains("closed its channel engine because shuffle rank 2"), m);
        }
    }

    /** Polls until the worker fails; returns its failure (a lost peer). */
    private static ConnectionClosedException failureOf(Worker w) {
        long deadline = System.nanoTime() + DEADLINE_NANOS;
        while (true) {
            try {
                w.poll();
            } catch (RdmxException e) {
                assertInstanceOf(ConnectionClosedException.class, e, e.toString());
                return (ConnectionClosedException) e;
            }
            assertTrue(System.nanoTime() < deadline, "worker " + w.globalIndex() + " never failed");
            Thread.onSpinWait();
        }
    }

    private static void pollUntil(Worker w, BooleanSupplier done, String what) throws RdmxException {
        long deadline = System.nanoTime() + DEADLINE_NANOS;
        while (!done.getAsBoolean()) {
            w.poll();
            assertTrue(System.nanoTime() < deadline, what);
        }
    }

    /** Offers until taken, polling while back-pressured (nothing here fills a buffer). */
    private static void offered(Worker w, IntSupplier offer) throws RdmxException {
        long deadline = System.nanoTime() + DEADLINE_NANOS;
        int rc;
        while ((rc = offer.getAsInt()) != Worker.OK) {
            if (rc == Worker.CLOSED) {
                throw w.failure();
            }
            w.poll();
            assertTrue(System.nanoTime() < deadline, "worker " + w.globalIndex() + " stayed back-pressured");
        }
    }
}
