package io.rdmx.cli.doctor;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * The RDMA devices in sysfs ({@code /sys/class/infiniband/<dev>/ports/<n>/...}, the files the kernel's
 * {@code drivers/infiniband/core/sysfs.c} creates): per port its state, link layer, active MTU and the GID
 * table's non-zero entries.
 */
public final class RdmaSysfs {
    /** The all-zero GID: an unpopulated table entry. */
    static final String ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000";

    private final Path sys;

    /**
     * @param sys the sysfs root ({@code /sys} or a fixture)
     */
    public RdmaSysfs(Path sys) {
        this.sys = sys;
    }

    /**
     * A populated GID table entry.
     *
     * @param index its index in {@code ports/<n>/gids/}
     * @param gid the GID
     * @param type {@code gid_attrs/types/<index>} (such as {@code RoCE v2}), or null
     * @param netdev {@code gid_attrs/ndevs/<index>}, the network interface, or null
     */
    public record Gid(int index, String gid, String type, String netdev) {
    }

    /**
     * A port.
     *
     * @param number the port number (from 1)
     * @param state {@code state}, such as {@code 4: ACTIVE}, or null when unreadable
     * @param linkLayer {@code link_layer}: {@code InfiniBand} or {@code Ethernet}, or null
     * @param activeMtu {@code active_mtu}, such as {@code 1024 (3)}, or null
     * @param gidTable whether {@code gids/} exists
     * @param gidEntries entries in {@code gids/} (populated or not)
     * @param gids the populated (non-zero) entries
     */
    public record Port(int number, String state, String linkLayer, String activeMtu, boolean gidTable,
                       int gidEntries, List<Gid> gids) {
        /** Copies the list. */
        public Port {
            gids = List.copyOf(gids);
        }

        /** @return whether the state is ACTIVE (4) */
        public boolean active() {
            return state != null && (state.startsWith("4") || state.endsWith("ACTIVE"));
        }

        /** @return the network interface of the first populated GID, or null */
        public String netdev() {
            return gids.stream().map(Gid::netdev).filter(n -> n != null && !n.isEmpty()).findFirst().orElse(null);
        }
    }

    /**
     * A device.
     *
     * @param name such as {@code rxe0} or {@code mlx5_0}
     * @param ports its ports, by number
     */
    public record Device(String name, List<Port> ports) {
        /** Copies the list. */
        public Device {
            ports = List.copyOf(ports);
        }

        /**
         * One line: each port's state, link layer, MTU and GIDs.
         *
         * @return the summary
         */
        public String summary() {
            if (ports.isEmpty()) {
                return name + ": no ports listed";
            }
            StringBuilder b = new StringBuilder(name);
            String sep = ": ";
            for (Port p : ports) {
                b.append(sep).append("port ").append(p.number()).append(' ').append(p.state())
                    .append(", ").append(p.linkLayer()).append(", active_mtu ").append(p.activeMtu())
                    .append(", ").append(p.gidTable() ? p.gids().size() + " GID(s)" : "no GID table");
                if (p.netdev() != null) {
                    b.append(", netdev ").append(p.netdev());
                }
                sep = "; ";
            }
            return b.toString();
        }
    }

    /** @return the directory of devices, {@code <sys>/class/infiniband} */
    public Path classDir() {
        return sys.resolve("class/infiniband");
    }

    /**
     * @return the devices, sorted by name; empty when {@link #classDir()} is missing or empty
     * @throws IOException when the directory exists but cannot be listed
     */
    public List<Device> devices() throws IOException {
        List<Device> out = new ArrayList<>();
        if (!Files.isDirectory(classDir())) {
            return out;
        }
        for (Path d : list(classDir())) {
            List<Port> ports = new ArrayList<>();
            Path pd = d.resolve("ports");
            if (Files.isDirectory(pd)) {
                for (Path p : list(pd)) {
                    int n;
                    try {
                        n = Integer.parseInt(p.getFileName().toString());
                    } catch (NumberFormatException e) {
                        continue;
                    }
                    ports.add(port(n, p));
                }
            }
            ports.sort(Comparator.comparingInt(Port::number));
            out.add(new Device(d.getFileName().toString(), ports));
        }
        return out;
    }

    private static Port port(int n, Path p) throws IOException {
        Path gidDir = p.resolve("gids");
        boolean table = Files.isDirectory(gidDir);
        int entries = 0;
        List<Gid> gids = new ArrayList<>();
        if (table) {
            for (Path g : list(gidDir)) {
                int index;
                try {
                    index = Integer.parseInt(g.getFileName().toString());
                } catch (NumberFormatException e) {
                    continue;
                }
                entries++;
                String v = read(g);
                if (v != null && !v.isEmpty() && !v.equals(ZERO_GID)) {
                    gids.add(new Gid(index, v, read(p.resolve("gid_attrs/types/" + index)),
                        read(p.resolve("gid_attrs/ndevs/" + index))));
                }
            }
            gids.sort(Comparator.comparingInt(Gid::index));
        }
        return new Port(n, read(p.resolve("state")), read(p.resolve("link_layer")), read(p.resolve("active_mtu")),
            table, entries, gids);
    }

    private static List<Path> list(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.sorted().toList();
        }
    }

    /**
     * @param p a sysfs file
     * @return its trimmed text, or null when it cannot be read (unpopulated sysfs entries fail to read)
     */
    static String read(Path p) {
        try {
            return Files.readString(p, StandardCharsets.US_ASCII).trim();
        } catch (IOException e) {
            return null;
        }
    }
}
