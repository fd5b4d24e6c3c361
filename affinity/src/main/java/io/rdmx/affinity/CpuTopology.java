package io.rdmx.affinity;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * CPU topology read from sysfs ({@code <sys>/devices/system/cpu}, {@code <sys>/devices/system/node}): online
 * and offline CPUs, sockets, physical cores with their hardware threads (SMT siblings), NUMA nodes.
 */
public final class CpuTopology {
    /** A physical core and its hardware threads. */
    public record Core(int socket, int coreId, CpuSet threads) {
    }

    private final CpuSet online;
    private final CpuSet offline;
    private final Map<Integer, List<Core>> coresBySocket;
    private final Map<Integer, CpuSet> numaNodes;

    private CpuTopology(CpuSet online, CpuSet offline, Map<Integer, List<Core>> coresBySocket,
                        Map<Integer, CpuSet> numaNodes) {
        this.online = online;
        this.offline = offline;
        this.coresBySocket = coresBySocket;
        this.numaNodes = numaNodes;
    }

    /**
     * Reads the topology.
     *
     * @param sys the sysfs root ({@code /sys}, or a fixture tree)
     * @return the topology
     * @throws IOException if {@code devices/system/cpu/online} cannot be read
     */
    public static CpuTopology read(Path sys) throws IOException {
        Path cpu = sys.resolve("devices/system/cpu");
        CpuSet online = CpuSet.parse(Files.readString(cpu.resolve("online"), StandardCharsets.US_ASCII));
        String off = readOrNull(cpu.resolve("offline"));
        CpuSet offline = off == null ? CpuSet.of() : CpuSet.parse(off);
        Map<Integer, Map<Integer, List<Integer>>> threads = new TreeMap<>();
        for (int c : online.toArray()) {
            Path t = cpu.resolve("cpu" + c + "/topology");
            int socket = intOr(readOrNull(t.resolve("physical_package_id")), 0);
            int core = intOr(readOrNull(t.resolve("core_id")), c);
            threads.computeIfAbsent(socket, k -> new TreeMap<>()).computeIfAbsent(core, k -> new ArrayList<>())
                .add(c);
        }
        Map<Integer, List<Core>> cores = new TreeMap<>();
        for (Map.Entry<Integer, Map<Integer, List<Integer>>> s : threads.entrySet()) {
            List<Core> list = new ArrayList<>();
            for (Map.Entry<Integer, List<Integer>> c : s.getValue().entrySet()) {
                list.add(new Core(s.getKey(), c.getKey(), CpuSet.of(c.getValue().stream().mapToInt(i -> i))));
            }
            list.sort((x, y) -> Integer.compare(x.threads().toArray()[0], y.threads().toArray()[0]));
            cores.put(s.getKey(), Collections.unmodifiableList(list));
        }
        Map<Integer, CpuSet> nodes = new TreeMap<>();
        Path node = sys.resolve("devices/system/node");
        if (Files.isDirectory(node)) {
            try (Stream<Path> s = Files.list(node)) {
                for (Path p : (Iterable<Path>) s::iterator) {
                    String n = p.getFileName().toString();
                    if (n.matches("node\\d+")) {
                        String list = readOrNull(p.resolve("cpulist"));
                        if (list != null) {
                            nodes.put(Integer.parseInt(n.substring(4)), CpuSet.parse(list).and(online));
                        }
                    }
                }
            }
        }
        return new CpuTopology(online, offline, cores, nodes);
    }

    static String readOrNull(Path p) {
        try {
            return Files.readString(p, StandardCharsets.US_ASCII).trim();
        } catch (IOException e) {
            return null;
        }
    }

    private static int intOr(String s, int dflt) {
        if (s == null || s.isEmpty()) {
            return dflt;
        }
        try {
            return Integer.parseInt(s.trim());
        } catch (NumberFormatException e) {
            return dflt;
        }
    }

    /** @return online CPUs */
    public CpuSet online() {
        return online;
    }

    /** @return offline CPUs (as sysfs lists them) */
    public CpuSet offline() {
        return offline;
    }

    /** @return socket ids in ascending order */
    public List<Integer> sockets() {
        return List.copyOf(coresBySocket.keySet());
    }

    /**
     * @param socket a socket id
     * @return its physical cores, in order of their first hardware thread
     */
    public List<Core> cores(int socket) {
        return coresBySocket.getOrDefault(socket, List.of());
    }

    /** @return every physical core, socket by socket */
    public List<Core> allCores() {
        List<Core> out = new ArrayList<>();
        coresBySocket.values().forEach(out::addAll);
        return out;
    }

    /**
     * @param socket a socket id
     * @return its online hardware threads
     */
    public CpuSet cpus(int socket) {
        CpuSet s = CpuSet.of();
        for (Core c : cores(socket)) {
            s = s.or(c.threads());
        }
        return s;
    }

    /**
     * The socket holding most of a set of CPUs (the socket "closest" to a device with that local_cpulist).
     *
     * @param cpus CPUs
     * @return the socket, or the first socket if none of the CPUs is online
     */
    public int socketOf(CpuSet cpus) {
        int best = sockets().get(0);
        int most = -1;
        for (int s : sockets()) {
            int n = cpus(s).and(cpus).size();
            if (n > most) {
                most = n;
                best = s;
            }
        }
        return best;
    }

    /** @return NUMA nodes and their online CPUs */
    public Map<Integer, CpuSet> numaNodes() {
        return Collections.unmodifiableMap(numaNodes);
    }

    /** @return hardware threads per core (the most of any core) */
    public int threadsPerCore() {
        return allCores().stream().mapToInt(c -> c.threads().size()).max().orElse(1);
    }

    @Override
    public String toString() {
        return online.size() + " online CPUs (" + online + (offline.isEmpty() ? "" : ", offline " + offline)
            + "), " + sockets().size() + " socket(s), " + allCores().size() + " physical core(s), "
            + threadsPerCore() + " thread(s) per core, " + Math.max(1, numaNodes.size()) + " NUMA node(s)";
    }
}
