package io.rdmx.transport.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The settings helper: booleans, choices and sizes, each refused with an error that names the key and value. */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class SystemPropertiesTest {
    private enum Mode {
        FAST, SLOW
    }

    @Test
    void aBooleanIsTrueOrFalseInAnyCase() {
        assertTrue(SystemProperties.parseBool("k", " TRUE "));
        assertFalse(SystemProperties.parseBool("k", "false"));
    }

    @Test
    void anythingElseIsRefusedNamingTheKeyAndValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> SystemProperties.parseBool("rdmx.x", "yes"));
        assertEquals("rdmx.x=yes must be true or false", e.getMessage());
    }

    private static String label(Mode m) {
        return m.name().toLowerCase(Locale.ROOT);
    }

    @Test
    void aChoiceIsFoundByItsLabelAndAnUnknownOneListsThemAll() {
        assertEquals(Mode.SLOW, SystemProperties.choice("k", " Slow", Mode.values(), SystemPropertiesTest::label));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> SystemProperties.choice("rdmx.mode", "medium", Mode.values(), SystemPropertiesTest::label));
        assertEquals("rdmx.mode=medium must be one of fast, slow", e.getMessage());
    }

    @Test
    void aSizeTakesABinarySuffix() {
        assertEquals(4096, SystemProperties.size("k", "4096", 1, Long.MAX_VALUE));
        assertEquals(64 << 10, SystemProperties.size("k", "64k", 1, Long.MAX_VALUE));
        assertEquals(2L << 20, SystemProperties.size("k", " 2M ", 1, Long.MAX_VALUE));
        assertEquals(3L << 30, SystemProperties.size("k", "3g", 1, Long.MAX_VALUE));
    }

    @Test
    void aSizeThatIsNoNumberOrOutOfRangeIsRefusedNamingTheKey() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> SystemProperties.size("rdmx.size", "lots", 1, 10));
        assertEquals("rdmx.size=lots is not a number", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> SystemProperties.size("rdmx.size", "1k", 1, 10));
        assertEquals("rdmx.size=1k out of range [1, 10]", e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
            () -> SystemProperties.size("rdmx.size", "9999999999999g", 1, Long.MAX_VALUE));
        assertTrue(e.getMessage().startsWith("rdmx.size=9999999999999g out of range"), e.getMessage());
    }
}
