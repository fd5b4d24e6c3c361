package io.rdmx.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.channel.ChannelConfig;
import io.rdmx.channel.ChannelEngine;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One peer's HELLO asks for more ring memory than the victim JVM's direct memory holds (its own limits allow it, as
 * a node configured for big peers would): the allocation fails, that peer fails, and the node and its I/O thread
 * go on serving the next peer. Before, the {@link OutOfMemoryError} killed the tcp I/O thread: the node still said
 * it was open, and new peers got no answer at all.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DirectMemoryExhaustionTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    @Test
    void anAllocationFailureForOnePeerFailsThatPeerOnly() throws Exception {
        Process victim = new ProcessBuilder(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
            "-XX:MaxDirectMemorySize=48m", "-cp", System.getProperty("java.class.path"),
            DirectMemoryVictim.class.getName()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(victim.getInputStream(),
                 StandardCharsets.UTF_8))) {
            String first = lines.readLine();
            assertTrue(first != null && first.startsWith("address "), "victim said: " + first);
            String address = first.substring("address ".length());
            // 2 x 2 victim workers x 64 workers x 256 KiB = 64 MiB of rings for this one peer, above 48 MiB
            try (Node big = new TcpFabric().open(NodeOptions.builder().name("big").sendQueueDepth(1 << 16)
                     .recvQueueDepth(1 << 12).build());
                 ChannelEngine e = ChannelEngine.open(big, ChannelConfig.builder(64).ringCapacity(256 << 10).build())) {
                assertThrows(RdmxException.class, () -> e.connect(address, WAIT));
            }
            String refused = lines.readLine();
            assertTrue(refused != null && refused.startsWith("refused ") && refused.contains("'big'")
                && refused.contains("cannot allocate"), "victim said: " + refused);
            try (Node modest = new TcpFabric().open(NodeOptions.builder().name("modest").build());
                 ChannelEngine e = ChannelEngine.open(modest, ChannelConfig.builder(2).ringCapacity(256 << 10)
                     .build())) {
                assertTrue(e.connect(address, WAIT).isOpen(), "the next peer is served");
                assertEquals("accepted modest", lines.readLine());
            }
            victim.getOutputStream().close();
            assertTrue(victim.waitFor(30, TimeUnit.SECONDS), "the victim exits when told");
            assertEquals(0, victim.exitValue(), "the victim's node was still open");
        } finally {
            victim.destroyForcibly();
        }
    }
}
