package io.rdmx.bench.channel;

import io.rdmx.bench.report.ChildJvm;
import io.rdmx.bench.report.Hosts;
import io.rdmx.bench.report.Report;
import io.rdmx.channel.ChannelConfig;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;

/**
 * {@code rdmx bench channel}: the measurement of issue 11, side by side in one run. Every case is a pair of fresh
 * processes, a sender ({@link ChannelDriver}) and a receiver, started with the same JVM flags:
 *
 * <ul>
 *   <li>rdmx ring channels on shm and tcp with each idle strategy there is today: {@code park} (the default,
 *       {@code rdmx.channel.spinsBeforePark=0}), {@code spin-park} ({@value #SPIN_THEN_PARK} polls with
 *       {@code Thread.onSpinWait} before parking) and {@code busy-spin} ({@value #BUSY_SPIN} polls: a
 *       blocked reader or writer does not park within a healthy case's waits), all with 1 MiB rings; and shm
 *       with a ring of Aeron IPC's term length ({@value #EQUAL_MEMORY}: spin-park and busy-spin, 32 B streams),
 *       to compare with Aeron at the same buffer size;</li>
 *   <li>a NIO socket stream and ping-pong over TCP loopback, blocking and busy-polling ({@link NioPeer});</li>
 *   <li>Aeron IPC through an embedded media driver in the receiver, three set-ups ({@link AeronPeer});</li>
 *   <li>and, in this process, a single-thread off-heap memory copy, and the {@link BareRing}: two threads and
 *       a ring with nothing but the records in it, the bound for small records.</li>
 * </ul>
 *
 * <p>For records of 32 B, 1 KiB, 16 KiB and 64 KiB: messages/s, MiB/s, CPU seconds per GiB moved and context
 * switches per MiB (both processes, {@link ProcStat}); round trip p50 and p99 at 32 B and 1 KiB. The full run adds
 * WRITE_WITH_IMM notifications and a batching-threshold sweep on the rdmx rings.
 */
public final class ChannelBench {
    static final int[] SIZES = {32, 1024, 16 << 10, 64 << 10};
    static final int[] RTT_SIZES = {32, 1024};
    static final int RING = 1 << 20;
    /**
     * Aeron IPC's term length (its default, 64 MiB; a publication's log holds three terms): the ring of the
     * {@value #EQUAL_MEMORY} cases, which compare with the Aeron cases at the same buffer size. A 1 MiB ring moves a
     * third of its 32 B records when the host runs the two CPUs far apart: the writer then waits for every line it
     * reuses to be taken back from the reader's cache, where a ring that outgrows the caches finds its lines in
     * memory (2026-11-25, the same hour: 37.6-38.0M records/s with 1 MiB, 73.5M with 64 MiB, 102.9M with 128 MiB;
     * with the CPUs close, 112M and 97-105M).
     */
    static final int AERON_TERM = io.aeron.driver.Configuration.ipcTermBufferLength();
    /** The prefix of the shm cases with a ring of {@link #AERON_TERM} bytes. */
    static final String EQUAL_MEMORY = "shm-aeron-size";
    /** {@code rdmx.channel.spinsBeforePark} of the spin-then-park cases. */
    static final int SPIN_THEN_PARK = 10_000;
    /**
     * {@code rdmx.channel.spinsBeforePark} of the busy-spin cases: a million polls, roughly 0.1 s of spinning
     * before a park, longer than any wait of a healthy case, so a reader or writer in them never parks. The
     * configuration accepts {@code Integer.MAX_VALUE} too; it once stalled the 32 B stream on shm and tcp (a spin
     * loop without a safepoint poll held the network thread at a handshake), fixed in the channel's wait loops.
     */
    static final int BUSY_SPIN = 1_000_000;
    /** JVM flags Agrona needs on JDK 17+ (its {@code UnsafeApi} is {@code jdk.internal.misc.Unsafe}). */
    static final List<String> AERON_JVM = List.of("--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
        "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED");
    private static final String MEMCPY = "memcpy";
    private static final String BARE = "bare ring";

    /** One pair of processes. */
    private record Case(String variant, boolean baseline, String peerMain, List<String> jvm, List<String> peerArgs,
                        String kind, List<String> kindArgs, int[] stream, int[] rtt) {
    }

    /** System property: comma-separated variant prefixes to run (e.g. {@code shm/park,nio/blocking}); all if unset. */
    static final String ONLY_PROP = "rdmx.bench.cases";
    /** System property: the {@code java} the two processes of every case run on (default: this JVM's). */
    static final String JAVA_PROP = "rdmx.bench.channel.java";
    /** System property: comma-separated record sizes to measure (e.g. {@code 32,65536}); all if unset. */
    static final String SIZES_PROP = "rdmx.bench.channel.sizes";
    /**
     * System property: rounds over all cases (default 1). Each round runs every case once, in order, so the cases
     * alternate; each figure is then the median over the rounds, with half the min-max range as its error.
     */
    static final String ROUNDS_PROP = "rdmx.bench.channel.rounds";
    /**
     * System property: each stream measurement's length in milliseconds (default 2000, 700 with {@code --quick});
     * the warm-up before it streams in slices half as long until the JIT is quiet ({@link ChannelDriver}): on a
     * 2-core machine the compiler threads take CPU from the measured threads.
     */
    static final String MEASURE_PROP = "rdmx.bench.channel.measureMillis";
    private final int[] onlySizes = onlySizes();
    private final boolean quick;
    private final long measureMillis;
    private final long rttMillis;
    /** Pinging before each round-trip measurement (every case alike). */
    private final long rttWarmMillis;
    private final Report report;
    private final int rounds = Integer.getInteger(ROUNDS_PROP, 1);
    private final ChannelFigures fig;
    private final List<String> failed = new ArrayList<>();
    private int caseNo;

    private ChannelBench(boolean quick) {
        this(quick, "channel");
    }

    private ChannelBench(boolean quick, String name) {
        this.quick = quick;
        this.measureMillis = Long.getLong(MEASURE_PROP, quick ? 700 : 2000);
        if (measureMillis < 100 || measureMillis > 600_000) { // both modes, --hosts included, before any output
            throw new IllegalArgumentException(MEASURE_PROP + "=" + measureMillis + " must be 100 to 600000");
        }
        this.rttMillis = quick ? 450 : 2000;
        this.rttWarmMillis = quick ? 2500 : 4000;
        this.report = new Report(name, quick).printResults(false).context("ringCapacity", RING)
            .context("ringCapacityOfTheAeronSizeCases", AERON_TERM)
            .context("batchThresholdDefault", ChannelConfig.BATCH_THRESHOLD_DEFAULT)
            .context("mappedBatchThresholdDefault", ChannelConfig.MAPPED_BATCH_THRESHOLD_DEFAULT)
            .context("measureMillis", measureMillis)
            .context("roundTripMillis", rttMillis)
            .context("roundTripWarmUpMillis", rttWarmMillis + " of pinging before each round-trip measurement")
            .context("streamWarmUp", "slices of half the measuring time until two in a row in which both processes' "
                + "JIT compiler threads took at most " + Math.round(ProcStat.JIT_QUIET_SHARE * 100) + "% of their "
                + "CPU (at most " + TimeUnit.NANOSECONDS.toSeconds(ChannelDriver.MAX_WARM_UP_NANOS) + " s; one slice "
                + "where the JIT cannot be observed); each stream's warm-up in the results")
            .context("processes", "2 per case (sender and receiver), fresh JVMs with the case's flags")
            .context("rdmxIdle", "park: " + ChannelConfig.SPINS_PROP + "=0 (default); spin-park: "
                + ChannelConfig.SPINS_PROP + "=" + SPIN_THEN_PARK + "; busy-spin: " + ChannelConfig.SPINS_PROP + "="
                + BUSY_SPIN + " (both processes; rdmx.cq.spinsBeforePark left at 0)")
            .context("nio", "TCP loopback, TCP_NODELAY, 64 KiB batches; blocking, or non-blocking polled in a loop")
            .context("aeron", "aeron-all " + io.aeron.AeronVersion.VERSION // the shaded jar's manifest names rdmx
                + ", aeron:ipc, exclusive publication, embedded driver in the receiver under /dev/shm; spin-shared: "
                + "SHARED driver thread and clients on BusySpinIdleStrategy; spin-invoker: INVOKER driver run by the "
                + "receiver's polling loop, clients BusySpin; backoff: SHARED driver and clients on "
                + "BackoffIdleStrategy")
            .context("cpu", "each process's CPU-time clock (clock_gettime, ns; /proc/<pid>/stat ticks where "
                + "it cannot be read), both processes, measured round only")
            .context("contextSwitches", "voluntary+nonvoluntary of /proc/<pid>/task/*/status, both processes");
        this.fig = new ChannelFigures(report, rounds, quick);
    }

    /**
     * Runs the benchmark and writes {@code channel.json} and {@code channel.svg}.
     *
     * @param quick shorter measurements, no WRITE_WITH_IMM cases and no threshold sweep
     * @param results the results directory
     * @throws Exception on failure
     */
    public static void run(boolean quick, Path results) throws Exception {
        new ChannelBench(quick).runAll(results);
    }

    /**
     * {@code rdmx bench channel --hosts}: the receiver in host 1, the sender in host 2 (network namespaces of
     * scripts/hosts.sh), unshaped and shaped to {@value Hosts#SHAPED_RATE}: rdmx ring channels on tcp (park and
     * busy-spin) against NIO sockets (blocking and busy-poll) on the same link. Writes {@code channel-hosts.json}.
     *
     * @param quick shorter measurements
     * @param results the results directory
     * @throws Exception on failure
     */
    public static void runHosts(boolean quick, Path results) throws Exception {
        new ChannelBench(quick, "channel-hosts").runAllHosts(results);
    }

    private void runAllHosts(Path results) throws Exception {
        String send = ChannelConfig.Notification.SEND.name();
        report.context("hosts", "receiver in host 1, sender in host 2 (network namespaces, scripts/hosts.sh); "
            + "variant names start with the link")
            .context("links", "unshaped veth pairs, and tc tbf at " + Hosts.SHAPED_RATE + " on each host's egress")
            .context("loadAverageAtStart", loadAverage());
        List<String> links = new ArrayList<>();
        for (String rate : List.of("", Hosts.SHAPED_RATE)) {
            Hosts.up(2, rate);
            try {
                String link = Hosts.link() + ":";
                links.add(link);
                for (Case c : List.of(ring(link + "tcp/park", "tcp", 0, send, "0", SIZES, RTT_SIZES),
                    ring(link + "tcp/busy-spin", "tcp", BUSY_SPIN, send, "0", SIZES, RTT_SIZES),
                    new Case(link + "nio/blocking", true, NioPeer.class.getName(), List.of(), List.of("blocking"),
                        "nio", List.of("blocking"), SIZES, RTT_SIZES),
                    new Case(link + "nio/busy-poll", true, NioPeer.class.getName(), List.of(), List.of("busy-poll"),
                        "nio", List.of("busy-poll"), SIZES, RTT_SIZES))) {
                    run(c);
                }
            } finally {
                Hosts.down();
            }
        }
        fig.medians();
        report.context("loadAverageAtEnd", loadAverage());
        fig.printTables();
        for (String link : links) {
            for (int size : SIZES) {
                fig.higher(link + " tcp " + label(size) + " stream, best idle, vs NIO best",
                    fig.bestFlow(link + "tcp/", size),
                    fig.bestFlow(link + "nio/", size), size, true, ">= 1.0x (never slower than the baseline)");
                fig.higher(link + " tcp " + label(size) + " stream, park, vs NIO blocking",
                    fig.hasFlow("" + size, link + "tcp/park"), fig.hasFlow("" + size, link + "nio/blocking"), size,
                    true, null);
            }
            for (int size : RTT_SIZES) {
                fig.lower(link + " tcp " + label(size) + " round trip, park, vs blocking NIO",
                    fig.hasRtt("" + size, link + "tcp/park"), fig.hasRtt("" + size, link + "nio/blocking"), size, 1,
                    ">= 1.0x");
                fig.lower(link + " tcp " + label(size) + " round trip, busy-spin, vs busy-poll NIO",
                    fig.hasRtt("" + size, link + "tcp/busy-spin"), fig.hasRtt("" + size, link + "nio/busy-poll"),
                    size, 1, null);
            }
        }
        fig.chart();
        report.finish(System.out, results);
        if (!failed.isEmpty()) {
            System.out.println("FAILED cases (no figures): " + failed);
        }
    }

    private void runAll(Path results) throws Exception {
        List<Case> cases = cases();
        String only = System.getProperty(ONLY_PROP, "").trim();
        if (!only.isEmpty()) {
            List<String> prefixes = Arrays.asList(only.split(","));
            cases = cases.stream().filter(c -> prefixes.stream().anyMatch(p -> c.variant().startsWith(p.trim())))
                .toList();
            report.context("onlyCases", only);
        }
        if (onlySizes != null) {
            report.context("onlySizes", Arrays.toString(onlySizes));
        }
        String java = System.getProperty(JAVA_PROP, "").trim();
        if (!java.isEmpty()) {
            report.context("childJava", java);
            System.out.println("the two processes of every case run on " + java + " (" + JAVA_PROP + ")");
        }
        System.out.println("rdmx bench channel" + (quick ? " --quick" : "") + ": " + cases.size()
            + " cases of two processes, sizes " + Arrays.toString(SIZES) + ", " + measureMillis + " ms per size");
        if (rounds < 1 || rounds > 20) {
            throw new IllegalArgumentException(ROUNDS_PROP + "=" + rounds + " must be 1 to 20");
        }
        if (rounds > 1) {
            report.context("rounds", rounds + " over all cases, alternating; figures are medians over the rounds, "
                + "error = half the min-max range");
        }
        String loadBefore = loadAverage();
        memcpy();
        for (int r = 1; r <= rounds; r++) {
            if (rounds > 1) {
                System.out.println("round " + r + " of " + rounds);
            }
            bareRing();
            for (Case c : cases) {
                run(c);
            }
        }
        fig.medians();
        String loadAfter = loadAverage();
        report.context("loadAverageAtStart", loadBefore).context("loadAverageAtEnd", loadAfter);
        System.out.println("load average (1, 5, 15 min) at start " + loadBefore + ", at end " + loadAfter);
        fig.printTables();
        compare();
        fig.chart();
        report.finish(System.out, results);
        if (!failed.isEmpty()) {
            System.out.println("FAILED cases (no figures): " + failed);
        }
    }

    /** @return the first three fields of {@code /proc/loadavg}: other work on the machine moves every figure */
    private static String loadAverage() {
        try {
            String[] f = Files.readString(Paths.get("/proc/loadavg"), StandardCharsets.US_ASCII).split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException e) {
            return "unknown (" + e.getMessage() + ")";
        }
    }

    private List<Case> cases() {
        List<Case> out = new ArrayList<>();
        String send = ChannelConfig.Notification.SEND.name();
        // 0: each provider's default threshold (16 KiB for WRITEs, ChannelConfig.MAPPED_BATCH_THRESHOLD_DEFAULT for
        // a mapped shm ring), as a user gets it; the sweep below sets it explicitly
        String threshold = "0";
        Map<String, Integer> idles = new LinkedHashMap<>();
        idles.put("park", 0);
        idles.put("spin-park", SPIN_THEN_PARK);
        idles.put("busy-spin", BUSY_SPIN);
        for (String provider : List.of("shm", "tcp")) {
            for (Map.Entry<String, Integer> idle : idles.entrySet()) {
                out.add(ring(provider + "/" + idle.getKey(), provider, idle.getValue(), send, threshold, SIZES,
                    RTT_SIZES));
            }
        }
        for (String idle : List.of("spin-park", "busy-spin")) {
            out.add(ring(EQUAL_MEMORY + "/" + idle, "shm", idles.get(idle), send, threshold, new int[] {32}, new int[0],
                AERON_TERM));
        }
        for (String mode : List.of("blocking", "busy-poll")) {
            out.add(new Case("nio/" + mode, true, NioPeer.class.getName(), List.of(), List.of(mode), "nio",
                List.of(mode), SIZES, RTT_SIZES));
        }
        for (String variant : List.of("spin-shared", "spin-invoker", "backoff")) {
            // the term length this process computed (a -Daeron.ipc.term.buffer.length given to it included), so
            // that the equal-memory comparison holds
            List<String> jvm = new ArrayList<>(AERON_JVM);
            jvm.add("-Daeron.ipc.term.buffer.length=" + AERON_TERM);
            out.add(new Case("aeron/" + variant, true, AeronPeer.class.getName(), jvm,
                List.of(variant, "@AERON_DIR@"), "aeron", List.of(variant), SIZES, RTT_SIZES));
        }
        if (!quick) {
            String imm = ChannelConfig.Notification.WRITE_WITH_IMM.name();
            for (String provider : List.of("shm", "tcp")) {
                out.add(ring(provider + "/park/imm", provider, 0, imm, threshold, SIZES, new int[0]));
            }
            for (int t : new int[] {1 << 10, 2 << 10, 4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10,
                256 << 10}) {
                out.add(ring("shm/park/t=" + label(t), "shm", 0, send, Integer.toString(t), new int[] {1024},
                    new int[0]));
            }
        }
        return out;
    }

    private static Case ring(String variant, String provider, int spins, String notification, String threshold,
        int[] stream, int[] rtt) {
        return ring(variant, provider, spins, notification, threshold, stream, rtt, RING);
    }

    private static Case ring(String variant, String provider, int spins, String notification, String threshold,
        int[] stream, int[] rtt, int capacity) {
        return new Case(variant, false, ChannelPeer.class.getName(), List.of("-D" + ChannelConfig.SPINS_PROP + "="
            + spins), List.of(provider, notification, Integer.toString(capacity), threshold, "@NODE@"), "ring",
            List.of(provider, notification, Integer.toString(capacity), threshold), stream, rtt);
    }

    static String label(int size) {
        return size >= 1024 ? (size >> 10) + " KiB" : size + " B";
    }

    // ------------------------------------------------------------------ memcpy (in this process)

    private void memcpy() {
        int total = 64 << 20;
        ByteBuffer src = ByteBuffer.allocateDirect(total);
        ByteBuffer dst = ByteBuffer.allocateDirect(total);
        fig.variant(MEMCPY, true);
        for (int size : only(SIZES)) {
            int off = 0;
            for (int round = 0; round < 2; round++) {
                long copies = 0;
                long start = System.nanoTime();
                long end = start + TimeUnit.MILLISECONDS.toNanos(measureMillis / 2);
                while (System.nanoTime() < end) {
                    for (int i = 0; i < 64; i++) {
                        dst.put(off, src, off, size);
                        off += size;
                        if (off + size > total) {
                            off = 0;
                        }
                    }
                    copies += 64;
                }
                if (round == 1) {
                    double s = (System.nanoTime() - start) / 1e9;
                    // one thread busy the whole time: CPU = wall time, no context switches counted here
                    fig.flow(MEMCPY, size, copies, s, s, Double.NaN);
                }
            }
        }
    }

    // ------------------------------------------------------------------ the bare ring (in this process)

    private void bareRing() throws InterruptedException {
        BareRing bare = new BareRing(RING);
        fig.variant(BARE, true);
        report.context("bareRing", "two threads of this process, a " + (RING >> 20) + " MiB ring of the cases' "
            + "records (8-byte header, payload), both spinning, positions published every "
            + BareRing.PUBLISH_EVERY + " records (or quarter ring), no checks: the least work a ring of small records "
            + "can do here, measured before each round's cases (it moves with where the host runs the two CPUs; "
            + "CPU = 2 x wall)");
        for (int size : only(SIZES)) {
            for (int round = 0; round < 3; round++) {
                BareRing.Result r;
                try {
                    r = bare.stream(size, measureMillis / 2);
                } catch (IllegalStateException e) {
                    System.out.println("bare ring " + label(size) + " FAILED: " + e.getMessage());
                    if (!failed.contains(BARE + "/" + size)) {
                        failed.add(BARE + "/" + size);
                    }
                    break;
                }
                if (round == 2) {
                    fig.flow(BARE, size, r.records(), r.seconds(), 2 * r.seconds(), Double.NaN);
                }
            }
        }
    }

    // ------------------------------------------------------------------ one case: two processes

    private static Process spawn(int host, String main, List<String> jvm, List<String> args) throws IOException {
        List<String> flags = new ArrayList<>(jvm);
        flags.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
        // a fixed number of compiler threads: their CPU tells when the warm-up is over (ChannelDriver)
        flags.add("-XX:-UseDynamicNumberOfCompilerThreads");
        return new ProcessBuilder(Hosts.in(host, ChildJvm.command(System.getProperty(JAVA_PROP), main, flags,
            args.toArray(new String[0]))))
            .redirectError(ProcessBuilder.Redirect.INHERIT).start();
    }

    private static String address(Process p) throws IOException, InterruptedException {
        BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            if (line.startsWith("ADDRESS ")) {
                return line.substring(8);
            }
            System.err.println("  peer: " + line);
        }
        throw new IOException("benchmark peer exited before giving its address (exit " + p.waitFor() + ")");
    }

    private void run(Case c) throws Exception {
        long t0 = System.nanoTime();
        int n = caseNo++;
        System.out.println("case " + c.variant());
        fig.variant(c.variant(), c.baseline());
        Path aeronDir = Paths.get(Files.isDirectory(Paths.get("/dev/shm")) ? "/dev/shm"
            : System.getProperty("java.io.tmpdir"), "rdmx-bench-aeron-" + ProcessHandle.current().pid() + "-" + n);
        List<String> peerArgs = c.peerArgs().stream().map(a -> a.replace("@AERON_DIR@", aeronDir.toString())
            .replace("@NODE@", "bench-peer-" + ProcessHandle.current().pid() + "-" + n)).toList();
        Process peer = spawn(1, c.peerMain(), c.jvm(), peerArgs);
        Process driver = null;
        boolean done = false;
        try {
            String address = address(peer);
            List<String> args = new ArrayList<>(List.of(c.kind(), address, Long.toString(peer.pid()),
                Long.toString(measureMillis), Long.toString(rttMillis), Long.toString(rttWarmMillis),
                join(only(c.stream())),
                join(only(c.rtt()))));
            args.addAll(c.kindArgs());
            driver = spawn(2, ChannelDriver.class.getName(), c.jvm(), args);
            Process d = driver;
            // each stream may warm up for ChannelDriver.MAX_WARM_UP_NANOS, then measures; each round trip warms up
            long bound = 30 + only(c.stream()).length * (TimeUnit.NANOSECONDS.toSeconds(ChannelDriver
                .MAX_WARM_UP_NANOS) + 2 * measureMillis / 1000 + 5) + only(c.rtt()).length
                * ((rttWarmMillis + rttMillis) / 1000 + 5);
            long limit = Math.max(quick ? 120 : 300, bound);
            Thread watchdog = new Thread(() -> {
                try {
                    if (!d.waitFor(limit, TimeUnit.SECONDS)) {
                        System.err.println("  " + c.variant() + ": no result in time, stopping it");
                        d.destroyForcibly();
                        peer.destroyForcibly();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "channel-bench-watchdog");
            watchdog.setDaemon(true);
            watchdog.start();
            BufferedReader in = new BufferedReader(new InputStreamReader(driver.getInputStream(),
                StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null; ) {
                String[] f = line.split(" ");
                switch (f[0]) {
                    case "STREAM": {
                        int size = Integer.parseInt(f[1]);
                        double s = Long.parseLong(f[3]) / 1e9;
                        ChannelFigures.Flow fl = fig.flow(c.variant(), size, Long.parseLong(f[2]), s,
                            Long.parseLong(f[4]) / 1e9, Long.parseLong(f[5]));
                        String warm = "";
                        if (f.length > 7) {
                            double warmSeconds = Long.parseLong(f[6]) / 1e9;
                            double jit = Long.parseLong(f[7]) / 1e9; // negative: the JIT was not observable
                            warm = String.format(Locale.ROOT, "  (warm-up %.1f s, JIT %s)", warmSeconds,
                                jit < 0 ? "not observable" : String.format(Locale.ROOT, "%.2f s CPU", jit));
                            String name = c.variant() + " " + label(size) + " stream warm-up";
                            report.add(new Report.Result(name + " wall time", c.variant(), warmSeconds, 0, "s"));
                            report.add(new Report.Result(name + " JIT compiler CPU", c.variant(), jit, 0, "s"));
                        }
                        System.out.printf(Locale.ROOT, "  stream %-7s %12.0f msgs/s %10.1f MiB/s %9.2f CPU s/GiB"
                            + " %9.2f ctxsw/MiB%s%n", label(size), fl.msgs(), fl.mibs(), fl.cpuPerGiB(),
                            fl.switchesPerMiB(), warm);
                        break;
                    }
                    case "RTT": {
                        int size = Integer.parseInt(f[1]);
                        int samples = Integer.parseInt(f[2]);
                        double cpuUs = f.length > 6 && samples > 0
                            ? Long.parseLong(f[6]) / 1e3 / samples : Double.NaN;
                        ChannelFigures.Rtt r = fig.rtt(c.variant(), size, samples, Long.parseLong(f[3]) / 1e3,
                            Long.parseLong(f[4]) / 1e3, cpuUs);
                        String switches = f.length > 5 && r.samples() > 0 ? String.format(Locale.ROOT,
                            ", %.2f ctxsw/round trip", Long.parseLong(f[5]) / (double) r.samples()) : "";
                        if (!Double.isNaN(cpuUs)) {
                            switches += String.format(Locale.ROOT, ", %.1f CPU us/round trip", cpuUs);
                        }
                        System.out.printf(Locale.ROOT, "  round trip %-7s p50 %9.2f us  p99 %9.2f us  (%d samples%s)%n",
                            label(size), r.p50(), r.p99(), r.samples(), switches);
                        break;
                    }
                    case "DONE":
                        done = true;
                        break;
                    default:
                        System.out.println("  driver: " + line);
                }
            }
            driver.waitFor(10, TimeUnit.SECONDS);
            peer.waitFor(10, TimeUnit.SECONDS);
            watchdog.interrupt();
        } finally {
            if (driver != null) {
                driver.destroyForcibly();
            }
            peer.destroyForcibly();
            peer.waitFor(10, TimeUnit.SECONDS);
            deleteTree(aeronDir);
        }
        if (!done) {
            failed.add(c.variant());
        }
        System.out.printf(Locale.ROOT, "  (%s%.1f s)%n", done ? "" : "FAILED, ", (System.nanoTime() - t0) / 1e9);
    }

    private static int[] onlySizes() {
        String s = System.getProperty(SIZES_PROP, "").trim();
        if (s.isEmpty()) {
            return null;
        }
        int[] v = Arrays.stream(s.split(",")).map(String::trim).mapToInt(Integer::parseInt).toArray();
        for (int x : v) {
            if (IntStream.of(SIZES).noneMatch(y -> y == x)) {
                throw new IllegalArgumentException(SIZES_PROP + "=" + s + ": " + x + " is not one of "
                    + Arrays.toString(SIZES));
            }
        }
        return v;
    }

    /** @return the sizes of {@code sizes} that {@value #SIZES_PROP} keeps */
    private int[] only(int[] sizes) {
        return onlySizes == null ? sizes
            : IntStream.of(sizes).filter(x -> IntStream.of(onlySizes).anyMatch(y -> y == x)).toArray();
    }

    private static String join(int[] sizes) {
        return sizes.length == 0 ? "-" : IntStream.of(sizes).mapToObj(Integer::toString)
            .collect(Collectors.joining(","));
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    private void compare() {
        int big = 64 << 10;
        String shm32 = fig.bestFlow("shm/", 32);
        fig.higher("shm 32 B stream, best idle, vs Aeron IPC best", shm32, fig.bestFlow("aeron/", 32), 32, false,
            ">= 1.0x");
        fig.higher("shm 32 B stream, best idle, vs NIO best", shm32, fig.bestFlow("nio/", 32), 32, false, ">= 3x");
        fig.higher("shm 32 B stream, best idle, vs the bare ring (the least work, not a target)", shm32,
            fig.hasFlow("32", BARE), 32, false, null);
        // at the same buffer size as Aeron's (its default term length): the 1 MiB ring above has 1/64 of it
        String equal32 = fig.bestFlow(EQUAL_MEMORY + "/", 32);
        fig.higher("shm 32 B stream, best idle, a ring of Aeron's term length (" + (AERON_TERM >> 20)
            + " MiB), vs Aeron IPC best", equal32, fig.bestFlow("aeron/", 32), 32, false, ">= 1.0x");
        fig.higher("shm 32 B stream, best idle, a ring of Aeron's term length, vs NIO best", equal32,
            fig.bestFlow("nio/", 32), 32, false, ">= 3x");
        String nio32 = fig.bestFlow("nio/", 32);
        if (nio32 != null && fig.flows().containsKey(BARE + "/32")) {
            double need = 3 * fig.flows().get(nio32 + "/32").msgs();
            double bound = fig.flows().get(BARE + "/32").msgs();
            String line = String.format(Locale.ROOT, "3x NIO at 32 B is %.1fM msgs/s; the bare ring moves %.1fM "
                + "(%.2fx of that target)", need / 1e6, bound / 1e6, bound / need);
            report.context("target3xNioVsBareRing", line);
            System.out.println(line);
        }
        fig.higher("shm 32 B stream, park, vs NIO blocking", fig.hasFlow("32", "shm/park"),
            fig.hasFlow("32", "nio/blocking"), 32, false, null);
        fig.higher("shm 64 KiB stream, best idle, vs memcpy", fig.bestFlow("shm/", big), fig.hasFlow("" + big, MEMCPY),
            big,
            true, ">= 0.8x");
        fig.lower("shm 32 B round trip, park, vs blocking NIO ping-pong", fig.hasRtt("32", "shm/park"),
            fig.hasRtt("32", "nio/blocking"), 32, 1, ">= 1.0x");
        fig.lower("shm 32 B round trip, spinning, vs 2x Aeron p50", fig.bestRtt(32, "shm/spin-park", "shm/busy-spin"),
            fig.bestRtt(32, "aeron/spin"), 32, 2, ">= 1.0x");
        fig.higher("tcp 64 KiB stream, best idle, vs NIO best", fig.bestFlow("tcp/", big), fig.bestFlow("nio/", big),
            big, true,
            ">= 0.9x");
        fig.higher("tcp 64 KiB stream, park, vs NIO blocking", fig.hasFlow("" + big, "tcp/park"),
            fig.hasFlow("" + big, "nio/blocking"), big, true, null);
        fig.lower("tcp 32 B round trip, park, vs blocking NIO", fig.hasRtt("32", "tcp/park"),
            fig.hasRtt("32", "nio/blocking"), 32, 1, ">= 0.83x (<= 1.2x NIO)");
        fig.lower("tcp 32 B round trip, spinning, vs busy-poll NIO", fig.bestRtt(32, "tcp/spin-park", "tcp/busy-spin"),
            fig.hasRtt("32", "nio/busy-poll"), 32, 1, ">= 0.83x (<= 1.2x NIO)");
        fig.lower("tcp 1 KiB round trip, park, vs blocking NIO", fig.hasRtt("1024", "tcp/park"),
            fig.hasRtt("1024", "nio/blocking"), 1024, 1, null);
        if (!quick) {
            for (String provider : List.of("shm", "tcp")) {
                fig.higher(provider + " 1 KiB stream: WRITE_WITH_IMM vs SEND notifications",
                    fig.hasFlow("1024", provider + "/park/imm"), fig.hasFlow("1024", provider + "/park"), 1024, true,
                    null);
            }
        }
    }


}
