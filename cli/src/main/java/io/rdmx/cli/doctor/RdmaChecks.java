package io.rdmx.cli.doctor;

import io.rdmx.transport.internal.RdmaDevices;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The doctor's checks of the machine's RDMA devices ({@link io.rdmx.transport.HostNeed#RDMA_DEVICE}): each device's
 * ports (state, link layer, active MTU, populated GIDs), the {@code rdma_rxe} module when there is no device, and
 * the permissions of {@code /dev/infiniband/*} for this user.
 */
final class RdmaChecks {
    private final Host host;

    /** @param host the machine */
    RdmaChecks(Host host) {
        this.host = host;
    }

    /** @return the device checks, then the device files' */
    List<Check> all() {
        List<Check> c = new ArrayList<>(devices());
        c.addAll(deviceFiles());
        return c;
    }

    private Identity identity() throws IOException {
        return Identity.read(host.root());
    }

    private List<Check> devices() {
        RdmaSysfs sysfs = new RdmaSysfs(host.path("/sys"));
        Path shown = Path.of("/sys/class/infiniband");
        List<RdmaSysfs.Device> devs;
        try {
            devs = sysfs.devices();
        } catch (IOException e) {
            return List.of(Check.fail("cannot list " + shown + ": " + e, "run as a user who can read sysfs"));
        }
        List<Check> c = new ArrayList<>();
        if (devs.isEmpty()) {
            c.add(Check.fail("no RDMA device: " + shown + (Files.isDirectory(sysfs.classDir()) ? " is empty"
                : " is missing"), rxeFix()));
            c.add(rxeModule());
            return c;
        }
        String wanted = host.property(RdmaDevices.DEVICE_PROP);
        if (wanted != null && !wanted.isBlank() && devs.stream().noneMatch(d -> d.name().equals(wanted))) {
            c.add(Check.fail("-D" + RdmaDevices.DEVICE_PROP + "=" + wanted + " names no device; devices: "
                + devs.stream().map(RdmaSysfs.Device::name).collect(Collectors.toList()),
                "set -D" + RdmaDevices.DEVICE_PROP + " to one of them, or unset it"));
        }
        boolean anyUsable = devs.stream().flatMap(d -> d.ports().stream()).anyMatch(p -> p.active()
            && !p.gids().isEmpty());
        List<Check> ports = new ArrayList<>();
        for (RdmaSysfs.Device d : devs) {
            if (d.ports().isEmpty()) {
                ports.add(Check.fail(d.name() + ": no ports under " + shown + "/" + d.name() + "/ports",
                    "reload its driver (for rxe: rdma link delete " + d.name() + "; rdma link add " + d.name()
                        + " type rxe netdev <if>)"));
            }
            for (RdmaSysfs.Port p : d.ports()) {
                ports.addAll(port(d, p));
            }
        }
        for (Check p : ports) {
            // with one usable port somewhere, the others' problems do not stop the provider
            c.add(anyUsable && p.level() == Check.Level.FAIL ? Check.warn(p.text(), p.fix()) : p);
        }
        if (devs.stream().anyMatch(d -> d.name().startsWith("rxe"))) {
            c.add(rxeModule());
        }
        return c;
    }

    private List<Check> port(RdmaSysfs.Device d, RdmaSysfs.Port p) {
        List<Check> c = new ArrayList<>();
        String name = d.name() + " port " + p.number();
        boolean ethernet = "Ethernet".equalsIgnoreCase(p.linkLayer());
        String netdev = p.netdev() != null ? p.netdev() : "<if>";
        String facts = "link_layer=" + p.linkLayer() + ", active_mtu=" + p.activeMtu();
        if (p.active()) {
            c.add(Check.ok(name + ": state=" + p.state() + ", " + facts));
        } else {
            c.add(Check.fail(name + ": state=" + p.state() + " (not ACTIVE), " + facts, ethernet
                ? "bring its network interface up (RoCE follows the link): ip link set " + netdev + " up"
                : "check the cable and that a subnet manager runs (opensm); INIT means no subnet manager yet"));
        }
        String gidDir = "/sys/class/infiniband/" + d.name() + "/ports/" + p.number() + "/gids";
        if (!p.gidTable()) {
            c.add(Check.fail(name + ": no GID table (" + gidDir + " is missing)",
                "the driver did not set the port up; for rxe re-create the device: rdma link delete " + d.name()
                    + "; rdma link add " + d.name() + " type rxe netdev " + netdev));
        } else if (p.gids().isEmpty()) {
            c.add(Check.fail(name + ": all " + p.gidEntries() + " entries of " + gidDir + " are zero", ethernet
                ? "give its network interface an IP address (RoCE GIDs come from them): ip addr add <ip>/<len> dev "
                    + netdev
                : "the subnet manager has not configured the port (opensm)"));
        } else {
            c.add(Check.ok(name + ": " + p.gids().size() + " GID(s): " + p.gids().stream().limit(4).map(g ->
                "[" + g.index() + "] " + g.gid() + (g.type() == null ? "" : " " + g.type())
                    + (g.netdev() == null ? "" : " on " + g.netdev())).collect(Collectors.joining(", "))
                + (p.gids().size() > 4 ? ", ..." : "")));
        }
        return c;
    }

    private String rxeFix() {
        List<String> netdevs = netdevs();
        String ifs = netdevs.isEmpty() ? "<if>" : netdevs.get(0);
        String add = "rdma link add rxe0 type rxe netdev " + ifs + (netdevs.size() > 1 ? " (interfaces: " + netdevs
            + ")" : "");
        String load = Files.isDirectory(host.path("/sys/module/rdma_rxe")) ? "" : "modprobe rdma_rxe; ";
        return "for Soft-RoCE (RDMA over any Ethernet interface): " + load + add
            + "; or load your RDMA NIC's driver (mlx5_ib, irdma, bnxt_re, efa, ...)";
    }

    private Check rxeModule() {
        if (Files.isDirectory(host.path("/sys/module/rdma_rxe"))) {
            return Check.ok("rdma_rxe module loaded (/sys/module/rdma_rxe): Soft-RoCE devices can be added");
        }
        String rel = RdmaSysfs.read(host.path("/proc/sys/kernel/osrelease"));
        String installed;
        if (rel == null) {
            installed = "the kernel release is unknown (/proc/sys/kernel/osrelease unreadable)";
        } else {
            Path mods = host.path("/lib/modules/" + rel);
            if (!Files.isDirectory(mods)) {
                installed = "/lib/modules/" + rel + " is missing (a container? load it on the host)";
            } else if (contains(mods.resolve("modules.dep"), "rdma_rxe.ko")
                || contains(mods.resolve("modules.builtin"), "rdma_rxe.ko")) {
                installed = "it is installed for kernel " + rel;
            } else {
                installed = "it is not installed for kernel " + rel + " (Ubuntu: apt-get install linux-modules-extra-"
                    + rel + ")";
            }
        }
        return Check.warn("rdma_rxe module not loaded (/sys/module/rdma_rxe missing); " + installed,
            "modprobe rdma_rxe");
    }

    private static boolean contains(Path file, String s) {
        try (Stream<String> lines = Files.lines(file, StandardCharsets.UTF_8)) {
            return lines.anyMatch(l -> l.contains(s));
        } catch (IOException | java.io.UncheckedIOException e) {
            return false;
        }
    }

    private List<String> netdevs() {
        Path net = host.path("/sys/class/net");
        try (Stream<Path> s = Files.list(net)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> !n.equals("lo")).sorted()
                .collect(Collectors.toList());
        } catch (IOException e) {
            return List.of();
        }
    }

    private List<Check> deviceFiles() {
        List<Check> c = new ArrayList<>();
        Path dir = host.path("/dev/infiniband");
        String passIn = "in a container pass them in: docker run --device=/dev/infiniband/uverbs0"
            + " --device=/dev/infiniband/rdma_cm (and --ulimit memlock=-1)";
        if (!Files.isDirectory(dir)) {
            c.add(Check.fail("/dev/infiniband is missing", "modprobe ib_uverbs rdma_ucm (after an RDMA device"
                + " exists); " + passIn));
            return c;
        }
        List<Path> files;
        try (Stream<Path> s = Files.list(dir)) {
            files = s.sorted().collect(Collectors.toList());
        } catch (IOException e) {
            c.add(Check.fail("/dev/infiniband cannot be listed: " + e, "chmod a+rx /dev/infiniband"));
            return c;
        }
        if (files.stream().noneMatch(f -> f.getFileName().toString().equals("rdma_cm"))) {
            c.add(Check.fail("/dev/infiniband/rdma_cm is missing (librdmacm needs it)", "modprobe rdma_ucm; "
                + passIn));
        }
        if (files.stream().noneMatch(f -> f.getFileName().toString().startsWith("uverbs"))) {
            c.add(Check.fail("no /dev/infiniband/uverbs* (libibverbs needs one per device)", "modprobe ib_uverbs; "
                + passIn));
        }
        Identity me;
        try {
            me = identity();
        } catch (IOException e) {
            c.add(Check.warn("cannot check access to /dev/infiniband: " + e.getMessage(), null));
            return c;
        }
        for (Path f : files) {
            String n = f.getFileName().toString();
            if (!n.equals("rdma_cm") && !n.startsWith("uverbs")) {
                continue;
            }
            String shown = "/dev/infiniband/" + n;
            try {
                String why = me.whyNotReadWrite(f);
                if (why == null) {
                    c.add(Check.ok(shown + ": read+write for uid=" + me.uid() + " (mode=" + Modes.describe(f) + ")"));
                } else {
                    String group = Files.readAttributes(f, PosixFileAttributes.class).group().getName();
                    c.add(Check.fail(shown + ": " + why, "usermod -aG " + group + " <user> (then log in again), or a"
                        + " udev rule: KERNEL==\"uverbs*|rdma_cm\", MODE=\"0666\" in /etc/udev/rules.d/90-rdma.rules"));
                }
            } catch (IOException | UnsupportedOperationException e) {
                c.add(Check.fail(shown + " cannot be checked: " + e, "check its owner and mode: ls -l " + shown));
            }
        }
        return c;
    }
}
