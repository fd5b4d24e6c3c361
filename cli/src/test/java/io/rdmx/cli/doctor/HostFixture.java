package io.rdmx.cli.doctor;

import io.rdmx.channel.ChannelConfig;
import io.rdmx.transport.Availability;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.FabricTraits;
import io.rdmx.transport.testsuite.FabricDouble;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Builds a fake machine under a directory: sysfs, /dev, /proc/self, library directories, the shm root. The
 * {@link #host()} starts as a healthy Java 25 JVM with unlimited memlock and usable fake providers; each test
 * breaks one thing.
 */
final class HostFixture {
    static final String LIBDIR = "usr/lib/x86_64-linux-gnu";
    static final Path SHM_ROOT = Path.of("/dev/shm/rdmx-test");
    static final int RING = 256 << 10;

    final Path root;
    private final List<Fabric> fabrics = new ArrayList<>();

    HostFixture(Path root) {
        this.root = root;
        for (String n : Doctor.PROVIDERS) {
            fabrics.add(fabric(n, true));
        }
    }

    Host host() {
        return new Host(root, 25, true, Map.of(), Map.of("os.arch", "amd64", "java.library.path", "/usr/lib",
            ChannelConfig.RING_CAPACITY_PROP, Integer.toString(RING)), Optional::empty, f -> null,
            () -> new LimitsReader.Limit(LimitsReader.Limit.UNLIMITED, LimitsReader.Limit.UNLIMITED), fabrics,
            SHM_ROOT, 2);
    }

    static Fabric fabric(String name, boolean usable) {
        return new FabricDouble(name, usable ? Availability.usable("fake " + name)
            : Availability.unusable("fake " + name + " says no"), new FabricTraits(FabricTraits.Reach.NETWORK,
            FabricTraits.Nic.IP_ROUTE, 0), null);
    }

    HostFixture write(String rel, String content) {
        try {
            Path p = root.resolve(rel);
            Files.createDirectories(p.getParent());
            Files.writeString(p, content + "\n");
            return this;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    HostFixture mkdir(String rel) {
        try {
            Files.createDirectories(root.resolve(rel));
            return this;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    HostFixture mode(String rel, String perms) {
        try {
            Files.setPosixFilePermissions(root.resolve(rel), PosixFilePermissions.fromString(perms));
            return this;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The user id that owns the fixture's files (whoever runs the test). */
    int fileOwner() {
        try {
            return (Integer) Files.getAttribute(root, "unix:uid");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    int fileGroup() {
        try {
            return (Integer) Files.getAttribute(root, "unix:gid");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** /proc/self/status of a process of this uid and groups, with or without CAP_IPC_LOCK. */
    HostFixture status(int uid, int gid, boolean ipcLock, int... groups) {
        StringBuilder g = new StringBuilder();
        for (int x : groups) {
            g.append(x).append(' ');
        }
        return write("proc/self/status", "Name:\tjava\nUmask:\t0022\nUid:\t" + uid + "\t" + uid + "\t" + uid + "\t"
            + uid + "\nGid:\t" + gid + "\t" + gid + "\t" + gid + "\t" + gid + "\nGroups:\t" + g + "\nCapEff:\t"
            + (ipcLock ? "0000000000004000" : "0000000000000000"));
    }

    /** libibverbs 1.14.39.0 and librdmacm 1.3.39.0 as Debian installs them (soname links), with the rxe plugin. */
    HostFixture libraries() {
        try {
            write(LIBDIR + "/libibverbs.so.1.14.39.0", "ELF");
            write(LIBDIR + "/librdmacm.so.1.3.39.0", "ELF");
            write(LIBDIR + "/libibverbs/librxe-rdmav34.so", "ELF");
            Files.createSymbolicLink(root.resolve(LIBDIR + "/libibverbs.so.1"), Path.of("libibverbs.so.1.14.39.0"));
            Files.createSymbolicLink(root.resolve(LIBDIR + "/librdmacm.so.1"), Path.of("librdmacm.so.1.3.39.0"));
            return this;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A port of a device; gids are written at indexes 0.. (the all-zero GID for an unpopulated entry). */
    HostFixture port(String dev, int port, String state, String linkLayer, String... gids) {
        String p = "sys/class/infiniband/" + dev + "/ports/" + port + "/";
        write(p + "state", state);
        write(p + "link_layer", linkLayer);
        write(p + "active_mtu", "1024 (3)");
        for (int i = 0; i < gids.length; i++) {
            write(p + "gids/" + i, gids[i]);
            if (!gids[i].equals(RdmaSysfs.ZERO_GID)) {
                write(p + "gid_attrs/types/" + i, "RoCE v2");
                write(p + "gid_attrs/ndevs/" + i, "eth0");
            }
        }
        return this;
    }

    /** /dev/infiniband/uverbs0 and rdma_cm with this mode. */
    HostFixture devices(String perms) {
        write("dev/infiniband/uverbs0", "");
        write("dev/infiniband/rdma_cm", "");
        mode("dev/infiniband/uverbs0", perms);
        return mode("dev/infiniband/rdma_cm", perms);
    }

    /** A working Soft-RoCE machine: libraries, rxe0 with an active port and a GID, devices open to all. */
    HostFixture healthyRxe() {
        status(fileOwner(), fileGroup(), false);
        libraries();
        mkdir("sys/module/rdma_rxe");
        write("sys/class/net/eth0/operstate", "up");
        port("rxe0", 1, "4: ACTIVE", "Ethernet", "fe80:0000:0000:0000:0250:56ff:fe8a:1b2c", RdmaSysfs.ZERO_GID);
        return devices("rw-rw-rw-");
    }
}
