package io.rdmx.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Idle strategies by name: {@code rdmx.channel.idle}, the builder, and an explicit spin count over both. */
@Timeout(10)
class ChannelConfigIdleTest {
    @AfterEach
    void clear() {
        System.clearProperty(ChannelConfig.IDLE_PROP);
        System.clearProperty(ChannelConfig.SPINS_PROP);
    }

    @Test
    void parkIsTheDefault() {
        ChannelConfig c = ChannelConfig.builder(1).build();
        assertEquals(ChannelConfig.Idle.PARK, c.idle());
        assertEquals(0, c.spinsBeforePark());
    }

    @Test
    void eachNameSelectsItsStrategy() {
        for (ChannelConfig.Idle i : ChannelConfig.Idle.values()) {
            System.setProperty(ChannelConfig.IDLE_PROP, i.label().toUpperCase(java.util.Locale.ROOT));
            ChannelConfig c = ChannelConfig.builder(1).build();
            assertEquals(i, c.idle());
            assertEquals(i.spins(), c.spinsBeforePark());
            assertEquals(i, ChannelConfig.builder(1).idle(i).build().idle());
        }
    }

    @Test
    void anExplicitSpinCountOverridesTheName() {
        System.setProperty(ChannelConfig.IDLE_PROP, "busy-spin");
        System.setProperty(ChannelConfig.SPINS_PROP, "500");
        ChannelConfig c = ChannelConfig.builder(1).build();
        assertEquals(500, c.spinsBeforePark());
        assertEquals(ChannelConfig.Idle.SPIN_THEN_PARK, c.idle());
        assertEquals(0, ChannelConfig.builder(1).spinsBeforePark(0).build().spinsBeforePark());
    }

    @Test
    void badValuesFailNamingKeyAndValue() {
        System.setProperty(ChannelConfig.IDLE_PROP, "yield");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> ChannelConfig.builder(1).build());
        assertTrue(e.getMessage().contains("rdmx.channel.idle=yield") && e.getMessage().contains("busy-spin"),
            e.getMessage());
        System.clearProperty(ChannelConfig.IDLE_PROP);
        System.setProperty(ChannelConfig.SPINS_PROP, "lots");
        e = assertThrows(IllegalArgumentException.class, () -> ChannelConfig.builder(1).build());
        assertTrue(e.getMessage().contains("rdmx.channel.spinsBeforePark=lots"), e.getMessage());
        System.clearProperty(ChannelConfig.SPINS_PROP);
        e = assertThrows(IllegalArgumentException.class, () -> ChannelConfig.builder(1).spinsBeforePark(-1).build());
        assertTrue(e.getMessage().contains("spinsBeforePark=-1"), e.getMessage());
        assertEquals(ChannelConfig.Idle.PARK, ChannelConfig.builder(1).build().idle(), "nothing else broke");
    }
}
