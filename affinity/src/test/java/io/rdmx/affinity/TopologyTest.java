package io.rdmx.affinity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** CPU sets, topology parsing from fixture sysfs trees, device locality, policies and placements. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class TopologyTest {
    @TempDir
    Path dir;

    @Test
    void cpuSetsParsePrintAndMaskBeyond64Cpus() {
        CpuSet s = CpuSet.parse("0-3, 8,64-65,159");
        assertEquals("0-3,8,64-65,159", s.toString());
        assertEquals(8, s.size());
        byte[] m = s.toMask(32);
        assertEquals(0x0F, m[0]);
        assertEquals(0x01, m[1]);
        assertEquals(0x03, m[8], "CPUs 64 and 65 live in byte 8");
        assertEquals((byte) 0x80, m[19], "CPU 159 is bit 7 of byte 19");
        assertEquals(s, CpuSet.fromMask(m));
        assertTrue(CpuSet.parse("").isEmpty());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CpuSet.parse("0-x"));
        assertTrue(e.getMessage().contains("0-x"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> CpuSet.parse("5-2"));
        assertThrows(IllegalArgumentException.class, () -> s.toMask(8));
    }

    @Test
    void oneSocketWithoutSmt() throws Exception {
        CpuTopology t = CpuTopology.read(new SysfsFixture(dir).machine(1, 4, 1).root);
        assertEquals(4, t.online().size());
        assertEquals(1, t.sockets().size());
        assertEquals(4, t.allCores().size());
        assertEquals(1, t.threadsPerCore());
        assertEquals("0-3", t.cpus(0).toString());
    }

    @Test
    void power8LikeTwoSocketsSmt8With160Threads() throws Exception {
        CpuTopology t = CpuTopology.read(new SysfsFixture(dir).machine(2, 10, 8).root);
        assertEquals(160, t.online().size());
        assertEquals(2, t.sockets().size());
        assertEquals(20, t.allCores().size());
        assertEquals(8, t.threadsPerCore());
        assertEquals("80-87", t.cores(1).get(0).threads().toString());
        assertEquals("80-159", t.cpus(1).toString());
        assertEquals("0-79", t.numaNodes().get(0).toString());
        assertTrue(t.toString().startsWith("160 online CPUs (0-159), 2 socket(s), 20 physical core(s), 8 thread(s)"),
            t.toString());
    }

    @Test
    void moreThan64Cpus() throws Exception {
        CpuTopology t = CpuTopology.read(new SysfsFixture(dir).machine(2, 48, 2).root);
        assertEquals(192, t.online().size());
        assertEquals(96, t.allCores().size());
        assertEquals("190-191", t.cores(1).get(47).threads().toString());
        assertEquals(1, t.socketOf(CpuSet.parse("100-120")));
    }

    @Test
    void offlineCpusAreLeftOut() throws Exception {
        SysfsFixture f = new SysfsFixture(dir).machine(1, 4, 2);
        f.write("devices/system/cpu/online", "0-5,7").write("devices/system/cpu/offline", "6");
        CpuTopology t = CpuTopology.read(f.root);
        assertEquals("0-5,7", t.online().toString());
        assertEquals("6", t.offline().toString());
        assertEquals("7", t.cores(0).get(3).threads().toString(), "core 3 keeps only its online thread");
        assertFalse(t.cpus(0).contains(6));
        assertTrue(t.toString().contains("offline 6"), t.toString());
    }

    @Test
    void deviceLocalityFromSysfsAndTheFallback() throws Exception {
        SysfsFixture f = new SysfsFixture(dir).machine(2, 10, 8);
        f.write("class/infiniband/mlx5_0/device/numa_node", "1")
            .write("class/infiniband/mlx5_0/device/local_cpulist", "80-159")
            .write("class/net/ib0/device/numa_node", "1")
            .write("class/net/eth9/device/numa_node", "-1");
        CpuTopology t = CpuTopology.read(f.root);
        DeviceLocality rdma = DeviceLocality.rdmaDevice(f.root, t, "mlx5_0");
        assertEquals(1, rdma.numaNode());
        assertEquals("80-159", rdma.localCpus().toString());
        DeviceLocality net = DeviceLocality.netInterface(f.root, t, "ib0");
        assertEquals("80-159", net.localCpus().toString(), "numa_node 1 alone locates the NIC");
        DeviceLocality unknown = DeviceLocality.netInterface(f.root, t, "eth9");
        assertEquals("0-79", unknown.localCpus().toString());
        assertTrue(unknown.source().startsWith("fallback to socket 0"), unknown.source());
        DeviceLocality missing = DeviceLocality.rdmaDevice(f.root, t, "nope0");
        assertEquals("none", missing.device());
    }

    @Test
    void policiesParseAndRefuseBadInput() {
        assertEquals(new Policy(Policy.Kind.O2NTS, 2), Policy.parse("O2NTS(2)"));
        assertEquals(new Policy(Policy.Kind.O2NTC, 4), Policy.parse("o2ntc:4"));
        assertEquals(Policy.NONE, Policy.parse(" none "));
        assertEquals("O2NTS(2)", Policy.parse("o2nts(2)").toString());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Policy.parse("O2XX"));
        assertTrue(e.getMessage().contains("O2NTS(N)"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Policy.parse("O2NTS"));
        assertThrows(IllegalArgumentException.class, () -> Policy.parse("O2ACS(3)"));
    }

    @Test
    void placementsOnAPower8LikeMachineWithTheNicOnSocket1() throws Exception {
        SysfsFixture f = new SysfsFixture(dir).machine(2, 10, 8);
        f.write("class/infiniband/mlx5_0/device/local_cpulist", "80-159");
        CpuTopology t = CpuTopology.read(f.root);
        DeviceLocality nic = DeviceLocality.rdmaDevice(f.root, t, "mlx5_0");
        Placement nts = new Placement(t, nic, Policy.parse("O2NTS(2)"));
        assertEquals(1, nts.nearSocket());
        assertEquals("80-81", nts.assign(0).toString());
        assertEquals("82-83", nts.assign(1).toString());
        assertEquals("80-81", nts.assign(40).toString(), "80 threads / 2 = 40 blocks, then round robin");
        assertEquals("80-159", new Placement(t, nic, Policy.parse("O2ACS")).assign(5).toString());
        Placement ocs = new Placement(t, nic, Policy.parse("O2OCS"));
        assertEquals("80-87", ocs.assign(0).toString());
        assertEquals("88-95", ocs.assign(1).toString());
        assertEquals("80-87", ocs.assign(10).toString());
        Placement ntc = new Placement(t, nic, Policy.parse("O2NTC(4)"));
        assertEquals("0-3", ntc.assign(0).toString());
        assertEquals("4-7", ntc.assign(1).toString());
        Placement occ = new Placement(t, nic, Policy.parse("O2OCC"));
        assertEquals("0-7", occ.assign(0).toString());
        assertEquals("152-159", occ.assign(19).toString());
        assertEquals("0-7", occ.assign(20).toString());
        assertNull(new Placement(t, nic, Policy.NONE).next());
        Placement seq = new Placement(t, nic, Policy.parse("O2OCS"));
        assertArrayEquals(new int[] {80, 81, 82, 83, 84, 85, 86, 87}, seq.next().toArray());
        assertEquals("88-95", seq.next().toString());
    }
}
