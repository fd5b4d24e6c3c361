package io.rdmx.cli;

import io.rdmx.cli.doctor.Doctor;
import io.rdmx.cli.doctor.Host;
import io.rdmx.cli.doctor.RdmaSysfs;
import io.rdmx.transport.Availability;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.HostNeed;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/** Entry point of {@code scripts/rdmx} for the commands that live in core. */
public final class Rdmx {
    private Rdmx() {
    }

    /**
     * @param args {@code info} or {@code demo [provider]}
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        String cmd = args.length == 0 ? "info" : args[0];
        switch (cmd) {
            case "info":
                info(System.out, Paths.get("/sys"));
                break;
            case "doctor":
                System.exit(Doctor.run(Arrays.copyOfRange(args, 1, args.length), System.out, System.err,
                    Host.system()));
                break;
            case "demo":
                System.exit(Demo.run(args.length > 1 ? args[1] : Fabrics.DEFAULT_PROVIDER, System.out));
                break;
            case "demo-peer":
                Demo.peer(args[1], args[2]);
                break;
            default:
                System.err.println("usage: rdmx info | doctor [--provider NAME] | demo [provider]"
                    + " | bench <name> [--quick] | test");
                System.exit(2);
        }
    }

    /**
     * Prints the providers usable on this machine (and why others are not), the RDMA devices, and a CPU summary.
     *
     * @param out where to print
     * @param sys the sysfs root
     */
    public static void info(PrintStream out, Path sys) {
        out.println("rdmx " + version() + " on " + System.getProperty("os.name") + " "
            + System.getProperty("os.arch") + ", Java " + Runtime.version());
        out.println();
        out.println("Providers:");
        List<String> known = new ArrayList<>();
        for (Fabric f : Fabrics.all()) {
            Availability a = f.availability();
            known.add(f.name());
            out.printf(Locale.ROOT, "  %-9s %-9s %s%n", f.name(), a.usable() ? "usable" : "unusable", a.reason());
        }
        for (Fabrics.Shipped s : Fabrics.shipped()) {
            if (known.contains(s.name())) {
                continue;
            }
            String module = "its module (" + s.artifacts() + ") is not on the class path";
            List<String> devs = s.needs().contains(HostNeed.RDMA_DEVICE) ? rdmaDevices(sys) : null;
            out.printf(Locale.ROOT, "  %-9s %-9s %s%n", s.name(), "unusable", devs == null ? module
                : devs.isEmpty() ? "no RDMA device (" + sys.resolve("class/infiniband") + " is empty or missing) and "
                    + module
                : "RDMA devices " + devs + " present, but " + module);
        }
        out.println("  default: " + Fabrics.defaultFabric().name() + " (-D" + Fabrics.DEFAULT_PROVIDER_PROP + " or $"
            + Fabrics.DEFAULT_PROVIDER_ENV + " to change)");
        out.println();
        rdma(out, sys);
        out.println();
        out.println("CPU topology: " + cpuSummary(sys));
        out.println();
        for (String line : io.rdmx.spi.Platform.hooks().describe()) {
            out.println(line);
        }
    }

    /** The RDMA devices, one line per device with its ports (state, link layer, MTU, GIDs). */
    private static void rdma(PrintStream out, Path sys) {
        RdmaSysfs sysfs = new RdmaSysfs(sys);
        List<RdmaSysfs.Device> devs;
        try {
            devs = sysfs.devices();
        } catch (IOException e) {
            out.println("RDMA devices: " + sysfs.classDir() + " cannot be listed: " + e);
            return;
        }
        if (devs.isEmpty()) {
            out.println("RDMA devices: none (" + sysfs.classDir() + (Files.isDirectory(sysfs.classDir())
                ? " is empty" : " is missing") + "; rdma_rxe module " + (Files.isDirectory(sys.resolve(
                "module/rdma_rxe")) ? "loaded" : "not loaded") + ")");
        } else {
            out.println("RDMA devices:");
            for (RdmaSysfs.Device d : devs) {
                out.println("  " + d.summary());
            }
        }
        out.println("  why a provider is unusable, and the fix: rdmx doctor [--provider NAME]");
    }

    private static String version() {
        String v = Rdmx.class.getPackage().getImplementationVersion();
        return v == null ? "(dev)" : v;
    }

    static List<String> rdmaDevices(Path sys) {
        Path dir = sys.resolve("class/infiniband");
        List<String> out = new ArrayList<>();
        if (Files.isDirectory(dir)) {
            try (Stream<Path> s = Files.list(dir)) {
                s.forEach(p -> out.add(p.getFileName().toString()));
            } catch (IOException e) {
                out.add("(unreadable: " + e.getMessage() + ")");
            }
        }
        return out;
    }

    /**
     * A one-line CPU summary from sysfs: online CPUs, sockets, physical cores, SMT, NUMA nodes.
     *
     * @param sys the sysfs root
     * @return the summary
     */
    static String cpuSummary(Path sys) {
        Path cpu = sys.resolve("devices/system/cpu");
        String online = read(cpu.resolve("online"));
        if (online == null) {
            return Runtime.getRuntime().availableProcessors() + " CPUs (no sysfs topology)";
        }
        List<Integer> cpus = parseList(online);
        Set<String> sockets = new TreeSet<>();
        Set<String> cores = new TreeSet<>();
        for (int c : cpus) {
            Path t = cpu.resolve("cpu" + c + "/topology");
            String pkg = read(t.resolve("physical_package_id"));
            String core = read(t.resolve("core_id"));
            sockets.add(pkg == null ? "?" : pkg);
            cores.add((pkg == null ? "?" : pkg) + "/" + (core == null ? c : core));
        }
        int nodes = 0;
        Path node = sys.resolve("devices/system/node");
        if (Files.isDirectory(node)) {
            try (Stream<Path> s = Files.list(node)) {
                nodes = (int) s.filter(p -> p.getFileName().toString().matches("node\\d+")).count();
            } catch (IOException e) {
                nodes = 0;
            }
        }
        int smt = cores.isEmpty() ? 1 : Math.max(1, cpus.size() / cores.size());
        return cpus.size() + " online CPUs (" + online + "), " + sockets.size() + " socket(s), " + cores.size()
            + " physical core(s), " + smt + " thread(s) per core, " + Math.max(nodes, 1) + " NUMA node(s)";
    }

    /**
     * Parses a sysfs CPU list such as {@code 0-3,8,10-11}.
     *
     * @param list the text
     * @return the CPU numbers
     */
    static List<Integer> parseList(String list) {
        List<Integer> out = new ArrayList<>();
        for (String part : list.trim().split(",")) {
            if (part.isEmpty()) {
                continue;
            }
            int dash = part.indexOf('-');
            if (dash < 0) {
                out.add(Integer.parseInt(part.trim()));
            } else {
                int lo = Integer.parseInt(part.substring(0, dash).trim());
                int hi = Integer.parseInt(part.substring(dash + 1).trim());
                for (int i = lo; i <= hi; i++) {
                    out.add(i);
                }
            }
        }
        return out;
    }

    private static String read(Path p) {
        try {
            return Files.readString(p, StandardCharsets.US_ASCII).trim();
        } catch (IOException e) {
            return null;
        }
    }
}
