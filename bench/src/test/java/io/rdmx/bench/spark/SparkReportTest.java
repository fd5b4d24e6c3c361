package io.rdmx.bench.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@link SparkReport} on hand-made runs: the authenticated runs' comparisons, and runs that are not what they say. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SparkReportTest {
    @TempDir
    Path dir;

    /** Writes one run of a manager: both jobs with the given wall time, the stages at 0.9 of it. */
    private void run(String manager, String shuffleManager, boolean authenticate, long wallMs) throws IOException {
        StringBuilder out = new StringBuilder("shuffleManager=" + shuffleManager + "\nauthenticate=" + authenticate
            + "\n");
        for (String job : new String[] {"SortBy", "GroupBy"}) {
            out.append(String.format(Locale.ROOT, "bench {\"job\":\"%s\",\"wallMs\":%d,\"shuffleStageMs\":%d,"
                + "\"fetchWaitMs\":5,\"executorCpuMs\":%d}%n", job, wallMs, wallMs * 9 / 10, wallMs / 2));
        }
        Files.writeString(dir.resolve(manager + "-1.out"), out);
    }

    private static final String RDMX = "io.rdmx.spark.RdmxShuffleManager";
    private static final String SORT = "org.apache.spark.shuffle.sort.SortShuffleManager";

    private Map<String, Double> report(String managers) throws IOException {
        Files.writeString(dir.resolve("params"), "pairs 1000\n" + (managers == null ? "" : "managers " + managers
            + "\n") + "partitions 8\nrounds 1\n");
        Path results = dir.resolve("results");
        SparkReport.run(dir, true, results);
        Map<String, Double> ratios = new HashMap<>();
        JsonNode doc = new ObjectMapper().readTree(results.resolve("spark.json").toFile());
        for (JsonNode c : doc.get("comparisons")) {
            ratios.put(c.get("name").asText(), c.get("ratio").asDouble());
        }
        return ratios;
    }

    @Test
    void theAuthenticatedRunsAreComparedWithTheDefaultAuthenticatedAndWithRdmxWithout() throws Exception {
        run("default", SORT, false, 2000);
        run("rdmx", RDMX, false, 1000);
        run("default-auth", SORT, true, 4000);
        run("rdmx-auth", RDMX, true, 1250);
        Map<String, Double> r = report("default rdmx default-auth rdmx-auth");
        assertEquals(2.0, r.get("SortBy job wall time"), 1e-9);
        assertEquals(3.2, r.get("SortBy authenticated (rdmx-auth vs default-auth): job wall time"), 1e-9);
        assertEquals(0.8, r.get("GroupBy cost of authentication (rdmx-auth vs rdmx): job wall time"), 1e-9);
        assertEquals(0.8, r.get("GroupBy cost of authentication (rdmx-auth vs rdmx): shuffle stages"), 1e-9);
    }

    @Test
    void withoutAuthenticatedRunsTheReportIsAsBefore() throws Exception {
        run("default", SORT, false, 2000);
        run("rdmx", RDMX, false, 1000);
        Map<String, Double> r = report(null);
        assertEquals(2.0, r.get("GroupBy job wall time"), 1e-9);
        assertFalse(r.keySet().stream().anyMatch(k -> k.contains("auth")), r::toString);
    }

    @Test
    void aRunNamedAuthenticatedThatWasNotIsRefusedNamingIt() throws Exception {
        run("default", SORT, false, 2000);
        run("rdmx", RDMX, false, 1000);
        run("default-auth", SORT, true, 4000);
        run("rdmx-auth", RDMX, false, 1250);
        IOException e = assertThrows(IOException.class, () -> report("default rdmx default-auth rdmx-auth"));
        assertTrue(e.getMessage().contains("rdmx-auth-1.out") && e.getMessage().contains("spark.authenticate=false"),
            e.getMessage());
    }

    @Test
    void aRunNamedRdmxThatRanTheDefaultManagerIsRefused() throws Exception {
        run("default", SORT, false, 2000);
        run("rdmx", SORT, false, 1000);
        IOException e = assertThrows(IOException.class, () -> report("default rdmx"));
        assertTrue(e.getMessage().contains("rdmx-1.out"), e.getMessage());
    }

    /** Writes one run with serving CPU: both jobs moved 2 GiB, serving threads used {@code servingMs}. */
    private void servingRun(String manager, String shuffleManager, double servingMs, long fetchWaitMs, long reads)
        throws IOException {
        StringBuilder out = new StringBuilder("shuffleManager=" + shuffleManager + "\nauthenticate=false\n");
        for (String job : new String[] {"SortBy", "GroupBy"}) {
            out.append(String.format(Locale.ROOT, "bench {\"job\":\"%s\",\"wallMs\":1000,\"shuffleStageMs\":900,"
                + "\"fetchWaitMs\":%d,\"executorCpuMs\":500,\"remoteBytes\":%d,\"servingCpuMs\":%.3f,"
                + "\"servingIdleCpuMs\":100,\"readFetches\":%d,\"rpcFetches\":%d}%n", job, fetchWaitMs, 2L << 30,
                servingMs, reads,
                reads >= 0 ? 10 - reads : -1));
        }
        Files.writeString(dir.resolve(manager + "-1.out"), out);
    }

    /**
     * The serving executors' CPU per GiB fetched, side by side: READ (rdmx) against the RPC fetch (rdmx-rpc) and
     * Spark's default, the RPC fetch against the default, and the RPC fetch's fetch wait.
     */
    @Test
    void servingCpuPerGibIsComparedForReadRpcAndTheDefault() throws Exception {
        servingRun("default", SORT, 3000, 40, -1);
        servingRun("rdmx", RDMX, 200, 10, 10);
        servingRun("rdmx-rpc", RDMX, 4000, 20, 0);
        Map<String, Double> r = report("default rdmx rdmx-rpc");
        // 0.1 s/GiB with READ, 2 s/GiB with the RPC fetch, 1.5 s/GiB with the default; 0.05 s/GiB of each idle
        assertEquals(20.0, r.get("GroupBy serving CPU per GiB fetched, idle included (READ vs RPC fetch)"), 1e-9);
        assertEquals(15.0, r.get("SortBy serving CPU per GiB fetched, idle included (READ vs Spark's default)"), 1e-9);
        assertEquals(0.75, r.get("SortBy serving CPU per GiB fetched, idle included (RPC fetch vs Spark's default)"),
            1e-9);
        assertEquals(39.0, r.get("GroupBy serving CPU per GiB fetched (READ vs RPC fetch)"), 1e-9);
        assertEquals(29.0, r.get("SortBy serving CPU per GiB fetched (READ vs Spark's default)"), 1e-9);
        assertEquals(2.0, r.get("SortBy shuffle fetch wait (RPC fetch vs Spark's default)"), 1e-9);
        assertEquals(2.0, r.get("SortBy shuffle fetch wait (READ vs RPC fetch)"), 1e-9);
    }

    @Test
    void anRpcRunThatReadBlocksIsRefused() throws Exception {
        servingRun("default", SORT, 3000, 40, -1);
        servingRun("rdmx", RDMX, 200, 10, 10);
        servingRun("rdmx-rpc", RDMX, 4000, 20, 3);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> report("default rdmx rdmx-rpc"));
        assertTrue(e.getMessage().contains("spark.rdmx.fetch=rpc was not in effect"), e.getMessage());
    }

    /** A job whose serving CPU is no more than the idle rate's share is not compared above idle (floors' ratio). */
    @Test
    void servingCpuUnderTheIdleShareIsNotCompared() throws Exception {
        servingRun("default", SORT, 3000, 40, -1);
        servingRun("rdmx", RDMX, 90, 10, 10);
        servingRun("rdmx-rpc", RDMX, 4000, 20, 0);
        Map<String, Double> r = report("default rdmx rdmx-rpc");
        assertFalse(r.containsKey("SortBy serving CPU per GiB fetched (READ vs RPC fetch)"), r::toString);
        assertTrue(r.containsKey("SortBy serving CPU per GiB fetched, idle included (READ vs RPC fetch)"));
    }
}
