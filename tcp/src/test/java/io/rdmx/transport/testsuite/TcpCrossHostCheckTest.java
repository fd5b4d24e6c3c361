package io.rdmx.transport.testsuite;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link CrossHostCheck}, the two-node case the Soft-RoCE job runs between its two hosts, here on tcp between this
 * JVM and a {@link PeerProcess} whose output goes to a file, as across hosts: the peer is told to halt, not killed,
 * and must have died of it (exit 3) while this side saw its death.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TcpCrossHostCheckTest {
    @Test
    void theCaseRunsAgainstAPeerThatIsToldToDie(@TempDir Path dir) throws Exception {
        String name = "peer-" + ProcessHandle.current().pid();
        Path out = dir.resolve("peer.txt");
        String java = ProcessHandle.current().info().command().orElse("java");
        Process peer = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
            "-Drdmx.leakDetection=disabled", PeerProcess.class.getName(), "tcp", name, "60")
            .redirectOutput(out.toFile()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            CrossHostCheck.main(new String[] {"tcp", out.toString(), name, "60"});
            // no time asserted: the class's @Timeout bounds the wait for the peer's end
            assertEquals(3, peer.waitFor(), "the peer halted on the request: " + Files.readString(out));
        } finally {
            peer.destroyForcibly();
            peer.waitFor(10, TimeUnit.SECONDS);
        }
    }
}
