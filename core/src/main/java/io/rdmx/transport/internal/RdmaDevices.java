package io.rdmx.transport.internal;

import io.rdmx.transport.RdmxException;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.stream.Stream;

/**
 * RDMA devices of this machine (for the {@code verbs} and {@code disni} providers), from sysfs ({@code /sys/class/infiniband}), each with the network interface it
 * runs on and that interface's IPv4 address (rdma_cm addresses a device through an IP of its interface).
 *
 * <p>Selection, in order: the node's bind address (an IP; rdma_cm binds to the device behind it), the system
 * property {@value #DEVICE_PROP} (a device name such as {@code rxe0} or {@code mlx5_0}), else the first device
 * whose interface has an IPv4 address.
 */
public final class RdmaDevices {
    /** System property naming the RDMA device to use. */
    public static final String DEVICE_PROP = "rdmx.rdma.device";
    /** Where the kernel lists RDMA devices. */
    public static final Path SYSFS = Path.of("/sys/class/infiniband");

    /**
     * A device.
     *
     * @param name the device name
     * @param netdev its network interface, or null if sysfs does not say
     * @param address an IPv4 address of that interface, or null
     */
    public record Device(String name, String netdev, InetAddress address) {
        @Override
        public String toString() {
            return name + " (netdev " + (netdev == null ? "?" : netdev) + ", "
                + (address == null ? "no IPv4 address" : address.getHostAddress()) + ")";
        }
    }

    private RdmaDevices() {
    }

    /**
     * Lists the devices under a sysfs directory.
     *
     * @param sysfs {@code /sys/class/infiniband} or a copy of its layout
     * @return the devices, sorted by name; empty if the directory is missing
     */
    public static List<Device> list(Path sysfs) {
        List<Device> out = new ArrayList<>();
        if (!Files.isDirectory(sysfs)) {
            return out;
        }
        try (Stream<Path> devs = Files.list(sysfs)) {
            for (Path d : devs.sorted().toList()) {
                String netdev = netdevOf(d);
                out.add(new Device(d.getFileName().toString(), netdev, netdev == null ? null : ipv4Of(netdev)));
            }
        } catch (IOException e) {
            return out;
        }
        return out;
    }

    /** @return the devices of this machine */
    public static List<Device> list() {
        return list(SYSFS);
    }

    private static String netdevOf(Path dev) throws IOException {
        Path ports = dev.resolve("ports");
        if (!Files.isDirectory(ports)) {
            return null;
        }
        try (Stream<Path> ps = Files.list(ports)) {
            for (Path port : ps.sorted().toList()) {
                Path ndev = port.resolve("gid_attrs").resolve("ndevs").resolve("0");
                if (Files.isReadable(ndev)) {
                    try {
                        String n = Files.readString(ndev).trim();
                        if (!n.isEmpty()) {
                            return n;
                        }
                    } catch (IOException e) {
                        // an unpopulated GID entry reads as an error: try the next port
                    }
                }
            }
        }
        return null;
    }

    private static InetAddress ipv4Of(String netdev) {
        try {
            NetworkInterface ni = NetworkInterface.getByName(netdev);
            if (ni == null) {
                return null;
            }
            Enumeration<InetAddress> as = ni.getInetAddresses();
            while (as.hasMoreElements()) {
                InetAddress a = as.nextElement();
                if (a instanceof Inet4Address) {
                    return a;
                }
            }
        } catch (SocketException e) {
            return null;
        }
        return null;
    }

    /**
     * Parses a peer's address as the RDMA providers print it.
     *
     * @param address {@code IPv4:port}
     * @return the socket address
     * @throws RdmxException naming the address when it is not {@code IPv4:port}
     */
    public static InetSocketAddress parseAddress(String address) throws RdmxException {
        int colon = address.lastIndexOf(':');
        try {
            if (colon > 0) {
                InetAddress ip = InetAddress.getByName(address.substring(0, colon));
                int port = Integer.parseInt(address.substring(colon + 1));
                if (ip instanceof Inet4Address && port > 0 && port <= 65535) {
                    return new InetSocketAddress(ip, port);
                }
            }
        } catch (IOException | NumberFormatException e) {
            // reported below
        }
        throw new RdmxException("address=" + address + " is not IPv4:port");
    }

    /**
     * Chooses the local IP a node binds to.
     *
     * @param bindAddress the node's bind address (IP, or IP:port), or null
     * @param deviceName a device name, or null
     * @param devices the devices to choose from
     * @return the IP
     * @throws RdmxException naming what was asked for and what exists
     */
    public static InetAddress select(String bindAddress, String deviceName, List<Device> devices)
        throws RdmxException {
        if (bindAddress != null && !bindAddress.isBlank()) {
            String host = bindAddress;
            int colon = host.lastIndexOf(':');
            if (colon > 0 && host.indexOf(':') == colon) {
                host = host.substring(0, colon);
            }
            try {
                return InetAddress.getByName(host);
            } catch (IOException e) {
                throw new RdmxException("bind address '" + bindAddress + "' is not an IP address");
            }
        }
        if (devices.isEmpty()) {
            throw new RdmxException("no RDMA device on this machine (" + SYSFS + " is empty or missing);"
                + " load a driver (for Soft-RoCE: modprobe rdma_rxe; rdma link add rxe0 type rxe netdev <if>)");
        }
        for (Device d : devices) {
            if (deviceName != null && !deviceName.isBlank() && !d.name().equals(deviceName)) {
                continue;
            }
            if (d.address() != null) {
                return d.address();
            }
            if (deviceName != null && !deviceName.isBlank()) {
                throw new RdmxException("device " + d + " has no IPv4 address on its interface;"
                    + " rdma_cm needs one");
            }
        }
        throw new RdmxException(deviceName == null || deviceName.isBlank()
            ? "no RDMA device has an IPv4 address on its interface: " + devices
            : "no RDMA device named '" + deviceName + "' (" + DEVICE_PROP + "); devices: " + devices);
    }
}
