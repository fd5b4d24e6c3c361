package io.rdmx.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.FabricTraits;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.testsuite.FabricDouble;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RdmxEndpointsTest {
    private static final String AD = "shm=/dev/shm/rdmx-u/node-a\ntcp=10.0.0.2:4711";

    /** A provider as auto sees it: its name and traits (the verbs module is not on this module's class path). */
    private static Fabric fabric(String name, FabricTraits.Reach reach, FabricTraits.Nic nic, int rank) {
        return FabricDouble.usable(name, reach, nic, rank);
    }

    private static final Fabric SHM = Fabrics.get("shm");
    private static final Fabric TCP = Fabrics.get("tcp");
    private static final Fabric VERBS = fabric("verbs", FabricTraits.Reach.NETWORK, FabricTraits.Nic.RDMA_DEVICE, 30);

    @Test
    void autoPicksShmOnTheSameHostAndTcpElsewhere() {
        List<Fabric> here = List.of(SHM, TCP);
        List<Fabric> withVerbs = List.of(SHM, TCP, VERBS);
        assertEquals("shm=/dev/shm/rdmx-u/node-a", RdmxEndpoints.choose("auto", "h1", "h1", "3", AD, here));
        assertEquals("tcp=10.0.0.2:4711", RdmxEndpoints.choose("auto", "h1", "h2", "3", AD, here));
        assertEquals("tcp=10.0.0.2:4711", RdmxEndpoints.choose("auto", "h1", "h2", "3", AD, withVerbs),
            "verbs only when the peer serves it");
        assertEquals("verbs=10.0.0.2:18515", RdmxEndpoints.choose("auto", "h1", "h2", "3",
            AD + "\nverbs=10.0.0.2:18515", withVerbs));
        assertEquals("tcp=10.0.0.2:4711", RdmxEndpoints.choose("auto", "h1", "h2", "3",
            AD + "\nverbs=10.0.0.2:18515", here), "verbs only when this executor serves it too");
        assertEquals("tcp=10.0.0.2:4711", RdmxEndpoints.choose("auto", "h1", "h1", "3", "tcp=10.0.0.2:4711", here),
            "a peer without shm is fetched over tcp even on the same host");
        IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
            () -> RdmxEndpoints.choose("auto", "h1", "h2", "3", "shm=/dev/shm/rdmx-u/node-a", here));
        assertTrue(none.getMessage().contains("executor 3 on h2 serves [shm]"), none.getMessage());
    }

    @Test
    void aNamedProviderIsUsedForEveryPeerOrFailsNamingThePeer() {
        assertEquals("tcp=10.0.0.2:4711", RdmxEndpoints.choose("tcp", "h1", "h1", "3", AD, List.of(TCP)));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> RdmxEndpoints.choose("verbs", "h1", "h2", "3", AD, List.of(SHM, TCP, VERBS)));
        assertEquals("executor 3 on h2 does not serve provider=verbs (spark.rdmx.provider=verbs); it serves [shm, tcp]",
            e.getMessage());
    }

    @Test
    void advertisementsParseInOrder() {
        assertEquals(List.of("shm", "tcp"), List.copyOf(RdmxEndpoints.parse(AD).keySet()));
        assertEquals(Map.of(), RdmxEndpoints.parse("garbage\n=x\ny="));
    }

    @Test
    void autoServesOnShmAndTcpAndAnExecutorFetchesFromAnother() throws Exception {
        BlockFetcherTest.MapSource source = new BlockFetcherTest.MapSource();
        byte[] block = source.put(1, 2, 3, 10_000, 7);
        RdmxShuffleConf conf = RdmxShuffleConf.from(Map.of(RdmxShuffleConf.CHUNK_BYTES_KEY, "4096",
            RdmxShuffleConf.PEER_TIMEOUT_KEY, "5000")::get);
        try (RdmxEndpoints a = RdmxEndpoints.start(conf, "127.0.0.1", source);
             RdmxEndpoints b = RdmxEndpoints.start(conf, "127.0.0.1", new BlockFetcherTest.MapSource())) {
            assertEquals(List.of("shm", "tcp", "read-shm", "read-tcp"),
                List.copyOf(RdmxEndpoints.parse(a.advertisement()).keySet()));
            for (String target : List.of(b.choose("127.0.0.1", "a", a.advertisement()),
                b.choose("other-host", "a", a.advertisement()))) {
                try (BlockFetcher f = new BlockFetcher(b::call, b::release, List.of(new FetchBlock("a", target,
                    1, 2, 0, 3, 100)), 1 << 20, 4, b.fetchChunkBytes(), Duration.ofSeconds(5))) {
                    FetchedBlock got = f.next();
                    assertArrayEquals(block, got.stream().readAllBytes(), target);
                    assertTrue(got.chunks().stream().allMatch(ByteBuffer::isDirect), "answers land off the heap");
                    f.release(got);
                }
            }
            // 10,000 bytes in chunks of 4096: three buffers, taken again by the second fetch, all back in the pool
            assertEquals(3, b.buffers().allocated());
            assertEquals(3, b.buffers().pooled());
            assertTrue(b.choose("127.0.0.1", "a", a.advertisement()).startsWith("shm="));
            assertTrue(b.choose("other-host", "a", a.advertisement()).startsWith("tcp="));
            assertEquals(2L * block.length, a.bytesServed());
            assertEquals(0, b.call("nowhere=x", ByteBuffer.allocate(1), Duration.ofSeconds(1)).handle((x, t) ->
                t == null ? 1 : 0).get());
        }
    }

    /**
     * A fetch asks for no more than an answer that arrives in one record of the block channel's ring (so it is
     * copied once, from the ring into an off-heap buffer, never reassembled in a heap array).
     */
    @Test
    void aFetchAsksForAtMostWhatOneRingRecordCarries() {
        RdmxShuffleConf big = RdmxShuffleConf.from(Map.of(RdmxShuffleConf.CHUNK_BYTES_KEY, "4m",
            RdmxShuffleConf.RING_BYTES_KEY, "65536")::get);
        int chunk = RdmxEndpoints.fetchChunkBytes(big);
        int record = RdmxEndpoints.channelConfig(big).maxRecordPayload();
        assertEquals(record - io.rdmx.rpc.RpcFrameDescriptor.RESPONSE_HEADER_LENGTH - FetchProtocol.ANSWER_HEADER,
            chunk);
        RdmxShuffleConf small = RdmxShuffleConf.from(Map.of(RdmxShuffleConf.CHUNK_BYTES_KEY, "8192")::get);
        assertEquals(8192, RdmxEndpoints.fetchChunkBytes(small), "a smaller chunk is kept as configured");
    }

    /**
     * With {@code spark.authenticate} every node of an executor takes the application's secret: an executor of the
     * same application fetches over shm and tcp; a fetch client of another application (another secret) or without
     * a secret is refused at the handshake on both and gets no byte of the block.
     */
    @Test
    void withTheApplicationsSecretOnlyItsOwnExecutorsFetch() throws Exception {
        BlockFetcherTest.MapSource source = new BlockFetcherTest.MapSource();
        byte[] block = source.put(1, 2, 3, 5_000, 7);
        RdmxShuffleConf conf = RdmxShuffleConf.from(Map.of(RdmxShuffleConf.CHUNK_BYTES_KEY, "4096",
            RdmxShuffleConf.PEER_TIMEOUT_KEY, "2000")::get);
        try (RdmxEndpoints a = RdmxEndpoints.start(conf, "127.0.0.1", source, "app-1-secret");
             RdmxEndpoints same = RdmxEndpoints.start(conf, "127.0.0.1", new BlockFetcherTest.MapSource(),
                 "app-1-secret");
             RdmxEndpoints other = RdmxEndpoints.start(conf, "127.0.0.1", new BlockFetcherTest.MapSource(),
                 "app-2-secret");
             RdmxEndpoints none = RdmxEndpoints.start(conf, "127.0.0.1", new BlockFetcherTest.MapSource(), null)) {
            for (String host : List.of("127.0.0.1", "other-host")) {
                String target = same.choose(host, "a", a.advertisement());
                assertArrayEquals(block, fetch(same, target), target);
                for (RdmxEndpoints stranger : List.of(other, none)) {
                    BlockFetchException e = assertThrows(BlockFetchException.class, () -> fetch(stranger, target),
                        target + ": a peer without the application's secret got the block");
                    assertTrue(e.getMessage().contains("from executor a at " + target), e.getMessage());
                }
            }
            assertEquals(2L * block.length, a.bytesServed(), "only the application's own executor was served");
        }
    }

    private static byte[] fetch(RdmxEndpoints client, String target) throws Exception {
        try (BlockFetcher f = new BlockFetcher(client::call, client::release, List.of(new FetchBlock("a",
            target, 1, 2, 0, 3, 5_000)), 1 << 20, 4, client.fetchChunkBytes(), Duration.ofSeconds(2))) {
            FetchedBlock got = f.next();
            byte[] bytes = got.stream().readAllBytes();
            f.release(got);
            return bytes;
        }
    }
}
