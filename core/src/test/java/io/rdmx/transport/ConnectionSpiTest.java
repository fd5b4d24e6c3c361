package io.rdmx.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.capability.Capability;
import java.io.IOException;
import java.lang.reflect.Method;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The public {@link Connection} interface carries the verbs model only: the transport's fast-path hooks live behind
 * {@link Connection#capability(Class)} ({@code io.rdmx.transport.capability}), and the lookup reaches nothing but
 * the capability interfaces. Which provider offers which capability is checked by the conformance suite.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ConnectionSpiTest {
    /** The hooks that were on {@link Connection} and are transport internals. */
    private static final List<String> HOOKS = List.of("awaitInput", "wakeInput", "releaseInput", "cork", "uncork",
        "openBell", "ringBell", "completionHandler", "mapRemote", "canMapRemote");

    @Test
    void theConnectionInterfaceDeclaresNoFastPathHook() {
        Set<String> names = Arrays.stream(Connection.class.getMethods()).map(Method::getName)
            .collect(Collectors.toCollection(TreeSet::new));
        for (String hook : HOOKS) {
            assertFalse(names.contains(hook), "Connection still declares " + hook + ": " + names);
        }
        assertTrue(names.contains("capability"), "no capability lookup on Connection: " + names);
    }

    @Test
    void everyHookIsOnExactlyOneCapability() {
        for (String hook : HOOKS) {
            if (hook.equals("canMapRemote")) {
                continue; // said by whether RemoteMapping is offered
            }
            long on = Capability.ALL.stream()
                .filter(c -> Arrays.stream(c.getMethods()).anyMatch(m -> m.getName().equals(hook))).count();
            assertEquals(1, on, hook + " is on " + on + " capability interfaces");
        }
    }

    @Test
    void theListOfCapabilitiesHoldsEveryInterfaceOfThePackage() throws IOException, URISyntaxException {
        Path dir = Paths.get(Capability.class.getProtectionDomain().getCodeSource().getLocation().toURI())
            .resolve(Capability.class.getPackageName().replace('.', '/'));
        Set<String> found = new HashSet<>();
        try (Stream<Path> files = Files.list(dir)) {
            files.map(f -> f.getFileName().toString())
                .filter(n -> n.endsWith(".class") && !n.contains("$") && !n.equals("package-info.class"))
                .map(n -> n.substring(0, n.length() - ".class".length()))
                .filter(n -> !n.equals(Capability.class.getSimpleName()))
                .forEach(found::add);
        }
        Set<String> listed = Capability.ALL.stream().map(Class::getSimpleName).collect(Collectors.toSet());
        assertEquals(found, listed, "Capability.ALL and the package's interfaces differ");
    }

    @Test
    void theLookupTakesCapabilityInterfacesOnly() throws NoSuchMethodException {
        Method m = Connection.class.getMethod("capability", Class.class);
        String bound = m.getTypeParameters()[0].getBounds()[0].getTypeName();
        assertEquals(Capability.class.getName(), bound, "capability(Class) must take capability interfaces only");
    }
}
