package io.rdmx.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RdmxShuffleConfTest {
    @Test
    void defaults() {
        RdmxShuffleConf c = RdmxShuffleConf.from(k -> null);
        assertEquals("auto", c.provider());
        assertEquals(Duration.ofMillis(RdmxShuffleConf.PEER_TIMEOUT_DEFAULT_MS), c.peerTimeout());
        assertEquals(48L << 20, c.maxBytesInFlight());
        assertEquals(64, c.maxReqsInFlight());
        assertEquals(4 << 20, c.chunkBytes());
        assertEquals(1 << 20, c.ringBytes());
        assertEquals(4, c.serverThreads());
        assertEquals(2L << 30, c.maxBlockBytes());
        assertTrue(c.readFetch());
    }

    @Test
    void theClientsMessageLimitCoversTheAnswersAPeersServerThreadsInterleave() {
        // twice the limit is what the RPC client holds per peer: one full answer per server thread must fit
        for (int threads : new int[] {1, 2, 3, 4, 7, 256}) {
            long held = 2L * RdmxShuffleConf.clientMaxMessageBytes(4 << 20, threads);
            assertTrue(held >= threads * ((4L << 20) + FetchProtocol.ANSWER_HEADER), "threads=" + threads);
        }
        assertEquals((4 << 20) + 8, RdmxShuffleConf.clientMaxMessageBytes(4 << 20, 2));
        assertEquals(1 << 30, RdmxShuffleConf.clientMaxMessageBytes(64 << 20, 256), "capped");
        assertEquals(2 * ((4 << 20) + 8), RdmxShuffleConf.from(k -> null).clientMaxMessageBytes());
    }

    @Test
    void valuesWithSuffixes() {
        Map<String, String> m = Map.of(RdmxShuffleConf.PROVIDER_KEY, " TCP ", RdmxShuffleConf.MAX_BYTES_IN_FLIGHT_KEY,
            "8m", RdmxShuffleConf.CHUNK_BYTES_KEY, "64k", RdmxShuffleConf.RING_BYTES_KEY, "2m",
            RdmxShuffleConf.PEER_TIMEOUT_KEY, "2500");
        RdmxShuffleConf c = RdmxShuffleConf.from(m::get);
        assertEquals("tcp", c.provider());
        assertEquals(8L << 20, c.maxBytesInFlight());
        assertEquals(64 << 10, c.chunkBytes());
        assertEquals(2 << 20, c.ringBytes());
        assertEquals(Duration.ofMillis(2500), c.peerTimeout());
        assertEquals(8L << 30, RdmxShuffleConf.from(Map.of(RdmxShuffleConf.MAX_BLOCK_BYTES_KEY, "8g")::get)
            .maxBlockBytes());
        assertEquals("spark.rdmx.maxBlockBytes=65g out of range [4096, 68719476736]",
            assertThrows(IllegalArgumentException.class, () -> RdmxShuffleConf.from(Map.of(
                RdmxShuffleConf.MAX_BLOCK_BYTES_KEY, "65g")::get)).getMessage());
    }

    @Test
    void aBadValueNamesKeyAndValue() {
        assertEquals("spark.rdmx.ringBytes=3000 must be a power of two", assertThrows(IllegalArgumentException.class,
            () -> RdmxShuffleConf.from(Map.of(RdmxShuffleConf.RING_BYTES_KEY, "3000")::get)).getMessage());
        assertEquals("spark.rdmx.maxReqsInFlight=x is not a number", assertThrows(IllegalArgumentException.class,
            () -> RdmxShuffleConf.from(Map.of(RdmxShuffleConf.MAX_REQS_IN_FLIGHT_KEY, "x")::get)).getMessage());
        assertEquals("spark.rdmx.peerTimeoutMs=10 out of range [100, 3600000]",
            assertThrows(IllegalArgumentException.class,
                () -> RdmxShuffleConf.from(Map.of(RdmxShuffleConf.PEER_TIMEOUT_KEY, "10")::get)).getMessage());
        assertEquals("spark.rdmx.provider=s h m is not a provider name (auto, shm, tcp, ...)",
            assertThrows(IllegalArgumentException.class,
                () -> RdmxShuffleConf.from(Map.of(RdmxShuffleConf.PROVIDER_KEY, "s h m")::get)).getMessage());
        assertThrows(IllegalArgumentException.class,
            () -> RdmxShuffleConf.from(Map.of(RdmxShuffleConf.CHUNK_BYTES_KEY, "9999999999999g")::get));
        assertEquals("spark.rdmx.fetch=read is not auto or rpc", assertThrows(IllegalArgumentException.class,
            () -> RdmxShuffleConf.from(Map.of(RdmxShuffleConf.FETCH_KEY, "read")::get)).getMessage());
        assertFalse(RdmxShuffleConf.from(Map.of(RdmxShuffleConf.FETCH_KEY, " RPC ")::get).readFetch());
    }
}
