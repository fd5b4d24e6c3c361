package io.rdmx.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.testsuite.FabricDouble;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code auto} decides by the traits providers declare, never by their names. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class FabricsChooseTest {
    private static Fabric fabric(String name, FabricTraits.Reach reach, int rank) {
        return FabricDouble.usable(name, reach, FabricTraits.Nic.NONE, rank);
    }

    private static final Fabric MEMORY = fabric("memory", FabricTraits.Reach.SAME_HOST, 100);
    private static final Fabric WIRE = fabric("wire", FabricTraits.Reach.NETWORK, 10);
    private static final Fabric FAST = fabric("fast", FabricTraits.Reach.NETWORK, 30);
    private static final Fabric BY_NAME_ONLY = fabric("named", FabricTraits.Reach.NETWORK, 0);
    private static final Fabric IN_PROCESS = fabric("inproc", FabricTraits.Reach.SAME_PROCESS, 50);
    private static final List<Fabric> ALL = List.of(WIRE, BY_NAME_ONLY, MEMORY, IN_PROCESS, FAST);

    @Test
    void theHighestRankedProviderThatReachesThePeerAndThatItServesWins() {
        assertEquals(MEMORY, Fabrics.choose(ALL, true, n -> true), "same host: the same-host provider");
        assertEquals(FAST, Fabrics.choose(ALL, false, n -> true), "another host: the best network provider");
        assertEquals(WIRE, Fabrics.choose(ALL, false, Set.of("wire", "memory")::contains), "only what the peer serves");
        assertEquals(FAST, Fabrics.choose(ALL, true, Set.of("wire", "fast")::contains),
            "a peer on this host that serves no same-host provider is reached over the network");
        assertNull(Fabrics.choose(ALL, false, Set.of("named", "inproc", "memory")::contains),
            "never a provider ranked 0, a same-process one, or a same-host one for another host");
    }

    @Test
    void whatAutoMayUseHereIsUsableAndRankedAboveZeroSameHostFirst() {
        for (Fabric f : Fabrics.autoCandidates()) {
            assertEquals(true, f.availability().usable(), f.name());
            assertEquals(true, f.traits().autoRank() > 0, f.name());
        }
        assertEquals("shm", Fabrics.choose(true, n -> true).name(), "on this module's class path: shm for this host");
    }

    /**
     * A tool run on one host per process: a name is taken as it is; {@code auto} on this module's class path (shm and
     * loopback, neither reaching another host) has nothing to offer and says so, naming what it found.
     */
    @Test
    void forAnotherHostTakesANameAsItIsAndAutoSaysWhenNothingReachesAnotherHost() throws Exception {
        assertEquals("shm", Fabrics.forAnotherHost("shm").name());
        RdmxException e = assertThrows(RdmxException.class, () -> Fabrics.forAnotherHost(Fabrics.AUTO));
        assertTrue(e.getMessage().startsWith("provider=auto: no usable provider reaches another host; usable here: ["),
            e.getMessage());
        assertTrue(e.getMessage().contains("shm"), e.getMessage());
    }

    @Test
    void traitsAreChecked() {
        assertThrows(IllegalArgumentException.class, () -> new FabricTraits(null, FabricTraits.Nic.NONE, 1));
        assertThrows(IllegalArgumentException.class,
            () -> new FabricTraits(FabricTraits.Reach.NETWORK, FabricTraits.Nic.IP_ROUTE, -1));
    }
}
