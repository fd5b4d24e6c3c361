package io.rdmx.affinity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.channel.ChannelConfig;
import io.rdmx.channel.ChannelEngine;
import io.rdmx.spi.Platform;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.loopback.LoopbackFabric;
import io.rdmx.transport.loopback.LoopbackNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

/**
 * Core's communication threads bind through this module when a policy is set (this class runs in its own JVM:
 * the policy is read once, when core first asks for the platform hooks).
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class WiringTest {
    static {
        System.setProperty(AffinityHooks.POLICY_PROP, "O2OCC");
    }

    private static Integer tidOf(String comm) throws Exception {
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                if (Files.readString(t.resolve("comm")).trim().equals(comm)) {
                    return Integer.parseInt(t.getFileName().toString());
                }
            }
        }
        return null;
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    void channelNetworkThreadIsPinnedByThePolicy() throws Exception {
        assertTrue(Platform.hooks() instanceof AffinityHooks, "rdmx-affinity found through ServiceLoader");
        AffinityHooks hooks = (AffinityHooks) Platform.hooks();
        assertEquals("O2OCC", hooks.policy().toString());
        CpuTopology topo = CpuTopology.read(Path.of("/sys"));
        String expected = topo.allCores().get(0).threads().toString();
        try (LoopbackNode node = LoopbackFabric.openNode(NodeOptions.builder().name("w1").build());
             ChannelEngine engine = ChannelEngine.open(node, ChannelConfig.builder(1).build())) {
            Integer tid = null;
            for (int i = 0; i < 200 && tid == null; i++) {
                tid = tidOf("rdmx-channel-w1");
                Thread.sleep(10);
            }
            assertNotNull(tid, "network thread not found");
            String allowed = null;
            for (int i = 0; i < 200; i++) {
                allowed = PinningTest.allowedList(tid);
                if (allowed.equals(expected)) {
                    break;
                }
                Thread.sleep(10);
            }
            assertEquals(expected, allowed, "O2OCC puts the first communication thread on the first core");
            assertTrue(engine.isOpen());
        }
        List<String> info = hooks.describe();
        assertTrue(info.get(0).startsWith("Affinity: policy O2OCC (system property -Drdmx.affinity.policy)"),
            info.get(0));
        assertTrue(info.stream().anyMatch(l -> l.contains("rdmx.channel.batchThreshold")), String.valueOf(info));
    }
}
