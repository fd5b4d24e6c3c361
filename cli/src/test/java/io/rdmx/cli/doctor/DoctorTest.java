package io.rdmx.cli.doctor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Availability;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.FabricTraits;
import io.rdmx.transport.HostNeed;
import io.rdmx.transport.testsuite.FabricDouble;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code rdmx doctor} against fixture machines: each test breaks one thing and expects the line that names it. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class DoctorTest {
    private static final String GID = "fe80:0000:0000:0000:0250:56ff:fe8a:1b2c";

    @TempDir
    Path root;
    private HostFixture fx;

    @BeforeEach
    void fixture() {
        fx = new HostFixture(root);
    }

    private static Check line(Report r, String contains) {
        List<Check> m = r.checks().stream().filter(c -> c.text().contains(contains)).collect(Collectors.toList());
        assertEquals(1, m.size(), () -> "lines containing '" + contains + "' in " + r);
        return m.get(0);
    }

    private static Report verbs(Host h) {
        return new Doctor(h, 2, 1).diagnose("verbs");
    }

    private static String levels(Report r) {
        return r.checks().stream().map(c -> c.level() + " " + c.text()).collect(Collectors.joining("\n"));
    }

    private static final class Run {
        final int exit;
        final String out;
        final String err;

        Run(Host h, String... args) {
            ByteArrayOutputStream o = new ByteArrayOutputStream();
            ByteArrayOutputStream e = new ByteArrayOutputStream();
            exit = Doctor.run(args, new PrintStream(o, true, StandardCharsets.UTF_8),
                new PrintStream(e, true, StandardCharsets.UTF_8), h);
            out = o.toString(StandardCharsets.UTF_8);
            err = e.toString(StandardCharsets.UTF_8);
        }
    }

    @Test
    void healthyRxeMachineHasNoWarningOrFailure() {
        fx.healthyRxe();
        Report r = verbs(fx.host());
        assertTrue(r.checks().stream().allMatch(c -> c.level() == Check.Level.OK), levels(r));
        assertEquals(Check.Level.OK, line(r, "rxe0 port 1: state=4: ACTIVE").level());
        assertTrue(line(r, "rxe0 port 1: 1 GID(s)").text().endsWith("[0] " + GID + " RoCE v2 on eth0"), levels(r));
        assertEquals(Check.Level.OK, line(r, "rdma_rxe module loaded").level());
        Run run = new Run(fx.host(), "--provider", "verbs");
        assertEquals(Doctor.EXIT_USABLE, run.exit, run.out);
        assertTrue(run.out.contains("verbs: can work (requested)"), run.out);
    }

    @Test
    void noRdmaDeviceSaysHowToCreateAnRxeDevice() {
        fx.healthyRxe();
        Path rxe = root.resolve("sys/class/infiniband/rxe0");
        deleteTree(rxe);
        deleteTree(root.resolve("sys/module/rdma_rxe"));
        Report r = verbs(fx.host());
        Check c = line(r, "no RDMA device");
        assertEquals(Check.Level.FAIL, c.level());
        assertEquals("no RDMA device: /sys/class/infiniband is empty", c.text());
        assertTrue(c.fix().contains("modprobe rdma_rxe; rdma link add rxe0 type rxe netdev eth0"), c.fix());
        assertEquals(Check.Level.WARN, line(r, "rdma_rxe module not loaded").level());
        Run run = new Run(fx.host(), "--provider=verbs");
        assertEquals(Doctor.EXIT_UNUSABLE, run.exit, run.out);
        assertTrue(run.out.contains("verbs: CANNOT WORK (requested)"), run.out);
        assertTrue(run.out.contains("  FAIL  no RDMA device: /sys/class/infiniband is empty\n        fix: "), run.out);
    }

    @Test
    void portDownFailsWithTheInterfaceToBringUp() {
        fx.healthyRxe();
        fx.write("sys/class/infiniband/rxe0/ports/1/state", "1: DOWN");
        Report r = verbs(fx.host());
        Check c = line(r, "rxe0 port 1: state=1: DOWN");
        assertEquals(Check.Level.FAIL, c.level());
        assertTrue(c.text().contains("(not ACTIVE), link_layer=Ethernet, active_mtu=1024 (3)"), c.text());
        assertEquals("bring its network interface up (RoCE follows the link): ip link set eth0 up", c.fix());
        assertFalse(r.usable());
    }

    @Test
    void aDownPortIsOnlyAWarningWhenAnotherPortWorks() {
        fx.healthyRxe();
        fx.port("rxe1", 1, "1: DOWN", "Ethernet", GID);
        Report r = verbs(fx.host());
        assertEquals(Check.Level.WARN, line(r, "rxe1 port 1: state=1: DOWN").level());
        assertTrue(r.usable(), levels(r));
    }

    @Test
    void missingGidTableFails() {
        fx.healthyRxe();
        deleteTree(root.resolve("sys/class/infiniband/rxe0/ports/1/gids"));
        Report r = verbs(fx.host());
        Check c = line(r, "no GID table");
        assertEquals(Check.Level.FAIL, c.level());
        assertEquals("rxe0 port 1: no GID table (/sys/class/infiniband/rxe0/ports/1/gids is missing)", c.text());
        assertTrue(c.fix().contains("rdma link delete rxe0; rdma link add rxe0 type rxe netdev"), c.fix());
    }

    @Test
    void allZeroGidsFailWithTheAddressToAdd() {
        fx.healthyRxe();
        fx.write("sys/class/infiniband/rxe0/ports/1/gids/0", RdmaSysfs.ZERO_GID);
        Report r = verbs(fx.host());
        Check c = line(r, "entries of");
        assertEquals(Check.Level.FAIL, c.level());
        assertEquals("rxe0 port 1: all 2 entries of /sys/class/infiniband/rxe0/ports/1/gids are zero", c.text());
        assertTrue(c.fix().contains("ip addr add"), c.fix());
    }

    @Test
    void memlockTooLowFailsAndPrintsTheFormula() {
        fx.healthyRxe();
        Host h = fx.host().withLimits(() -> new LimitsReader.Limit(64 << 10, 64 << 10));
        Check c = line(verbs(h), "RLIMIT_MEMLOCK");
        assertEquals(Check.Level.FAIL, c.level());
        assertEquals("RLIMIT_MEMLOCK soft=64 KiB (65536 bytes) hard=64 KiB (65536 bytes) < needed peers 1 x 2"
            + " directions x workers 2 x peer workers 2 x ringCapacity 262144 (rdmx.channel.ringCapacity) = 2 MiB"
            + " (2097152 bytes), plus control slots and the application's own regions", c.text());
        assertTrue(c.fix().contains("memlock unlimited"), c.fix());
        Check raisable = line(verbs(fx.host().withLimits(() -> new LimitsReader.Limit(64 << 10,
            LimitsReader.Limit.UNLIMITED))), "RLIMIT_MEMLOCK");
        assertEquals(Check.Level.FAIL, raisable.level());
        assertTrue(raisable.fix().startsWith("ulimit -l unlimited"), raisable.fix());
        Check enough = line(verbs(fx.host().withLimits(() -> new LimitsReader.Limit(2 << 20, 2 << 20))),
            "RLIMIT_MEMLOCK");
        assertEquals(Check.Level.OK, enough.level(), enough.text());
    }

    @Test
    void memlockGrowsWithWorkersAndPeers() {
        fx.healthyRxe();
        Host h = fx.host().withLimits(() -> new LimitsReader.Limit(8 << 20, 8 << 20));
        Check c = line(new Doctor(h, 4, 3).diagnose("verbs"), "RLIMIT_MEMLOCK");
        assertEquals(Check.Level.FAIL, c.level()); // 3 x 2 x 4 x 4 x 256 KiB = 24 MiB
        assertTrue(c.text().contains("= 24 MiB (25165824 bytes)"), c.text());
    }

    @Test
    void capIpcLockLiftsTheMemlockLimit() {
        fx.healthyRxe();
        fx.status(fx.fileOwner(), fx.fileGroup(), true);
        Check c = line(verbs(fx.host().withLimits(() -> new LimitsReader.Limit(64 << 10, 64 << 10))),
            "RLIMIT_MEMLOCK");
        assertEquals(Check.Level.OK, c.level());
        assertTrue(c.text().contains("not enforced: this process holds CAP_IPC_LOCK"), c.text());
    }

    @Test
    void deviceFilesNotAccessibleToThisUser() {
        fx.healthyRxe();
        fx.devices("rw-------");
        int stranger = fx.fileOwner() + 1000;
        int strangerGroup = fx.fileGroup() + 1000;
        fx.status(stranger, strangerGroup, false);
        Report r = verbs(fx.host());
        Check c = line(r, "/dev/infiniband/uverbs0");
        assertEquals(Check.Level.FAIL, c.level());
        assertEquals("/dev/infiniband/uverbs0: uid=" + stranger + " is neither its owner uid=" + fx.fileOwner()
            + " nor in its group gid=" + fx.fileGroup() + " and mode=rw------- (0600) gives no read+write", c.text());
        assertTrue(c.fix().startsWith("usermod -aG "), c.fix());
        assertEquals(Check.Level.FAIL, line(r, "/dev/infiniband/rdma_cm:").level());
        // a member of the file's group may use a 0660 device
        fx.devices("rw-rw----");
        fx.status(stranger, strangerGroup, false, fx.fileGroup());
        assertEquals(Check.Level.OK, line(verbs(fx.host()), "/dev/infiniband/uverbs0").level());
    }

    @Test
    void missingRdmaCmDeviceFails() throws IOException {
        fx.healthyRxe();
        Files.delete(root.resolve("dev/infiniband/rdma_cm"));
        Check c = line(verbs(fx.host()), "rdma_cm is missing");
        assertEquals(Check.Level.FAIL, c.level());
        assertTrue(c.fix().startsWith("modprobe rdma_ucm"), c.fix());
    }

    @Test
    void shmRootWritableByOthersIsRefused() {
        fx.status(fx.fileOwner(), fx.fileGroup(), false);
        fx.mkdir("dev/shm/rdmx-test").mode("dev/shm/rdmx-test", "rwxrwxrwx");
        Report r = new Doctor(fx.host(), 2, 1).diagnose("shm");
        Check c = line(r, "shm root");
        assertEquals(Check.Level.FAIL, c.level());
        assertEquals("shm root /dev/shm/rdmx-test is writable by group or others (mode=rwxrwxrwx (0777)): the"
            + " provider refuses it", c.text());
        assertEquals("chmod 700 /dev/shm/rdmx-test", c.fix());
        Run run = new Run(fx.host());
        assertEquals(Doctor.EXIT_UNUSABLE, run.exit, "shm is the default provider: " + run.out);
        assertTrue(run.out.contains("shm: CANNOT WORK (requested)"), run.out);
        fx.mode("dev/shm/rdmx-test", "rwx------");
        assertEquals(Check.Level.OK, line(new Doctor(fx.host(), 2, 1).diagnose("shm"), "shm root").level());
    }

    @Test
    void shmRootOfAnotherUserOrALinkIsRefused() throws IOException {
        fx.mkdir("dev/shm/rdmx-test").mode("dev/shm/rdmx-test", "rwx------");
        fx.status(fx.fileOwner() + 1000, fx.fileGroup(), false);
        Check other = line(new Doctor(fx.host(), 2, 1).diagnose("shm"), "shm root");
        assertEquals(Check.Level.FAIL, other.level());
        assertTrue(other.text().contains("is owned by uid=" + fx.fileOwner() + ", not by this process's uid="
            + (fx.fileOwner() + 1000)), other.text());
        fx.status(fx.fileOwner(), fx.fileGroup(), false);
        deleteTree(root.resolve("dev/shm/rdmx-test"));
        fx.mkdir("elsewhere");
        Files.createSymbolicLink(root.resolve("dev/shm/rdmx-test"), root.resolve("elsewhere"));
        Check link = line(new Doctor(fx.host(), 2, 1).diagnose("shm"), "shm root");
        assertEquals(Check.Level.FAIL, link.level());
        assertTrue(link.text().endsWith("is a symbolic link: the provider refuses it"), link.text());
    }

    @Test
    void absentShmRootIsCreatedByTheProvider() {
        fx.status(fx.fileOwner(), fx.fileGroup(), false);
        fx.mkdir("dev/shm");
        Check c = line(new Doctor(fx.host(), 2, 1).diagnose("shm"), "shm root");
        assertEquals(Check.Level.OK, c.level());
        assertTrue(c.text().startsWith("shm root /dev/shm/rdmx-test absent: the provider creates it"), c.text());
    }

    @Test
    void java17CannotRunVerbsAndMissingNativeAccessWarns() {
        fx.healthyRxe();
        Check old = line(verbs(fx.host().withJava(17, null)), "Java 17");
        assertEquals(Check.Level.FAIL, old.level());
        assertTrue(old.text().contains("java.lang.foreign, final in Java 22"), old.text());
        Check na = line(verbs(fx.host().withJava(25, false)), "native access");
        assertEquals(Check.Level.WARN, na.level());
        assertTrue(na.fix().startsWith("java --enable-native-access=ALL-UNNAMED"), na.fix());
    }

    @Test
    void librariesNameTheFileTheVersionAndHowTheyWereFound() {
        fx.healthyRxe();
        Check c = line(verbs(fx.host()), "libibverbs.so.1 at");
        assertEquals("libibverbs.so.1 at /usr/lib/x86_64-linux-gnu/libibverbs.so.1 -> /usr/lib/x86_64-linux-gnu/"
            + "libibverbs.so.1.14.39.0, version 1.14.39.0 (found by search of /usr/lib/x86_64-linux-gnu), dlopen OK",
            c.text());
        assertTrue(line(verbs(fx.host()), "librdmacm.so.1 at").text().contains("version 1.3.39.0"));
        fx.write("opt/rdma/lib/libibverbs.so.1", "ELF");
        Host cached = fx.host().withLdconfig(() -> Optional.of("2 libs found in cache `/etc/ld.so.cache'\n"
            + "\tlibibverbs.so.1 (libc6,x86-64) => /opt/rdma/lib/libibverbs.so.1\n"));
        Check viaCache = line(verbs(cached), "libibverbs.so.1 at");
        assertEquals(Check.Level.OK, viaCache.level());
        assertTrue(viaCache.text().startsWith("libibverbs.so.1 at /opt/rdma/lib/libibverbs.so.1, version unknown"
            + " (not in the file name) (found by ldconfig -p)"), viaCache.text());
    }

    @Test
    void missingOrUnloadableLibraryFails() throws IOException {
        fx.healthyRxe();
        Files.delete(root.resolve(HostFixture.LIBDIR + "/librdmacm.so.1"));
        Check missing = line(verbs(fx.host()), "librdmacm.so.1 not found");
        assertEquals(Check.Level.FAIL, missing.level());
        assertTrue(missing.fix().contains("librdmacm1"), missing.fix());
        Host broken = new Host(fx.root, 25, true, java.util.Map.of(), fx.host().properties(), Optional::empty,
            f -> f.getFileName() + ": wrong ELF class: ELFCLASS32", fx.host().limits(), fx.host().fabrics(),
            HostFixture.SHM_ROOT, 2);
        Check bad = line(verbs(broken), "libibverbs.so.1 at");
        assertEquals(Check.Level.FAIL, bad.level());
        assertTrue(bad.text().endsWith("dlopen failed: libibverbs.so.1.14.39.0: wrong ELF class: ELFCLASS32"),
            bad.text());
    }

    @Test
    void providerAbsentFromTheClassPathFailsWithHowToAddIt() {
        fx.healthyRxe();
        Host h = fx.host().withFabrics(List.of(HostFixture.fabric("shm", true)));
        Check c = line(verbs(h), "provider verbs");
        assertEquals(Check.Level.FAIL, c.level());
        assertEquals("provider verbs is not on the class path (ServiceLoader found [shm])", c.text());
        Check no = line(new Doctor(fx.host().withFabrics(List.of(HostFixture.fabric("tcp", false))), 2, 1)
            .diagnose("tcp"), "provider tcp");
        assertEquals("provider tcp says unusable: fake tcp says no", no.text());
        assertEquals(Check.Level.FAIL, no.level());
    }

    @Test
    void aProviderIsCheckedForWhatItDeclaresItNeedsWhateverItsName() {
        fx.healthyRxe();
        Fabric other = new FabricDouble("ib2", Availability.unusable("ib2 found no port", "plug in the cable"),
            new FabricTraits(FabricTraits.Reach.NETWORK, FabricTraits.Nic.RDMA_DEVICE, 0),
            Set.of(HostNeed.RDMA_DEVICE, HostNeed.MEMLOCK));
        Report r = new Doctor(fx.host().withFabrics(List.of(other)), 2, 1).diagnose("ib2");
        assertEquals(Check.Level.OK, line(r, "rxe0 port 1: state=4: ACTIVE").level(), levels(r));
        assertTrue(r.checks().stream().anyMatch(c -> c.text().contains("RLIMIT_MEMLOCK")), levels(r));
        assertTrue(r.checks().stream().noneMatch(c -> c.text().contains("libibverbs")), levels(r));
        Check self = line(r, "provider ib2");
        assertEquals("provider ib2 says unusable: ib2 found no port", self.text());
        assertEquals("plug in the cable", self.fix());
        Report plain = new Doctor(fx.host().withFabrics(List.of(HostFixture.fabric("ib3", true))), 2, 1)
            .diagnose("ib3");
        assertEquals(1, plain.checks().size(), levels(plain));
    }

    @Test
    void usageErrorsExitWithTwoAndNameTheValue() {
        fx.healthyRxe();
        Run unknown = new Run(fx.host(), "--provider", "ib");
        assertEquals(Doctor.EXIT_USAGE, unknown.exit);
        assertTrue(unknown.err.contains("unknown provider name=ib (--provider)"), unknown.err);
        Run workers = new Run(fx.host(), "--workers", "0");
        assertEquals(Doctor.EXIT_USAGE, workers.exit);
        assertTrue(workers.err.contains("--workers=0 is not a positive integer"), workers.err);
        Run dangling = new Run(fx.host(), "--provider");
        assertEquals(Doctor.EXIT_USAGE, dangling.exit);
        assertTrue(dangling.err.contains("--provider needs a value"), dangling.err);
    }

    @Test
    void theDefaultProviderComesFromTheProperty() {
        fx.healthyRxe();
        fx.mkdir("dev/shm");
        java.util.Map<String, String> p = new java.util.HashMap<>(fx.host().properties());
        p.put("rdmx.provider", "verbs");
        fx.write("sys/class/infiniband/rxe0/ports/1/state", "1: DOWN");
        Run run = new Run(fx.host().withProperties(p));
        assertEquals(Doctor.EXIT_UNUSABLE, run.exit, run.out);
        assertTrue(run.out.contains("verbs: CANNOT WORK (requested)"), run.out);
        assertTrue(run.out.contains("shm: can work\n"), "all providers are listed: " + run.out);
    }

    @Test
    void aFailWithoutAFixIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> Check.fail("broken", " "));
    }

    private static void deleteTree(Path p) {
        try (java.util.stream.Stream<Path> s = Files.walk(p)) {
            for (Path q : s.sorted(java.util.Comparator.reverseOrder()).collect(Collectors.toList())) {
                Files.delete(q);
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void theSecurityLineSaysWhereTheSecretComesFromAndNeverShowsIt() {
        Host none = fx.host().withProperties(java.util.Map.of());
        String s = Doctor.security(none);
        assertTrue(s.contains("no cluster secret is set") && s.contains("logs a WARN")
            && s.contains("every verbs or disni node"), s);
        Host file = fx.host().withProperties(java.util.Map.of("rdmx.secretFile", "/etc/rdmx/secret",
            "rdmx.requireSecret", "true"));
        s = Doctor.security(file);
        assertTrue(s.contains("file /etc/rdmx/secret") && s.contains("every provider authenticates"), s);
        s = Doctor.security(fx.host().withProperties(java.util.Map.of("rdmx.requireSecret", "true")));
        assertTrue(s.contains("no cluster secret is set") && s.contains("refuse to open (rdmx.requireSecret=true)"),
            s);
        Host prop = fx.host().withProperties(java.util.Map.of("rdmx.secret", "hunter2"));
        s = Doctor.security(prop);
        assertTrue(s.contains("system property rdmx.secret") && s.contains("/proc/<pid>/cmdline"), s);
        assertFalse(s.contains("hunter2"), "the secret itself is never printed: " + s);
    }
}
