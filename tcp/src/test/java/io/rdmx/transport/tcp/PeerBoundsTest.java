package io.rdmx.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.channel.ChannelConfig;
import io.rdmx.channel.ChannelEngine;
import io.rdmx.channel.PeerChannel;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What a peer can make a node allocate is bounded by the node's own configuration: the workers it announces, the
 * ring memory they imply for it, and the total of all peers. A refused peer fails alone; the next one is served.
 * Before these bounds a HELLO announcing 256 workers made a node allocate a 128 MiB pair region for that peer.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PeerBoundsTest {
    private static final AtomicInteger SEQ = new AtomicInteger();
    private static final Duration WAIT = Duration.ofSeconds(10);
    private final List<AutoCloseable> open = new ArrayList<>();

    private ChannelEngine engine(String role, ChannelConfig cfg) throws RdmxException {
        Node n = new TcpFabric().open(NodeOptions.builder().name(role + "-" + SEQ.incrementAndGet())
            .sendQueueDepth(1 << 16).recvQueueDepth(1 << 12).build());
        open.add(n);
        ChannelEngine e = ChannelEngine.open(n, cfg);
        open.add(e);
        return e;
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private static ChannelConfig.Builder small(int workers) {
        return ChannelConfig.builder(workers).ringCapacity(64 << 10);
    }

    /** The victim refuses the peer; its accept names why; then a modest peer is served as before. */
    private static void refusedThenServed(ChannelEngine victim, ChannelEngine attacker, ChannelEngine modest,
                                          String... reason) throws Exception {
        assertThrows(RdmxException.class, () -> attacker.connect(victim.node().address(), WAIT));
        RdmxException e = assertThrows(RdmxException.class, () -> victim.accept(WAIT));
        for (String r : reason) {
            assertTrue(e.getMessage().contains(r), e.getMessage());
        }
        long before = victim.ringMemory();
        PeerChannel ok = modest.connect(victim.node().address(), WAIT);
        assertTrue(ok.isOpen());
        assertEquals(modest.node().name(), victim.accept(WAIT).name());
        assertTrue(victim.ringMemory() > before, "the modest peer's rings are counted");
    }

    @Test
    void aPeerAnnouncingMoreWorkersThanAllowedIsRefusedBeforeAnyAllocation() throws Exception {
        ChannelEngine victim = engine("victim", small(2).build());
        ChannelEngine attacker = engine("attacker", small(256).build());
        ChannelEngine modest = engine("modest", small(2).build());
        refusedThenServed(victim, attacker, modest, "workers=256", ChannelConfig.MAX_PEER_WORKERS_PROP + "=64");
    }

    @Test
    void aPeerWhoseRingsWouldPassThePerPeerLimitIsRefused() throws Exception {
        // 2 x 2 workers x 16 workers x 64 KiB = 4 MiB, above a 1 MiB limit
        ChannelEngine victim = engine("victim", small(2).maxPeerMemory(1 << 20).build());
        ChannelEngine attacker = engine("attacker", small(16).build());
        ChannelEngine modest = engine("modest", small(2).build());
        refusedThenServed(victim, attacker, modest, "workers=16", ChannelConfig.MAX_PEER_MEMORY_PROP + "=1048576");
        assertEquals(2L * 2 * 2 * (64 << 10), victim.ringMemory(), "only the modest peer's rings are held");
    }

    @Test
    void peersTogetherCannotPassTheEngineTotal() throws Exception {
        // each 2x2 peer needs 512 KiB; the engine holds at most 1 MiB
        ChannelEngine victim = engine("victim", small(2).maxPeerMemory(512 << 10).maxRingMemory(1 << 20).build());
        engine("first", small(2).build()).connect(victim.node().address(), WAIT);
        victim.accept(WAIT);
        engine("second", small(2).build()).connect(victim.node().address(), WAIT);
        victim.accept(WAIT);
        assertEquals(1 << 20, victim.ringMemory());
        ChannelEngine third = engine("third", small(2).build());
        assertThrows(RdmxException.class, () -> third.connect(victim.node().address(), WAIT));
        RdmxException e = assertThrows(RdmxException.class, () -> victim.accept(WAIT));
        assertTrue(e.getMessage().contains(ChannelConfig.MAX_RING_MEMORY_PROP + "=1048576"), e.getMessage());
        assertEquals(1 << 20, victim.ringMemory(), "the refused peer holds nothing");
    }
}
