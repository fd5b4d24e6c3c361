package io.rdmx.transport.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.RdmxException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** RDMA device discovery from a sysfs-shaped directory, and the choice of the address a node binds to. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RdmaDevicesTest {
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
        List<RdmaDevices.Device> ds = RdmaDevices.list(dir);
        assertEquals(2, ds.size());
        assertEquals("mlx5_0", ds.get(0).name());
        assertNull(ds.get(0).netdev());
        assertEquals("lo", ds.get(1).netdev());
        assertEquals(InetAddress.getByName("127.0.0.1"), ds.get(1).address());
        assertEquals(InetAddress.getByName("127.0.0.1"), RdmaDevices.select(null, null, ds));
        assertEquals(InetAddress.getByName("127.0.0.1"), RdmaDevices.select(null, "rxe1", ds));
        RdmxException e = assertThrows(RdmxException.class, () -> RdmaDevices.select(null, "mlx5_0", ds));
        assertTrue(e.getMessage().contains("mlx5_0") && e.getMessage().contains("no IPv4"), e.getMessage());
        e = assertThrows(RdmxException.class, () -> RdmaDevices.select(null, "nope0", ds));
        assertTrue(e.getMessage().contains("'nope0'") && e.getMessage().contains("rxe1"), e.getMessage());
        assertEquals(InetAddress.getByName("10.9.9.1"), RdmaDevices.select("10.9.9.1:7000", null, ds));
        e = assertThrows(RdmxException.class, () -> RdmaDevices.select(null, null, List.of()));
        assertTrue(e.getMessage().contains("rdma_rxe"), e.getMessage());
        assertTrue(RdmaDevices.list(dir.resolve("missing")).isEmpty());
    }


    @Test
    void peerAddressesAreIpv4AndPort() throws Exception {
        assertEquals(new java.net.InetSocketAddress("10.9.9.1", 4791), RdmaDevices.parseAddress("10.9.9.1:4791"));
        for (String bad : new String[] {"not-an-address", ":4791", "10.9.9.1:", "10.9.9.1:0", "10.9.9.1:70000",
            "10.9.9.1:x", "[::1]:4791"}) {
            RdmxException e = assertThrows(RdmxException.class, () -> RdmaDevices.parseAddress(bad));
            assertTrue(e.getMessage().contains("address=" + bad + " is not IPv4:port"), e.getMessage());
        }
    }
}
