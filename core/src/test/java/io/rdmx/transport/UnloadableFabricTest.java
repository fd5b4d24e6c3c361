package io.rdmx.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ServiceConfigurationError;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A provider this JVM cannot load is listed unusable under its name, with the reason and the fix. */
@Timeout(10)
class UnloadableFabricTest {
    @Test
    void aProviderCompiledForANewerJavaNamesTheJavaItNeeds() {
        Fabric f = UnloadableFabric.of(new UnsupportedClassVersionError("io/rdmx/verbs/VerbsFabric has been compiled"
            + " by a more recent version of the Java Runtime (class file version 66.0), this version of the Java"
            + " Runtime only recognizes class file versions up to 61.0"));
        assertEquals("verbs", f.name());
        assertFalse(f.availability().usable());
        assertTrue(f.availability().reason().contains("io.rdmx.verbs.VerbsFabric needs Java 22+"),
            f.availability().reason());
        RdmxException e = assertThrows(RdmxException.class, () -> f.open(NodeOptions.builder().name("x").build()));
        assertTrue(e.getMessage().contains("verbs provider unusable here"), e.getMessage());
    }

    @Test
    void aProviderThatFailsToInstantiateNamesItsCause() {
        Fabric f = UnloadableFabric.of(new ServiceConfigurationError("io.rdmx.transport.Fabric: Provider"
            + " com.example.FooFabric could not be instantiated", new IllegalStateException("no device")));
        assertEquals("foo", f.name());
        assertTrue(f.availability().reason().contains("com.example.FooFabric cannot be loaded")
            && f.availability().reason().contains("no device"), f.availability().reason());
    }

    @Test
    void theRealProvidersStillLoad() {
        assertTrue(Fabrics.all().stream().anyMatch(f -> f.name().equals("shm") && !(f instanceof UnloadableFabric)));
    }
}
