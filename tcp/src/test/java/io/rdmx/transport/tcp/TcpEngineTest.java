package io.rdmx.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Connection;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.capability.Bells;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The tcp engine: one I/O thread per node on the JDK selector; a bad follower-reads value refused by name. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpEngineTest {
    private static Node open(String name) throws Exception {
        return new TcpFabric().open(NodeOptions.builder().name(name).build());
    }

    @Test
    void aNodeRunsOneSelectorThreadAndTwoNodesConnect() throws Exception {
        try (Node a = open("engine-a"); Node b = open("engine-b")) {
            assertTrue(a instanceof TcpNode, "not the selector engine's tcp node: " + a.getClass());
            assertTrue(a.address().matches("127\\.0\\.0\\.1:\\d+"), a.address());
            boolean ioThread = Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.getName().equals("rdmx-tcp-engine-a"));
            assertTrue(ioThread, "no I/O thread named rdmx-tcp-engine-a");
            Connection c = a.connect(b.address(), Duration.ofSeconds(10));
            Connection back = b.accept(Duration.ofSeconds(10));
            assertEquals("engine-b", c.peerName());
            assertEquals("engine-a", back.peerName());
            assertTrue(c.capability(Bells.class).isEmpty(), "tcp offers no bells");
        }
    }

    @Test
    void aBadFollowerReadsValueFailsNamingTheKeyAndTheValue() {
        String before = System.getProperty(TcpFabric.FOLLOWER_READS_PROP);
        System.setProperty(TcpFabric.FOLLOWER_READS_PROP, "sometimes");
        try {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> open("engine-bad-follow"));
            assertTrue(e.getMessage().contains(TcpFabric.FOLLOWER_READS_PROP + "=sometimes"), e.getMessage());
        } finally {
            if (before == null) {
                System.clearProperty(TcpFabric.FOLLOWER_READS_PROP);
            } else {
                System.setProperty(TcpFabric.FOLLOWER_READS_PROP, before);
            }
        }
    }
}
