package io.rdmx.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.channel.ChannelConfig;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.internal.CompletionQueueImpl;
import io.rdmx.transport.internal.LeakDetector;
import io.rdmx.transport.internal.RdmaDevices;
import io.rdmx.transport.shm.ShmFabric;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The configuration reference, docs/configuration.md, cannot drift from the code: every {@code rdmx.*} key the
 * main code of any module names is documented there, and every {@code rdmx.*} key documented there is named by
 * the code. Keys are found two ways: reflection over core's configuration classes (string constants whose
 * value starts with {@code rdmx.}) and a scan of every module's {@code src/main/java} for {@code "rdmx.*"}
 * literals (which also covers the modules core cannot see: affinity, verbs, disni, shuffle, bench). The same
 * holds for the environment variables named by {@code *_ENV} constants.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ConfigurationReferenceTest {
    /** A key in Java source: a string literal that is a whole dotted key. */
    private static final Pattern SOURCE_KEY = Pattern.compile(
        "\"(rdmx\\.[A-Za-z](?:[A-Za-z0-9_.]*[A-Za-z0-9_])?)\"");
    /** A key in the document: not part of a package name such as io.rdmx.channel. */
    private static final Pattern DOC_KEY = Pattern.compile("(?:^|[^A-Za-z0-9_.]|-D)(rdmx\\.[A-Za-z]"
        + "(?:[A-Za-z0-9_.]*[A-Za-z0-9_])?)");
    private static final List<Class<?>> CORE_CONFIG_CLASSES = List.of(NodeOptions.class, ChannelConfig.class,
        Fabrics.class, ShmFabric.class, LeakDetector.class, RdmaDevices.class, CompletionQueueImpl.class);

    static Path repoRoot() throws IOException {
        for (Path p = Paths.get("").toAbsolutePath(); p != null; p = p.getParent()) {
            Path pom = p.resolve("pom.xml");
            if (Files.isRegularFile(pom) && Files.isDirectory(p.resolve("core"))
                && Files.readString(pom, StandardCharsets.UTF_8).contains("<artifactId>rdmx-parent</artifactId>")) {
                return p;
            }
        }
        throw new IllegalStateException("no rdmx-parent pom.xml above " + Paths.get("").toAbsolutePath());
    }

    private static String reference() throws IOException {
        return Files.readString(repoRoot().resolve("docs/configuration.md"), StandardCharsets.UTF_8);
    }

    /** @return key -> where the code names it */
    static Map<String, String> keysInCode() throws IOException, IllegalAccessException {
        Map<String, String> keys = new TreeMap<>();
        for (Class<?> c : CORE_CONFIG_CLASSES) {
            for (Field f : c.getDeclaredFields()) {
                int m = f.getModifiers();
                if (Modifier.isStatic(m) && Modifier.isFinal(m) && f.getType() == String.class) {
                    f.setAccessible(true);
                    String v = (String) f.get(null);
                    if (v != null && v.startsWith("rdmx.") && v.length() > "rdmx.".length()) {
                        keys.putIfAbsent(v, c.getSimpleName() + "." + f.getName());
                    }
                }
            }
        }
        Path root = repoRoot();
        try (Stream<Path> modules = Files.list(root)) {
            for (Path module : (Iterable<Path>) modules::iterator) {
                Path src = module.resolve("src/main/java");
                if (!Files.isDirectory(src)) {
                    continue;
                }
                try (Stream<Path> files = Files.walk(src)) {
                    for (Path f : (Iterable<Path>) files::iterator) {
                        if (!f.toString().endsWith(".java")) {
                            continue;
                        }
                        Matcher m = SOURCE_KEY.matcher(Files.readString(f, StandardCharsets.UTF_8));
                        while (m.find()) {
                            keys.putIfAbsent(m.group(1), root.relativize(f).toString());
                        }
                    }
                }
            }
        }
        return keys;
    }

    @Test
    void everyKeyInTheCodeIsDocumented() throws Exception {
        Map<String, String> keys = keysInCode();
        assertTrue(keys.containsKey(NodeOptions.SECRET_PROP) && keys.containsKey("rdmx.affinity.policy")
            && keys.containsKey("rdmx.verbs.busyPoll"), "the scan finds keys of core, affinity and verbs: " + keys);
        Set<String> documented = keysInDocument(reference());
        Map<String, String> missing = new TreeMap<>(keys);
        missing.keySet().removeAll(documented);
        assertEquals(Map.of(), missing, "keys (and where the code names them) missing from docs/configuration.md");
    }

    @Test
    void everyDocumentedKeyExistsInTheCode() throws Exception {
        Set<String> unknown = new TreeSet<>(keysInDocument(reference()));
        unknown.removeAll(keysInCode().keySet());
        assertEquals(Set.of(), unknown, "keys in docs/configuration.md that no code reads");
    }

    @Test
    void everyEnvironmentVariableConstantIsDocumented() throws Exception {
        String doc = reference();
        Set<String> missing = new TreeSet<>();
        for (Class<?> c : CORE_CONFIG_CLASSES) {
            for (Field f : c.getDeclaredFields()) {
                int m = f.getModifiers();
                if (Modifier.isStatic(m) && Modifier.isFinal(m) && f.getType() == String.class
                    && f.getName().endsWith("_ENV")) {
                    f.setAccessible(true);
                    String v = (String) f.get(null);
                    if (!doc.contains("`" + v + "`")) {
                        missing.add(c.getSimpleName() + "." + f.getName() + "=" + v);
                    }
                }
            }
        }
        assertEquals(Set.of(), missing, "environment variables missing from docs/configuration.md");
    }

    @Test
    void documentKeysAreFoundButNotPackageNames() {
        assertEquals(Set.of("rdmx.a.b", "rdmx.c"), keysInDocument("`rdmx.a.b` (io.rdmx.channel) -Drdmx.c."));
    }

    static Set<String> keysInDocument(String text) {
        Set<String> keys = new TreeSet<>();
        Matcher m = DOC_KEY.matcher(text);
        while (m.find()) {
            keys.add(m.group(1));
        }
        return keys;
    }
}
