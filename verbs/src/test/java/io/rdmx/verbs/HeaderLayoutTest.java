package io.rdmx.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every struct offset, size and constant of {@link Native} equals what the installed rdma-core headers say:
 * a C program prints each expression and the values are compared one by one. Skipped, with the reason, where
 * gcc or the headers (Debian: libibverbs-dev, librdmacm-dev) are missing.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HeaderLayoutTest {
    @TempDir
    Path dir;

    private static boolean onPath(String tool) {
        for (String p : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (Files.isExecutable(Path.of(p, tool))) {
                return true;
            }
        }
        return false;
    }

    @Test
    void offsetsSizesAndConstantsMatchTheInstalledHeaders() throws Exception {
        Assumptions.assumeTrue(onPath("gcc"), "gcc not on PATH: cannot check struct layouts");
        Assumptions.assumeTrue(Files.exists(Path.of("/usr/include/infiniband/verbs.h"))
            && Files.exists(Path.of("/usr/include/rdma/rdma_cma.h")),
            "rdma-core headers missing (install libibverbs-dev and librdmacm-dev): cannot check struct layouts");
        Map<String, Long> want = Native.checked();
        StringBuilder c = new StringBuilder("#include <stdio.h>\n#include <stddef.h>\n#include <infiniband/verbs.h>\n"
            + "#include <rdma/rdma_cma.h>\n#include <fcntl.h>\n#include <poll.h>\n#include <errno.h>\n"
            + "#include <sys/eventfd.h>\nint main(void) {\n");
        for (String expr : want.keySet()) {
            c.append("  printf(\"%ld\\n\", (long) (").append(expr).append("));\n");
        }
        c.append("  return 0;\n}\n");
        Path src = dir.resolve("layout.c");
        Files.writeString(src, c.toString());
        Path exe = dir.resolve("layout");
        Process cc = new ProcessBuilder("gcc", "-o", exe.toString(), src.toString()).redirectErrorStream(true)
            .start();
        String ccOut = new String(cc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(cc.waitFor(60, TimeUnit.SECONDS) && cc.exitValue() == 0, "gcc failed:\n" + ccOut);
        Process run = new ProcessBuilder(exe.toString()).start();
        List<String> lines = List.of(new String(run.getInputStream().readAllBytes(), StandardCharsets.UTF_8)
            .trim().split("\n"));
        assertTrue(run.waitFor(10, TimeUnit.SECONDS));
        assertEquals(want.size(), lines.size());
        Map<String, Long> got = new LinkedHashMap<>();
        int i = 0;
        for (String expr : want.keySet()) {
            got.put(expr, Long.parseLong(lines.get(i++).trim()));
        }
        List<String> wrong = new ArrayList<>();
        for (Map.Entry<String, Long> e : want.entrySet()) {
            if (!e.getValue().equals(got.get(e.getKey()))) {
                wrong.add(e.getKey() + ": java=" + e.getValue() + " header=" + got.get(e.getKey()));
            }
        }
        assertTrue(wrong.isEmpty(), "layouts that differ from the headers:\n" + String.join("\n", wrong));
    }
}
