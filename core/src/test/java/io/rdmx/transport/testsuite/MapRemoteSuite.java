package io.rdmx.transport.testsuite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Access;
import io.rdmx.transport.Connection;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Region;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.capability.RemoteMapping;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The optional capability {@link RemoteMapping}: a provider either maps the peer's memory (shm, loopback) or does
 * not offer it (an empty {@link Connection#capability}). Kept apart from {@link TransportConformanceSuite};
 * subclasses say which they expect.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class MapRemoteSuite {
    /** Bound on every wait. */
    protected static final Duration WAIT = Duration.ofSeconds(10);
    private static final AtomicInteger SEQ = new AtomicInteger();
    private final List<Node> nodes = new ArrayList<>();
    /** The passive side. */
    protected Node server;
    /** client -> server. */
    protected Connection c2s;
    /** A remotely writable region of the server. */
    protected Region target;

    /** @return the provider under test */
    protected abstract Fabric fabric();

    /** @return true if the provider maps peer memory */
    protected abstract boolean mapsMemory();

    @BeforeEach
    void setUp() throws Exception {
        server = open("mserver");
        Node client = open("mclient");
        target = server.register(64 << 10, Access.ALL);
        c2s = client.connect(server.address(), WAIT);
        server.accept(WAIT);
    }

    /**
     * @param role a short name
     * @return an open node, closed after the test
     * @throws RdmxException on failure
     */
    protected Node open(String role) throws RdmxException {
        Node n = fabric().open(NodeOptions.builder().name(role + "-" + ProcessHandle.current().pid() + "-"
            + SEQ.incrementAndGet()).build());
        nodes.add(n);
        return n;
    }

    @AfterEach
    void tearDown() {
        for (Node n : nodes) {
            n.close();
        }
    }

    @Test
    void aViewSharesThePeersMemoryBothWays() throws Exception {
        assertEquals(mapsMemory(), c2s.capability(RemoteMapping.class).isPresent());
        if (!mapsMemory()) {
            return;
        }
        ByteBuffer view = mapping().mapRemote(target.descriptor());
        assertEquals(target.length(), view.capacity());
        assertEquals(ByteOrder.LITTLE_ENDIAN, view.order());
        view.putLong(4096, 0x1122334455667788L);
        assertEquals(0x1122334455667788L, target.buffer().getLong(4096), "a store through the view lands there");
        target.buffer().putLong(8, 42L);
        assertEquals(42L, view.getLong(8), "the peer's store is seen through the view");
    }

    @Test
    void anUnknownKeyIsRefusedNamingThePeerAndTheKey() throws Exception {
        RemoteRegion bogus = new RemoteRegion(0, 4096, target.remoteKey() ^ 0x10101);
        if (!mapsMemory()) {
            assertTrue(c2s.capability(RemoteMapping.class).isEmpty());
            return;
        }
        RdmxException e = assertThrows(RdmxException.class, () -> mapping().mapRemote(bogus));
        assertTrue(e.getMessage().contains("rkey=0x" + Integer.toHexString(bogus.remoteKey())), e.getMessage());
        assertTrue(e.getMessage().contains(server.name()) || e.getMessage().contains(server.address()),
            e.getMessage());
    }

    @Test
    void aDescriptorLongerThanTheRegionIsRefused() throws Exception {
        RemoteRegion longer = new RemoteRegion(0, target.length() + 4096, target.remoteKey());
        if (!mapsMemory()) {
            assertTrue(c2s.capability(RemoteMapping.class).isEmpty());
            return;
        }
        RdmxException e = assertThrows(RdmxException.class, () -> mapping().mapRemote(longer));
        assertTrue(e.getMessage().contains("length=" + longer.length()), e.getMessage());
    }

    @Test
    void aClosedConnectionMapsNothing() throws Exception {
        c2s.close();
        if (!mapsMemory()) {
            assertTrue(c2s.capability(RemoteMapping.class).isEmpty());
            return;
        }
        assertThrows(RdmxException.class, () -> mapping().mapRemote(target.descriptor()));
    }

    private RemoteMapping mapping() {
        return c2s.capability(RemoteMapping.class).orElseThrow();
    }
}
