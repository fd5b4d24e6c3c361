package io.rdmx.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Availability;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.ProtocolException;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.Status;
import io.rdmx.verbs.Native.Consts;
import io.rdmx.verbs.Native.More;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** What the verbs provider does without an RDMA device: device discovery, the setup message, status mapping. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class VerbsUnitTest {
    @TempDir
    Path dir;

    private Path device(String name, String netdev) throws Exception {
        Path ndevs = dir.resolve(name).resolve("ports/1/gid_attrs/ndevs");
        Files.createDirectories(ndevs);
        if (netdev != null) {
            Files.writeString(ndevs.resolve("0"), netdev + "\n");
        }
        return dir.resolve(name);
    }

    @Test
    void devicesAreFoundWithTheirInterfaceAndAddress() throws Exception {
        device("rxe1", "lo");
        device("mlx5_0", null);
        List<Devices.Device> ds = Devices.list(dir);
        assertEquals(2, ds.size());
        assertEquals("mlx5_0", ds.get(0).name());
        assertNull(ds.get(0).netdev());
        assertEquals("lo", ds.get(1).netdev());
        assertEquals(InetAddress.getByName("127.0.0.1"), ds.get(1).address());
        assertEquals(InetAddress.getByName("127.0.0.1"), Devices.select(null, null, ds));
        assertEquals(InetAddress.getByName("127.0.0.1"), Devices.select(null, "rxe1", ds));
        RdmxException e = assertThrows(RdmxException.class, () -> Devices.select(null, "mlx5_0", ds));
        assertTrue(e.getMessage().contains("mlx5_0") && e.getMessage().contains("no IPv4"), e.getMessage());
        e = assertThrows(RdmxException.class, () -> Devices.select(null, "nope0", ds));
        assertTrue(e.getMessage().contains("'nope0'") && e.getMessage().contains("rxe1"), e.getMessage());
        assertEquals(InetAddress.getByName("10.9.9.1"), Devices.select("10.9.9.1:7000", null, ds));
        e = assertThrows(RdmxException.class, () -> Devices.select(null, null, List.of()));
        assertTrue(e.getMessage().contains("rdma_rxe"), e.getMessage());
        assertTrue(Devices.list(dir.resolve("missing")).isEmpty());
    }

    @Test
    void providerIsListedAndSaysWhyItIsUnusable() throws Exception {
        VerbsFabric f = (VerbsFabric) Fabrics.get("verbs");
        Availability a = f.availability();
        assertFalse(a.reason().isBlank());
        if (!a.usable()) {
            RdmxException e = assertThrows(RdmxException.class,
                () -> f.open(NodeOptions.builder().name("nodev").build()));
            assertTrue(e.getMessage().startsWith("verbs: "), e.getMessage());
        }
    }

    @Test
    void setupMessageRoundTripsAndRejectsGarbage() throws Exception {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(4096);
            List<RemoteRegion> regions = List.of(new RemoteRegion(0x7f00_0000_1000L, 1 << 20, 0x1234),
                new RemoteRegion(0x7f00_0020_0000L, 64, 0xabcdef));
            int len = new Setup(Setup.HELLO, "client-1", "10.9.9.1:4791", regions, null).encode(buf);
            Setup s = Setup.decode(buf.asSlice(0, len).asByteBuffer());
            assertEquals(Setup.HELLO, s.kind);
            assertEquals("client-1", s.name);
            assertEquals("10.9.9.1:4791", s.address);
            assertEquals(regions, s.regions);
            assertNull(s.reason);
            len = new Setup(Setup.REFUSE, "srv", "a:1", List.of(), "already connected").encode(buf);
            assertEquals("already connected", Setup.decode(buf.asSlice(0, len).asByteBuffer()).reason);
            ProtocolException e = assertThrows(ProtocolException.class,
                () -> Setup.decode(buf.asSlice(0, 10).asByteBuffer()));
            assertTrue(e.getMessage().contains("truncated"), e.getMessage());
            e = assertThrows(ProtocolException.class, () -> Setup.decode(ByteBuffer.wrap(new byte[64])));
            assertTrue(e.getMessage().contains("magic"), e.getMessage());
            MemorySegment small = arena.allocate(40);
            e = assertThrows(ProtocolException.class, () -> new Setup(Setup.HELLO, "n", "a", regions, null)
                .encode(small));
            assertTrue(e.getMessage().contains("2 regions"), e.getMessage());
        }
    }

    @Test
    void completionStatusesMapToTheSpi() {
        assertEquals(Status.SUCCESS, Endpoint.mapStatus(Consts.IBV_WC_SUCCESS));
        assertEquals(Status.REMOTE_ACCESS_ERROR, Endpoint.mapStatus(Consts.IBV_WC_REM_ACCESS_ERR));
        assertEquals(Status.LOCAL_LENGTH_ERROR, Endpoint.mapStatus(Consts.IBV_WC_LOC_LEN_ERR));
        assertEquals(Status.REMOTE_INVALID_REQUEST, Endpoint.mapStatus(Consts.IBV_WC_REM_INV_REQ_ERR));
        assertEquals(Status.FLUSHED, Endpoint.mapStatus(Consts.IBV_WC_WR_FLUSH_ERR));
        assertEquals(Status.TRANSPORT_ERROR, Endpoint.mapStatus(More.IBV_WC_RETRY_EXC_ERR));
        assertEquals(Status.TRANSPORT_ERROR, Endpoint.mapStatus(More.IBV_WC_RNR_RETRY_EXC_ERR));
    }
}
