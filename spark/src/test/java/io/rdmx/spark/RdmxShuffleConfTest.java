package io.rdmx.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

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
    }
}
