package io.rdmx.cli.doctor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Parsing {@code /proc/self/limits} and {@code /proc/self/status}. */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class LimitsReaderTest {
    private static final String LIMITS = "Limit                     Soft Limit           Hard Limit           Units\n"
        + "Max cpu time              unlimited            unlimited            seconds\n"
        + "Max locked memory         8388608              unlimited            bytes\n";

    @Test
    void parsesMemlockSoftAndHard() throws IOException {
        LimitsReader.Limit l = LimitsReader.parseMemlock(LIMITS);
        assertEquals(8388608, l.soft());
        assertEquals(LimitsReader.Limit.UNLIMITED, l.hard());
    }

    @Test
    void namesAMissingOrMalformedLine() {
        IOException none = assertThrows(IOException.class, () -> LimitsReader.parseMemlock("Max cpu time 1 1 s\n"));
        assertTrue(none.getMessage().contains("no 'Max locked memory' line"), none.getMessage());
        IOException bad = assertThrows(IOException.class, () -> LimitsReader.parseMemlock(
            "Max locked memory         lots                 lots                 bytes\n"));
        assertTrue(bad.getMessage().contains("value=lots"), bad.getMessage());
    }

    @Test
    void parsesIdentityAndCapIpcLock() throws IOException {
        Identity id = Identity.parse("Uid:\t1000\t1001\t1000\t1000\nGid:\t100\t100\t100\t100\nGroups:\t27 44 \n"
            + "CapEff:\t0000000000004000\n");
        assertEquals(1001, id.uid(), "the effective uid, second field");
        assertEquals(java.util.Set.of(100, 27, 44), id.gids());
        assertTrue(id.ipcLock());
        assertEquals(false, Identity.parse("Uid:\t0\t0\t0\t0\nCapEff:\t000001ffffffbfff\n").ipcLock(),
            "bit 14 clear");
    }
}
