package io.rdmx.bench.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.Pipe;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The descriptor the JDK opens on its first NIO use and keeps (libnio's pre-close socket, see
 * {@link ProcSelf#initJdkNio()}) must be in a chaos member's baseline, or every member reports it as a leak (as it
 * did on JDK 17). Each check runs in a fresh JVM of the JDK running the tests, where nothing has used NIO yet.
 */
class ProcSelfTest {
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aBaselineTakenAfterInitJdkNioSeesNoDescriptorFromClosedChannels() throws Exception {
        assertEquals(List.of(), child(true), "descriptors left by closed file, socket and pipe channels");
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void withoutItTheFirstChannelLeavesTheJdksPreCloseSocket() throws Exception {
        List<String> added = child(false);
        assertEquals(1, added.size(), "expected only the JDK's pre-close socket: " + added);
        assertTrue(added.get(0).matches("socket:\\[\\d+] \\(unix: .* 03 \\d+\\)"),
            "expected an unnamed connected unix socket: " + added);
    }

    /** Runs {@link #main} in a fresh JVM; returns the transport descriptors it reports as added. */
    private static List<String> child(boolean init) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(ProcSelfTest.class.getName());
        cmd.add(String.valueOf(init));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "child did not end: " + out);
        assertEquals(0, p.exitValue(), "child failed: " + out);
        List<String> added = new ArrayList<>();
        for (String l : out.split("\n")) {
            if (l.startsWith("ADDED ")) {
                added.add(l.substring("ADDED ".length()));
            }
        }
        return added;
    }

    /**
     * The child: baseline (after {@link ProcSelf#initJdkNio()} if args[0] is true), then opens and closes a file
     * channel, a socket channel and a pipe, and prints each transport descriptor added since the baseline.
     *
     * @param args {@code true} or {@code false}
     * @throws IOException on failure
     */
    public static void main(String[] args) throws IOException {
        if (Boolean.parseBoolean(args[0])) {
            ProcSelf.initJdkNio();
        }
        List<String> base = ProcSelf.fdTargets();
        Path f = Files.createTempFile("procself-", ".tmp");
        try (FileChannel c = FileChannel.open(f, StandardOpenOption.READ)) {
            c.size();
        } finally {
            Files.delete(f);
        }
        SocketChannel.open().close();
        Pipe p = Pipe.open();
        p.source().close();
        p.sink().close();
        for (String t : ProcSelf.added(base, ProcSelf.fdTargets())) {
            if (ProcSelf.transportFd(t, null)) {
                System.out.println("ADDED " + ProcSelf.describe(t));
            }
        }
    }
}
