package io.rdmx.affinity;

import java.io.IOException;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * Where a NIC sits: its NUMA node and the CPUs local to it, from sysfs ({@code class/infiniband/<dev>/device/}
 * for an RDMA device, {@code class/net/<if>/device/} for a network interface).
 *
 * <p>Fallback, when there is no device (the shm and loopback providers) or sysfs says nothing useful (a
 * virtual NIC without {@code local_cpulist}, {@code numa_node} -1): the CPUs of the first socket, so that the
 * placement policies still keep communication threads together on one socket.
 *
 * @param device what was located ({@code rxe0}, {@code eth0}, or {@code none})
 * @param numaNode the NUMA node, or -1 if unknown
 * @param localCpus the CPUs local to the device
 * @param source how this was found, for {@code rdmx info}
 */
public record DeviceLocality(String device, int numaNode, CpuSet localCpus, String source) {

    /**
     * An RDMA device's locality.
     *
     * @param sys sysfs root
     * @param topo the topology (for the fallback)
     * @param device e.g. {@code mlx5_0}, {@code rxe0}
     * @return the locality
     */
    public static DeviceLocality rdmaDevice(Path sys, CpuTopology topo, String device) {
        return fromDir(sys.resolve("class/infiniband").resolve(device).resolve("device"), topo, device,
            "RDMA device " + device);
    }

    /**
     * A network interface's locality.
     *
     * @param sys sysfs root
     * @param topo the topology
     * @param ifname e.g. {@code eth0}
     * @return the locality
     */
    public static DeviceLocality netInterface(Path sys, CpuTopology topo, String ifname) {
        return fromDir(sys.resolve("class/net").resolve(ifname).resolve("device"), topo, ifname,
            "network interface " + ifname);
    }

    /**
     * The locality of the device behind a local IP address: the RDMA device bound to that interface if there is
     * one, else the interface.
     *
     * @param sys sysfs root
     * @param topo the topology
     * @param ip a local address
     * @return the locality (the fallback if the address is not local)
     */
    public static DeviceLocality forAddress(Path sys, CpuTopology topo, String ip) {
        try {
            NetworkInterface nif = NetworkInterface.getByInetAddress(InetAddress.getByName(ip));
            if (nif == null) {
                return fallback(topo, "address " + ip + " is not on a local interface");
            }
            String ifname = nif.getName();
            Path ib = sys.resolve("class/net").resolve(ifname).resolve("device/infiniband");
            if (Files.isDirectory(ib)) {
                try (Stream<Path> s = Files.list(ib)) {
                    String dev = s.map(p -> p.getFileName().toString()).sorted().findFirst().orElse(null);
                    if (dev != null) {
                        return rdmaDevice(sys, topo, dev);
                    }
                }
            }
            return netInterface(sys, topo, ifname);
        } catch (IOException e) {
            return fallback(topo, "cannot resolve address " + ip + ": " + e.getMessage());
        }
    }

    /**
     * The documented fallback: the first socket's CPUs.
     *
     * @param topo the topology
     * @param why why there is no device locality
     * @return the locality
     */
    public static DeviceLocality fallback(CpuTopology topo, String why) {
        int s = topo.sockets().get(0);
        return new DeviceLocality("none", -1, topo.cpus(s), "fallback to socket " + s + " (" + why + ")");
    }

    private static DeviceLocality fromDir(Path dir, CpuTopology topo, String device, String what) {
        String numa = CpuTopology.readOrNull(dir.resolve("numa_node"));
        String list = CpuTopology.readOrNull(dir.resolve("local_cpulist"));
        int node = -1;
        if (numa != null) {
            try {
                node = Integer.parseInt(numa.trim());
            } catch (NumberFormatException e) {
                node = -1;
            }
        }
        if (list != null && !list.isBlank()) {
            CpuSet local = CpuSet.parse(list).and(topo.online());
            if (!local.isEmpty()) {
                return new DeviceLocality(device, node, local, what + ": local_cpulist " + list
                    + (node >= 0 ? ", numa_node " + node : ""));
            }
        }
        if (node >= 0 && topo.numaNodes().containsKey(node)) {
            return new DeviceLocality(device, node, topo.numaNodes().get(node), what + ": numa_node " + node);
        }
        return fallback(topo, what + " has no locality in sysfs");
    }
}
