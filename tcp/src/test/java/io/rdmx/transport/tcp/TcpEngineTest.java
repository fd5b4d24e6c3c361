package io.rdmx.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Connection;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.stream.StreamNode;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link TcpFabric#IO_PROP}: the selector engine by default, Netty on request, a bad value refused by name. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpEngineTest {
    private static Node openWith(String engine, String name) throws Exception {
        String before = System.getProperty(TcpFabric.IO_PROP);
        if (engine == null) {
            System.clearProperty(TcpFabric.IO_PROP);
        } else {
            System.setProperty(TcpFabric.IO_PROP, engine);
        }
        try {
            return new TcpFabric().open(NodeOptions.builder().name(name).build());
        } finally {
            if (before == null) {
                System.clearProperty(TcpFabric.IO_PROP);
            } else {
                System.setProperty(TcpFabric.IO_PROP, before);
            }
        }
    }

    @Test
    void theDefaultEngineIsTheJdkSelectorAndTalksToTheNettyOne() throws Exception {
        try (Node sel = openWith(null, "engine-sel"); Node netty = openWith("netty", "engine-netty")) {
            assertFalse(sel instanceof StreamNode, "the default engine is not the selector: " + sel.getClass());
            assertTrue(netty instanceof StreamNode, "netty was not chosen: " + netty.getClass());
            assertTrue(sel.address().matches("127\\.0\\.0\\.1:\\d+"), sel.address());
            boolean ioThread = Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.getName().equals("rdmx-tcp-engine-sel"));
            assertTrue(ioThread, "no I/O thread named rdmx-tcp-engine-sel");
            // the wire format is the same: the two engines connect to each other
            Connection c = sel.connect(netty.address(), Duration.ofSeconds(10));
            Connection back = netty.accept(Duration.ofSeconds(10));
            assertEquals("engine-netty", c.peerName());
            assertEquals("engine-sel", back.peerName());
            assertEquals(null, c.openBell(), "tcp offers no bells");
        }
    }

    @Test
    void aBadEngineNameFailsNamingTheKeyAndTheValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> openWith("epoll-please", "engine-bad"));
        assertTrue(e.getMessage().contains(TcpFabric.IO_PROP + "=epoll-please"), e.getMessage());
        assertTrue(e.getMessage().contains("selector or netty"), e.getMessage());
    }

    @Test
    void aBadFollowerReadsValueFailsNamingTheKeyAndTheValue() {
        String before = System.getProperty(TcpFabric.FOLLOWER_READS_PROP);
        System.setProperty(TcpFabric.FOLLOWER_READS_PROP, "sometimes");
        try {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> openWith(null, "engine-bad-follow"));
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
