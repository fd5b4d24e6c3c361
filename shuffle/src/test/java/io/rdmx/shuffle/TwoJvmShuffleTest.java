package io.rdmx.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Two JVMs x 2 workers shuffle through {@link ShuffleCheck}; rank 0 verifies exactly-once delivery. */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class TwoJvmShuffleTest {
    @ParameterizedTest
    @ValueSource(strings = {"shm", "tcp", "auto"})
    void twoProcessesOfTwoWorkersDeliverEveryRowExactlyOnce(String provider) throws Exception {
        String members = String.join(",", Endpoints.freeLocal(2));
        String job = "j" + ProcessHandle.current().pid() + provider;
        String java = ProcessHandle.current().info().command().orElse("java");
        List<Process> procs = new ArrayList<>();
        try {
            for (int r = 0; r < 2; r++) {
                procs.add(new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                    "-Drdmx.leakDetection=disabled", ShuffleCheck.class.getName(), provider, Integer.toString(r),
                    members, "200000", job).redirectErrorStream(true).start());
            }
            List<String> outs = new ArrayList<>();
            for (Process p : procs) {
                assertTrue(p.waitFor(150, TimeUnit.SECONDS), "a shuffle process did not end");
                outs.add(read(p));
            }
            assertEquals(0, procs.get(0).exitValue(), outs.get(0));
            assertEquals(0, procs.get(1).exitValue(), outs.get(1));
            String want = provider.equals("tcp") ? "tcp" : "shm";
            assertTrue(outs.get(0).contains("SHUFFLE OK over " + want), outs.get(0));
            assertTrue(outs.get(1).contains("SHUFFLE DONE"), outs.get(1));
        } finally {
            for (Process p : procs) {
                p.destroyForcibly();
            }
        }
    }

    private static String read(Process p) throws IOException {
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }
}
