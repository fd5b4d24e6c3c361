package io.rdmx.cli.doctor;

import io.rdmx.channel.ChannelConfig;
import io.rdmx.spi.Platform;
import io.rdmx.transport.Availability;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.internal.RdmaDevices;
import io.rdmx.transport.shm.ShmFabric;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * {@code rdmx doctor [--provider NAME] [--workers N] [--peers N]}: for each provider, whether it can work here and
 * exactly why not, with the fix. Exit code 0 when the requested provider ({@code --provider}, else
 * {@value Fabrics#DEFAULT_PROVIDER_PROP}, else {@code $}{@value Fabrics#DEFAULT_PROVIDER_ENV}, else
 * {@value Fabrics#DEFAULT_PROVIDER}) can work, 1 when it cannot, 2 on a usage error.
 *
 * <p>What is checked: the provider's own {@link Fabric#availability()}; for {@code shm} its root's existence,
 * owner and mode (the rules the provider enforces before it trusts the root); for {@code verbs} the Java version
 * and native access; for {@code verbs} and {@code disni} libibverbs and librdmacm (which file, which version),
 * each RDMA device's ports (state, link layer, active MTU, populated GIDs), the {@code rdma_rxe} module when
 * there is no device, the permissions of {@code /dev/infiniband/*} for this user, and RLIMIT_MEMLOCK against
 * what the channel rings would register.
 */
public final class Doctor {
    /** The providers diagnosed even when absent from the class path, in print order. */
    public static final List<String> PROVIDERS = List.of("loopback", "shm", "tcp", "verbs", "disni");
    /** Exit code: the requested provider can work. */
    public static final int EXIT_USABLE = 0;
    /** Exit code: the requested provider cannot work. */
    public static final int EXIT_UNUSABLE = 1;
    /** Exit code: bad arguments. */
    public static final int EXIT_USAGE = 2;

    private static final String USAGE = "usage: rdmx doctor [--provider NAME] [--workers N] [--peers N]";
    private static final Set<PosixFilePermission> GROUP_OTHER_WRITE = Set.of(PosixFilePermission.GROUP_WRITE,
        PosixFilePermission.OTHERS_WRITE);

    private final Host host;
    private final int workers;
    private final int peers;
    private List<Check> rdmaChecks;

    /**
     * @param host the machine
     * @param workers workers per process, for the memlock estimate
     * @param peers peer processes, for the memlock estimate
     */
    public Doctor(Host host, int workers, int peers) {
        if (workers < 1 || peers < 1) {
            throw new IllegalArgumentException("workers=" + workers + " and peers=" + peers + " must be >= 1");
        }
        this.host = host;
        this.workers = workers;
        this.peers = peers;
    }

    /**
     * Runs the command.
     *
     * @param args the arguments after {@code doctor}
     * @param out where the report goes
     * @param err where usage errors go
     * @param host the machine
     * @return the exit code
     */
    public static int run(String[] args, PrintStream out, PrintStream err, Host host) {
        String provider = null;
        int workers = host.cpus();
        int peers = 1;
        try {
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                String v = a.contains("=") ? a.substring(a.indexOf('=') + 1) : null;
                String k = v == null ? a : a.substring(0, a.indexOf('='));
                if (k.equals("-h") || k.equals("--help")) {
                    out.println(USAGE);
                    return EXIT_USABLE;
                }
                if (v == null && i + 1 < args.length) {
                    v = args[++i];
                }
                if (v == null) {
                    throw new IllegalArgumentException(k + " needs a value");
                }
                switch (k) {
                    case "--provider":
                        provider = v.trim().toLowerCase(Locale.ROOT);
                        break;
                    case "--workers":
                        workers = positive(k, v);
                        break;
                    case "--peers":
                        peers = positive(k, v);
                        break;
                    default:
                        throw new IllegalArgumentException("unknown option " + k);
                }
            }
        } catch (IllegalArgumentException e) {
            err.println("rdmx doctor: " + e.getMessage());
            err.println(USAGE);
            return EXIT_USAGE;
        }
        boolean explicit = provider != null;
        String requested = explicit ? provider : defaultProvider(host);
        Doctor d = new Doctor(host, workers, peers);
        List<String> names = d.providerNames();
        if (!names.contains(requested)) {
            err.println("rdmx doctor: unknown provider name=" + requested + " (" + (explicit ? "--provider"
                : "the default") + "); known=" + names);
            return EXIT_USAGE;
        }
        out.println("rdmx doctor: Java " + host.javaFeature() + ", uid=" + d.uidText() + ", memlock estimate for"
            + " workers=" + workers + " peers=" + peers + " (--workers, --peers)");
        out.println("rdmx doctor: security: " + security(host));
        Report wanted = null;
        for (String n : explicit ? List.of(requested) : names) {
            Report r = d.diagnose(n);
            out.println();
            print(r, n.equals(requested), out);
            if (n.equals(requested)) {
                wanted = r;
            }
        }
        long fails = wanted.checks().stream().filter(c -> c.level() == Check.Level.FAIL).count();
        out.println();
        out.println(wanted.usable()
            ? "rdmx doctor: the requested provider " + requested + " can work here"
            : "rdmx doctor: the requested provider " + requested + " cannot work here: " + fails
                + " FAIL line(s) above, each with its fix");
        return wanted.usable() ? EXIT_USABLE : EXIT_UNUSABLE;
    }

    /**
     * Whether a cluster secret is configured and from where (never the secret itself), whether nodes would refuse
     * to listen without one, and what the providers without authentication mean (docs/security.md).
     *
     * @param host the machine
     * @return one line
     */
    static String security(Host host) {
        String prop = host.property(NodeOptions.SECRET_PROP);
        String file = host.property(NodeOptions.SECRET_FILE_PROP);
        if (!nonBlank(file)) {
            file = host.env().get(NodeOptions.SECRET_FILE_ENV);
        }
        String source;
        if (nonBlank(prop)) {
            source = "system property " + NodeOptions.SECRET_PROP + " (visible to every local user in"
                + " /proc/<pid>/cmdline when given with -D: prefer " + NodeOptions.SECRET_FILE_PROP + ")";
        } else if (nonBlank(host.env().get(NodeOptions.SECRET_ENV))) {
            source = "environment " + NodeOptions.SECRET_ENV;
        } else if (nonBlank(file)) {
            source = "file " + file;
        } else {
            source = null;
        }
        String req = String.valueOf(host.property(NodeOptions.REQUIRE_SECRET_PROP)).strip();
        boolean require = "true".equalsIgnoreCase(req);
        String refuse = " and refuse to open (" + NodeOptions.REQUIRE_SECRET_PROP + "=true)";
        return (source == null ? "no cluster secret is set: tcp nodes on loopback (the default bind, 127.0.0.1) are"
            + " reachable from this host only; a tcp node bound beyond loopback, and every verbs or disni node,"
            + " accepts any peer that reaches it" + (require ? refuse : " and logs a WARN")
            : "cluster secret set from the " + source + ": every provider authenticates its peers")
            + "; on verbs and disni the NIC does not confine keys to one peer; no encryption on the data path"
            + " (docs/security.md)";
    }

    private static boolean nonBlank(String s) {
        return s != null && !s.isBlank();
    }

    private static int positive(String key, String v) {
        try {
            int n = Integer.parseInt(v.trim());
            if (n >= 1) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(key + "=" + v + " is not a positive integer");
    }

    /**
     * @param host the machine
     * @return {@value Fabrics#DEFAULT_PROVIDER_PROP}, else {@code $}{@value Fabrics#DEFAULT_PROVIDER_ENV}, else
     *     {@value Fabrics#DEFAULT_PROVIDER}
     */
    static String defaultProvider(Host host) {
        String p = host.property(Fabrics.DEFAULT_PROVIDER_PROP);
        if (p == null || p.isBlank()) {
            p = host.env().get(Fabrics.DEFAULT_PROVIDER_ENV);
        }
        return p == null || p.isBlank() ? Fabrics.DEFAULT_PROVIDER : p.trim().toLowerCase(Locale.ROOT);
    }

    /** @return the known providers and any other on the class path */
    List<String> providerNames() {
        Set<String> n = new LinkedHashSet<>(PROVIDERS);
        host.fabrics().forEach(f -> n.add(f.name()));
        return new ArrayList<>(n);
    }

    /**
     * Prints a report: a header line, then one line per check, each FAIL or WARN followed by its fix.
     *
     * @param r the report
     * @param requested whether it is the requested provider
     * @param out where to print
     */
    public static void print(Report r, boolean requested, PrintStream out) {
        out.println(r.provider() + ": " + (r.usable() ? "can work" : "CANNOT WORK")
            + (requested ? " (requested)" : ""));
        for (Check c : r.checks()) {
            out.printf(Locale.ROOT, "  %-5s %s%n", c.level(), c.text());
            if (c.fix() != null) {
                out.println("        fix: " + c.fix());
            }
        }
    }

    /** @return every provider's report, in {@link #providerNames()} order */
    public List<Report> diagnose() {
        return providerNames().stream().map(this::diagnose).collect(Collectors.toList());
    }

    /**
     * @param provider a provider name
     * @return its report
     */
    public Report diagnose(String provider) {
        List<Check> c = new ArrayList<>();
        switch (provider) {
            case "shm":
                c.add(shmRoot());
                break;
            case "verbs":
                c.addAll(java());
                c.addAll(libraries());
                c.addAll(rdma());
                c.add(memlock());
                break;
            case "disni":
                c.add(libdisni());
                c.addAll(libraries());
                c.addAll(rdma());
                c.add(memlock());
                break;
            default:
                break;
        }
        c.add(fabric(provider));
        return new Report(provider, c);
    }

    // --- the provider itself --------------------------------------------------------------------------------

    private Check fabric(String name) {
        Optional<Fabric> f = host.fabrics().stream().filter(x -> x.name().equals(name)).findFirst();
        if (f.isEmpty()) {
            String fix;
            switch (name) {
                case "verbs":
                    fix = "build rdmx-verbs with a JDK 22+ (mvn -pl verbs -am install) and put"
                        + " verbs/target/rdmx-verbs-*.jar on the class path (scripts/rdmx does both on a JDK 22+)";
                    break;
                case "disni":
                    fix = "put rdmx-disni and com.ibm.disni:disni:2.1 on the class path";
                    break;
                default:
                    fix = "put rdmx-core on the class path with its META-INF/services/io.rdmx.transport.Fabric";
                    break;
            }
            return Check.fail("provider " + name + " is not on the class path (ServiceLoader found "
                + host.fabrics().stream().map(Fabric::name).collect(Collectors.toList()) + ")", fix);
        }
        Availability a;
        try {
            a = f.get().availability();
        } catch (RuntimeException | LinkageError e) {
            return Check.fail("provider " + name + ": availability() threw " + e,
                "report this as a bug: availability() must explain, not throw");
        }
        if (a.usable()) {
            return Check.ok("provider " + name + " says usable: " + a.reason());
        }
        String fix;
        switch (name) {
            case "shm":
                fix = "run on Linux (shm uses the JDK's Unix-domain sockets with SO_PEERCRED, /proc/self and "
                    + "memory-mapped files; any os.arch)";
                break;
            case "tcp":
                fix = "tcp needs the JDK's TCP sockets only: see the provider's reason";
                break;
            case "verbs":
            case "disni":
                fix = "fix the FAIL lines above; the provider's own check is what open() will report";
                break;
            default:
                fix = "see the provider's reason";
                break;
        }
        return Check.fail("provider " + name + " says unusable: " + a.reason(), fix);
    }

    // --- shm ----------------------------------------------------------------------------------------------------

    /**
     * The shm root against the rules {@code ShmFabric} enforces before trusting it (see {@code ShmTrust}): owned by
     * this user, not writable by group or others, not a symbolic link; absent is fine when its parent lets the
     * provider create it (mode 0700).
     */
    private Check shmRoot() {
        Path shown = host.shmRoot();
        Path p = host.path(shown);
        String fixOwn = "set -D" + ShmFabric.ROOT_PROP + " to a directory of your own, mode 0700";
        PosixFileAttributes a;
        try {
            a = Files.readAttributes(p, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            Path parent = p.getParent();
            if (parent != null && Files.isDirectory(parent)) {
                String why = whyNotWritable(parent);
                if (why == null) {
                    return Check.ok("shm root " + shown + " absent: the provider creates it (mode 0700) in "
                        + shown.getParent() + " " + Modes.describe(parent));
                }
                return Check.fail("shm root " + shown + " absent and its parent " + shown.getParent()
                    + " is not writable: " + why, fixOwn);
            }
            return Check.fail("shm root " + shown + " absent and its parent " + shown.getParent() + " is missing",
                fixOwn + " (or mount a tmpfs at /dev/shm)");
        }
        if (a.isSymbolicLink()) {
            return Check.fail("shm root " + shown + " is a symbolic link: the provider refuses it",
                "remove the link (rm " + shown + ": another user may have planted it) or " + fixOwn);
        }
        if (!a.isDirectory()) {
            return Check.fail("shm root " + shown + " is not a directory: the provider refuses it",
                "remove it (rm " + shown + ") or " + fixOwn);
        }
        Identity me;
        int owner;
        try {
            me = identity();
            owner = (Integer) Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        } catch (IOException | UnsupportedOperationException e) {
            return Check.fail("shm root " + shown + ": cannot read its owner or this process's uid: " + e, fixOwn);
        }
        String mode = Modes.describe(p, LinkOption.NOFOLLOW_LINKS);
        if (owner != me.uid()) {
            return Check.fail("shm root " + shown + " is owned by uid=" + owner + ", not by this process's uid="
                + me.uid() + ": the provider refuses it", "remove it as its owner or root (rm -r " + shown
                + ") or " + fixOwn);
        }
        if (a.permissions().stream().anyMatch(GROUP_OTHER_WRITE::contains)) {
            return Check.fail("shm root " + shown + " is writable by group or others (mode=" + mode
                + "): the provider refuses it", "chmod 700 " + shown);
        }
        return Check.ok("shm root " + shown + ": a directory owned by uid=" + owner + ", mode=" + mode);
    }

    private String whyNotWritable(Path dir) {
        try {
            Identity me = identity();
            if (me.uid() == 0) {
                return null;
            }
            int owner = (Integer) Files.getAttribute(dir, "unix:uid");
            int group = (Integer) Files.getAttribute(dir, "unix:gid");
            Set<PosixFilePermission> p = Files.getPosixFilePermissions(dir);
            boolean ok = owner == me.uid() ? p.contains(PosixFilePermission.OWNER_WRITE)
                : me.gids().contains(group) ? p.contains(PosixFilePermission.GROUP_WRITE)
                : p.contains(PosixFilePermission.OTHERS_WRITE);
            return ok ? null : "uid=" + me.uid() + " may not write to mode=" + Modes.describe(dir) + " owned by uid="
                + owner + " gid=" + group;
        } catch (IOException | UnsupportedOperationException e) {
            return "cannot check: " + e;
        }
    }

    private Identity identity() throws IOException {
        return Identity.read(host.root());
    }

    private String uidText() {
        try {
            Identity me = identity();
            return me.uid() + (me.ipcLock() ? " (CAP_IPC_LOCK)" : "");
        } catch (IOException e) {
            return "? (" + e.getMessage() + ")";
        }
    }

    // --- Java ---------------------------------------------------------------------------------------------------

    private List<Check> java() {
        List<Check> c = new ArrayList<>();
        int f = host.javaFeature();
        if (f < 22) {
            c.add(Check.fail("Java " + f + ": the verbs provider needs java.lang.foreign, final in Java 22",
                "run with a JDK 22+ (25 recommended; scripts/rdmx picks $RDMX_JAVA_HOME first), or use the disni"
                    + " provider on Java " + f));
            return c;
        }
        c.add(Check.ok("Java " + f + " has java.lang.foreign (the verbs provider needs 22+)"));
        Boolean na = host.nativeAccess();
        if (Boolean.TRUE.equals(na)) {
            c.add(Check.ok("native access enabled for the class path (--enable-native-access=ALL-UNNAMED)"));
        } else {
            c.add(Check.warn("native access " + (na == null ? "unknown" : "not enabled") + " for the class path:"
                + " Java " + f + " warns at the first downcall, and later releases refuse it",
                "java --enable-native-access=ALL-UNNAMED (on the module path: =io.rdmx.verbs);"
                    + " scripts/rdmx passes it on Java 23+"));
        }
        return c;
    }

    // --- native libraries ---------------------------------------------------------------------------------------

    private List<Check> libraries() {
        List<Check> c = new ArrayList<>();
        NativeLibraries libs = new NativeLibraries(host);
        boolean cache = host.ldconfig().get().isPresent();
        String where = (cache ? "ldconfig -p" : "ldconfig -p (cannot run)") + " and " + libs.searchDirs();
        String pkg = "install rdma-core's libraries: apt-get install libibverbs1 librdmacm1 ibverbs-providers"
            + " (Debian/Ubuntu), dnf install libibverbs librdmacm (Fedora/RHEL); or add their directory to"
            + " LD_LIBRARY_PATH";
        for (String so : List.of("libibverbs.so.1", "librdmacm.so.1")) {
            Optional<NativeLibraries.Found> f = libs.find(so);
            if (f.isEmpty()) {
                c.add(Check.fail(so + " not found in " + where, pkg));
                continue;
            }
            NativeLibraries.Found found = f.get();
            String v = found.version();
            String text = so + " at " + found.file() + (found.real().equals(found.file()) ? ""
                : " -> " + found.real()) + ", version " + (v == null ? "unknown (not in the file name)" : v)
                + " (found by " + found.how() + ")";
            String err = host.loader().load(host.path(found.real()));
            if (err != null) {
                c.add(Check.fail(text + ", but dlopen failed: " + err,
                    "reinstall rdma-core for this architecture (os.arch=" + host.property("os.arch")
                        + "); ldd " + found.real() + " names a missing dependency"));
                continue;
            }
            c.add(Check.ok(text + ", dlopen OK"));
            if (so.startsWith("libibverbs")) {
                List<String> drivers = libs.verbsDrivers(found);
                if (drivers.isEmpty()) {
                    c.add(Check.warn("no libibverbs provider plugins in " + found.real().getParent().resolve(
                        "libibverbs") + ": ibv_get_device_list finds no device without them",
                        "apt-get install ibverbs-providers (Debian/Ubuntu); rdma-core on Fedora/RHEL"));
                } else {
                    c.add(Check.ok("libibverbs provider plugins: " + drivers));
                }
            }
        }
        return c;
    }

    private Check libdisni() {
        String jlp = host.property("java.library.path");
        List<String> dirs = jlp == null ? List.of() : List.of(jlp.split(":"));
        for (String d : dirs) {
            if (d.startsWith("/") && Files.exists(host.path(d).resolve("libdisni.so"))) {
                return Check.ok("libdisni.so in " + d + " (java.library.path)");
            }
        }
        return Check.fail("libdisni.so not in java.library.path=" + jlp,
            "build libdisni.so from DiSNI 2.1's sources and pass -Djava.library.path=<its directory>");
    }

    // --- RDMA devices -------------------------------------------------------------------------------------------

    private List<Check> rdma() {
        if (rdmaChecks == null) {
            List<Check> c = new ArrayList<>(devices());
            c.addAll(deviceFiles());
            rdmaChecks = c;
        }
        return rdmaChecks;
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

    // --- memlock ------------------------------------------------------------------------------------------------

    /**
     * RLIMIT_MEMLOCK against the channel rings' registered memory: per peer, one region of
     * {@code 2 x workers x peerWorkers x ringCapacity} bytes (see {@code PairLayout}), every worker count equal.
     */
    private Check memlock() {
        int capacity;
        try {
            String v = host.property(ChannelConfig.RING_CAPACITY_PROP);
            capacity = v == null ? Platform.intValue(ChannelConfig.RING_CAPACITY_PROP,
                ChannelConfig.RING_CAPACITY_DEFAULT) : Integer.parseInt(v.trim());
            ChannelConfig.builder(Math.min(workers, 256)).ringCapacity(capacity).build();
        } catch (IllegalArgumentException e) {
            return Check.fail("channel configuration invalid: " + e.getMessage(),
                "set -D" + ChannelConfig.RING_CAPACITY_PROP + " to a power of two in [1024, 1 GiB]");
        }
        long need = (long) peers * 2 * workers * workers * capacity;
        String formula = "peers " + peers + " x 2 directions x workers " + workers + " x peer workers " + workers
            + " x ringCapacity " + capacity + " (" + ChannelConfig.RING_CAPACITY_PROP + ") = " + bytes(need)
            + ", plus control slots and the application's own regions";
        LimitsReader.Limit l;
        try {
            l = host.limits().memlock();
        } catch (IOException e) {
            return Check.warn("cannot read RLIMIT_MEMLOCK: " + e.getMessage() + "; the rings need " + formula,
                "check ulimit -l");
        }
        String soft = "RLIMIT_MEMLOCK soft=" + bytes(l.soft()) + " hard=" + bytes(l.hard());
        boolean ipcLock;
        try {
            ipcLock = identity().ipcLock();
        } catch (IOException e) {
            ipcLock = false;
        }
        if (ipcLock) {
            return Check.ok(soft + ", not enforced: this process holds CAP_IPC_LOCK; the rings need " + formula);
        }
        if (l.soft() >= need) {
            return Check.ok(soft + " >= needed " + formula);
        }
        long kib = (need + 1023) / 1024;
        String fix = l.hard() >= need
            ? "ulimit -l " + (l.hard() == LimitsReader.Limit.UNLIMITED ? "unlimited" : Long.toString(kib))
                + " before starting the JVM (the hard limit allows it)"
            : "raise the hard limit: '<user> - memlock unlimited' in /etc/security/limits.conf (then log in again),"
                + " LimitMEMLOCK=infinity for a systemd service, docker run --ulimit memlock=-1:-1; or fewer"
                + " --workers / a smaller -D" + ChannelConfig.RING_CAPACITY_PROP;
        return Check.fail(soft + " < needed " + formula, fix);
    }

    /**
     * @param n bytes, {@link LimitsReader.Limit#UNLIMITED} for none
     * @return such as {@code 8 MiB (8388608 bytes)} or {@code unlimited}
     */
    static String bytes(long n) {
        if (n == LimitsReader.Limit.UNLIMITED) {
            return "unlimited";
        }
        String[] units = {"bytes", "KiB", "MiB", "GiB", "TiB"};
        int u = 0;
        double v = n;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        String h = u == 0 ? n + " bytes" : (v == Math.floor(v) ? Long.toString((long) v)
            : String.format(Locale.ROOT, "%.1f", v)) + " " + units[u];
        return u == 0 ? h : h + " (" + n + " bytes)";
    }
}
