package io.rdmx.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Adapters, the CLI and affinity choose providers by what they are ({@link Fabric#traits()}, {@link Fabrics#choose}),
 * not by name: a new provider is then chosen by the traits it declares, without a change anywhere else. This scans
 * their main sources for a string literal that is a provider's name; none may have one (comments may name them).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ProviderNamesTest {
    /** Modules whose main code must not name a provider. */
    private static final List<String> MODULES = List.of("shuffle", "spark", "spark43", "affinity", "rpc", "rpc-hadoop",
        "cli");
    private static final Pattern NAME = Pattern.compile("\"(loopback|shm|tcp|verbs|disni)\"");

    @Test
    void noAdapterNamesAProviderOutsideTheListedFiles() throws IOException {
        Path root = Path.of(System.getProperty("user.dir")).getParent();
        List<String> found = new ArrayList<>();
        int files = 0;
        for (String module : MODULES) {
            Path src = root.resolve(module).resolve("src/main/java");
            if (!Files.isDirectory(src)) {
                continue;
            }
            try (Stream<Path> walk = Files.walk(src)) {
                for (Path f : walk.filter(p -> p.toString().endsWith(".java")).toList()) {
                    files++;
                    String rel = root.relativize(f).toString().replace('\\', '/');
                    List<String> lines = Files.readAllLines(f);
                    for (int i = 0; i < lines.size(); i++) {
                        String line = lines.get(i).trim();
                        if (line.startsWith("*") || line.startsWith("//")) {
                            continue; // documentation may name them
                        }
                        Matcher m = NAME.matcher(line);
                        if (m.find()) {
                            found.add(rel + ":" + (i + 1) + ": " + line);
                        }
                    }
                }
            }
        }
        assertTrue(files > 50, "the adapters' sources were found under " + root + " (" + files + " files)");
        assertEquals(List.of(), found, "adapters name providers: use Fabric.traits() and Fabrics.choose");
    }
}
