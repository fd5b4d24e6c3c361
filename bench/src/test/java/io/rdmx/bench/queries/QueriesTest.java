package io.rdmx.bench.queries;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.shuffle.ShuffleService;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The three TPC-C queries as SPMD plans agree with their single-process evaluation: in one process with several
 * workers, and across processes on every provider that runs here and on the sockets middleware.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class QueriesTest {
    private static final int WAREHOUSES = 1;
    private static final String[] EXPECTED = new String[4];
    private static Tpcc.Tables all;

    @BeforeAll
    static void reference() {
        all = Tpcc.generate(WAREHOUSES, 0, 1);
        for (int q = 1; q <= 3; q++) {
            EXPECTED[q] = TpccQueries.digest(TpccQueries.render(q, all));
        }
    }

    @Test
    void theDatabaseHasTpccSizesAndEveryQuerySelectsSomethingButNotEverything() {
        assertEquals(Tpcc.DISTRICTS * Tpcc.CUSTOMERS, all.cId.size());
        assertEquals(Tpcc.DISTRICTS * Tpcc.ORDERS, all.oId.size());
        assertEquals(Tpcc.DISTRICTS * (Tpcc.ORDERS - Tpcc.FIRST_NEW_ORDER + 1), all.noO.size());
        assertEquals(Tpcc.ITEMS, all.iId.size());
        assertTrue(all.olO.size() >= 5 * all.oId.size() && all.olO.size() <= 15 * all.oId.size());
        List<TpccQueries.Q1Row> q1 = TpccQueries.q1Reference(all);
        assertTrue(!q1.isEmpty() && q1.size() < 100, "Q1 groups: " + q1.size());
        for (TpccQueries.Q1Row r : q1) {
            assertTrue(r.revenue() > TpccQueries.Q1_MIN_REVENUE && r.o() >= Tpcc.FIRST_NEW_ORDER, r.toString());
        }
        long[] q2 = TpccQueries.q2Reference(all);
        assertTrue(q2[0] > 0 && q2[0] < q2[1] / 10, "promo share of Q2: " + q2[0] + " of " + q2[1]);
        assertEquals(15, TpccQueries.q3Reference(all).size(), "Q3 has one group per ol_number 1..15");
    }

    @Test
    void workersGenerateExactlyTheRowsOfTheWholeDatabase() {
        long rows = 0;
        long amount = 0;
        for (int g = 0; g < 3; g++) {
            Tpcc.Tables t = Tpcc.generate(WAREHOUSES, g, 3);
            rows += t.rows();
            for (int i = 0; i < t.olAmount.size(); i++) {
                amount += t.olAmount.get(i);
            }
        }
        long all2 = 0;
        for (int i = 0; i < all.olAmount.size(); i++) {
            all2 += all.olAmount.get(i);
        }
        assertEquals(all.rows(), rows);
        assertEquals(all2, amount);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Tpcc.generate(0, 0, 1));
        assertTrue(e.getMessage().contains("warehouses)=0"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> TpccQueries.render(4, all));
        assertTrue(e.getMessage().contains("query=4"), e.getMessage());
    }

    @Test
    void aWrongAnswerIsCaughtByTheDigest() {
        List<TpccQueries.Q3Row> q3 = new ArrayList<>(TpccQueries.q3Reference(all));
        TpccQueries.Q3Row r = q3.get(0);
        q3.set(0, new TpccQueries.Q3Row(r.number(), r.count(), r.quantity(), r.amount() + 1));
        assertNotEquals(EXPECTED[3], TpccQueries.digest(TpccQueries.renderQ3(q3)), "one cent off changes the digest");
    }

    @Test
    void plansAgreeWithTheReferenceInOneProcessWithThreeWorkers() throws Exception {
        int workers = 3;
        ExecutorService pool = Executors.newFixedThreadPool(workers);
        try (ShuffleService svc = Shuffles.open("loopback", 0, 1, workers, null, "qt" + System.nanoTime())) {
            Tpcc.Tables[] mine = new Tpcc.Tables[workers];
            for (int i = 0; i < workers; i++) {
                mine[i] = Tpcc.generate(WAREHOUSES, i, workers);
            }
            for (int run = 0; run < 2; run++) {
                for (int q = 1; q <= 3; q++) {
                    QueryPlans plan = new QueryPlans(svc, q, run);
                    List<Future<String>> parts = new ArrayList<>();
                    for (int i = 0; i < workers; i++) {
                        int local = i;
                        parts.add(pool.submit(() -> plan.run(svc.worker(local), mine[local])));
                    }
                    String answer = parts.get(0).get(120, TimeUnit.SECONDS);
                    for (int i = 1; i < workers; i++) {
                        assertEquals(null, parts.get(i).get(120, TimeUnit.SECONDS), "only worker 0 answers");
                    }
                    plan.release(svc);
                    assertEquals(TpccQueries.render(q, all), answer, "Q" + q + " run " + run);
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"shm", "tcp", "sockets"})
    void plansAgreeWithTheReferenceAcrossTwoProcessesOfTwoWorkers(String provider) throws Exception {
        try (QueriesRunner r = new QueriesRunner(provider, 2, 2, WAREHOUSES)) {
            assertEquals(all.rows(), r.rows());
            for (int q = 1; q <= 3; q++) {
                assertEquals(EXPECTED[q], r.run(q, 0, EXPECTED[q]).digest());
            }
            IllegalStateException wrong = assertThrows(IllegalStateException.class, () -> r.run(3, 1, "0:bad"));
            assertTrue(wrong.getMessage().contains("differs from the single-process evaluation"),
                wrong.getMessage());
        }
    }
}
