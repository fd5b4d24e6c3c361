package io.rdmx.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The Soft-RoCE job's report: the one-device pair always, the two-host pair beside it when measured. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class VerbsReportTest {
    private static final String ONE_DEVICE = "PERFTEST_WRITE_BW 55.4\nPERFTEST_WRITE_LAT 9.2\nRDMX_WRITE_BW 52.0\n"
        + "RDMX_WRITE_LAT 11.8\nBW_SIZE 65536\nLAT_SIZE 64\n";
    private static final String TWO_HOSTS = "HOSTS_PERFTEST_WRITE_BW 40.0\nHOSTS_PERFTEST_WRITE_LAT 30.0\n"
        + "HOSTS_RDMX_WRITE_BW 36.0\nHOSTS_RDMX_WRITE_LAT 33.0\n";

    @TempDir
    Path dir;

    private String report(String figures) throws Exception {
        Path f = dir.resolve("figures.txt");
        Files.writeString(f, figures);
        VerbsReport.run(f, dir);
        return Files.readString(dir.resolve("verbs.json"));
    }

    private static int count(String json, String what) {
        Matcher m = Pattern.compile(Pattern.quote(what)).matcher(json);
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }

    @Test
    void theTwoHostPairGoesBesideTheOneDevicePairWithItsOwnComparisons() throws Exception {
        String json = report(ONE_DEVICE + TWO_HOSTS);
        assertTrue(json.contains("\"WRITE bandwidth 65536 B between two hosts vs ib_write_bw\""), json);
        assertTrue(json.contains("\"WRITE latency 64 B between two hosts vs ib_write_lat\""), json);
        assertTrue(json.contains("\"ratio\" : 0.9,"), json); // 36.0 / 40.0
        assertTrue(json.contains("\"ratio\" : 0.9090909090909091,"), json); // 30.0 / 33.0, lower is better
        assertTrue(json.contains("\"WRITE bandwidth 65536 B vs ib_write_bw\""), json);
        assertEquals(4, count(json, "\"target\""), json);
        assertTrue(json.contains("\"two hosts\""), json);
        assertTrue(Files.readString(dir.resolve("verbs.svg")).contains("between two hosts"));
    }

    @Test
    void withoutTheTwoHostFiguresTheReportIsTheOneDevicePairAlone() throws Exception {
        String json = report(ONE_DEVICE);
        assertEquals(2, count(json, "\"target\""), json);
        assertFalse(json.contains("two hosts"), json);
    }

    @Test
    void partOfTheTwoHostFiguresIsRefusedNamingThem() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> report(ONE_DEVICE + "HOSTS_RDMX_WRITE_BW 36.0\n"));
        assertTrue(e.getMessage().contains("HOSTS_PERFTEST_WRITE_LAT"), e.getMessage());
    }
}
