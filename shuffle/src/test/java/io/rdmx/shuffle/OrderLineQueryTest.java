package io.rdmx.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.shuffle.examples.OrderLineQuery;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The TPC-C-like join + group-by + gather plan across processes equals the same query in one process. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class OrderLineQueryTest {
    @ParameterizedTest
    @ValueSource(strings = {"shm", "tcp", "loopback", "auto", "sockets"})
    void distributedResultEqualsTheSingleProcessResult(String t) throws Exception {
        OrderLineQuery.Scale scale = new OrderLineQuery.Scale(6, 60, 30);
        Map<Long, OrderLineQuery.Group> want = OrderLineQuery.reference(scale);
        assertEquals(15, want.size(), "ol_number 1..15");
        assertTrue(want.values().stream().mapToLong(OrderLineQuery.Group::count).sum() > 1000);
        try (Cluster c = new Cluster(t, 3, 2, b -> b)) {
            List<Map<Long, OrderLineQuery.Group>> got = c.spmd(s -> OrderLineQuery.run(s, scale, 100));
            assertEquals(want, got.get(0), "rank 0 holds worker 0, the gather target");
            assertTrue(got.get(1).isEmpty() && got.get(2).isEmpty());
        }
    }
}
