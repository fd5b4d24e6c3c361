package io.rdmx.bench.shuffle;

import io.rdmx.bench.channel.ProcStat;
import io.rdmx.bench.report.ChildJvm;
import io.rdmx.bench.report.Hosts;
import io.rdmx.shuffle.Endpoints;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** Launches P processes of the synthetic plan, verifies exactly-once delivery and times the run. */
public final class ShuffleRunner {
    /** The outcome of one timed pass (after a warm-up pass in the same processes). */
    public record Run(String transport, int processes, int workers, int threshold, long rowsPerProcess,
                      double seconds, long blocked, double cpuSeconds, long contextSwitches, long readCalls,
                      long writeCalls, long gcCount, long gcMillis, double firstPassSeconds, String providers,
                      double compileSeconds, int untimedPasses, double warmUpSeconds, double warmUpCompileSeconds,
                      boolean warmUpQuiet) {
        /** @return rows shuffled (both stages, all processes) */
        public long rows() {
            return 2L * processes * rowsPerProcess;
        }

        /** @return rows shuffled per second (both stages) */
        public double rowsPerSecond() {
            return rows() / seconds;
        }

        /**
         * @param first the first full pass's wall time
         * @return this run with the wall time of the first full pass (after the small warm-up pass only: what a
         *         short job sees while the JIT is still compiling)
         */
        public Run withFirstPass(double first) {
            return new Run(transport, processes, workers, threshold, rowsPerProcess, seconds, blocked, cpuSeconds,
                contextSwitches, readCalls, writeCalls, gcCount, gcMillis, first, providers, compileSeconds,
                untimedPasses, warmUpSeconds, warmUpCompileSeconds, warmUpQuiet);
        }

        /**
         * @param p what each rank's provider was to its peers
         * @return this run with those
         */
        public Run withProviders(String p) {
            return new Run(transport, processes, workers, threshold, rowsPerProcess, seconds, blocked, cpuSeconds,
                contextSwitches, readCalls, writeCalls, gcCount, gcMillis, firstPassSeconds, p, compileSeconds,
                untimedPasses, warmUpSeconds, warmUpCompileSeconds, warmUpQuiet);
        }

        /**
         * @param passes the untimed full passes run before the timed ones
         * @param seconds their wall time, summed
         * @param compile the CPU time the processes' JIT compiler threads took in them (-1: not observable)
         * @param quiet whether the warm-up ended because the JIT was quiet (not at the cap, not a fixed count)
         * @return this run with its warm-up
         */
        public Run withWarmUp(int passes, double seconds, double compile, boolean quiet) {
            return new Run(transport, processes, workers, threshold, rowsPerProcess, this.seconds, blocked,
                cpuSeconds, contextSwitches, readCalls, writeCalls, gcCount, gcMillis, firstPassSeconds, providers,
                compileSeconds, passes, seconds, compile, quiet);
        }

        /** @return how the warm-up ended, for the tables: "quiet", "cap" or "fixed" */
        public String warmUpEnd() {
            if (warmUpQuiet) {
                return "quiet";
            }
            return UNTIL_JIT_QUIET && warmUpCompileSeconds >= 0 ? "cap" : "fixed";
        }

        /** @return CPU nanoseconds (all processes, user + system) per row shuffled */
        public double cpuNanosPerRow() {
            return cpuSeconds * 1e9 / rows();
        }
    }

    /** Untimed full passes per configuration (default 8). */
    static final String UNTIMED_PROP = "rdmx.bench.shuffle.untimed";
    /** Print every pass's wall time, CPU per row and switches (default false). */
    static final String PRINT_PASSES_PROP = "rdmx.bench.shuffle.printPasses";
    /** Timed passes per configuration; the run reported is the median by wall time. */
    static final int REPEATS = 3;
    /**
     * Full-size passes run, verified and dropped before the timed ones (after the warm-up pass of warmRows). One
     * was not enough: at P=4 W=2, 5M rows per process, passes after the first took (s) sockets 0.92 0.79 0.68 0.67
     * 0.59 0.65 0.69 0.62 0.58, tcp 1.01 0.90 0.86 0.80 0.76 0.71 0.70 0.66 0.60, shm 0.53 0.44 0.40 0.43 0.41
     * 0.43 0.43 0.38 0.43 (2026-11-24): C2 still compiling the row and transport paths for eight passes on tcp, whose
     * path is the longest (JFR: compilations of 0.1-1.2 s each, ChannelWriter.scan, SendGate.trySend, the peer
     * channel's completion handler, up to 15 s after start with four JVMs and eight workers on two cores). So eight,
     * on every transport alike ({@link #UNTIMED_PROP} to change it); the first full pass is still reported
     * ({@link Run#firstPassSeconds}). Passes are started by this process one at a time, so two never overlap in a
     * worker's rings.
     *
     * <p>Eight is a minimum: a fixed count measured the quick run's 1M rows per process before tcp's code was
     * compiled. Per pass at P=4 W=1, 1M rows (wall s / JIT compiler CPU ms of the four processes, 2026-11-30,
     * {@link #PRINT_PASSES_PROP}): tcp 0.18-0.22 s / 180-270 ms for passes 1-11, then 0.16, 0.13, 0.11, 0.10,
     * 0.09 s as the compiles ended, 0.07-0.09 s / 0-30 ms from pass 16; sockets 0.08-0.11 s / 10-70 ms from pass 3,
     * 0.06-0.08 s / 0-10 ms from pass 11. With eight the quick run reported tcp at 0.37-0.5x sockets, after 40 at
     * 1.04x. So the warm-up goes on until the JIT is quiet ({@link #UNTIL_JIT_QUIET_PROP}), on every transport
     * alike, and each run reports its warm-up (passes, wall time, compiler CPU) beside its speed.
     */
    static final int UNTIMED_PASSES = untimedPasses(System.getProperty(UNTIMED_PROP));

    /**
     * After the {@link #UNTIMED_PASSES} (a minimum), untimed passes go on until the JIT is quiet (default true;
     * false: exactly that many).
     */
    static final String UNTIL_JIT_QUIET_PROP = "rdmx.bench.shuffle.untilJitQuiet";
    static final boolean UNTIL_JIT_QUIET = !"false".equals(System.getProperty(UNTIL_JIT_QUIET_PROP));
    /** Untimed passes at most, quiet or not (then the run says so: {@link Run#untimedPasses}). */
    static final int MAX_UNTIMED = 60;
    /** Consecutive JIT-quiet passes that end the warm-up. */
    static final int QUIET_PASSES = 2;

    /** @return the warm-up rule, in words (for the benchmarks' headers and results) */
    static String warmUpRule() {
        if (!UNTIL_JIT_QUIET) {
            return UNTIMED_PASSES + " untimed full passes";
        }
        return "untimed full passes, at least " + UNTIMED_PASSES + ", until " + QUIET_PASSES + " in a row in which "
            + "the JIT compiler threads took at most " + Math.round(ProcStat.JIT_QUIET_SHARE * 100)
            + "% of the processes' CPU (at most " + Math.max(UNTIMED_PASSES, MAX_UNTIMED) + ")";
    }

    /**
     * @param pass an untimed pass
     * @return whether the processes' JIT compiler threads took at most {@link ProcStat#JIT_QUIET_SHARE} of their CPU in it
     */
    static boolean jitQuiet(Run pass) {
        return ProcStat.jitQuiet(pass.compileSeconds(), pass.cpuSeconds());
    }

    /**
     * @param untimed untimed passes run so far
     * @param quiet the last of them that were JIT-quiet in a row
     * @param observable whether the compiler threads' CPU could be read in every pass (else the fixed count)
     * @return whether the timed passes start now
     */
    static boolean warmUpDone(int untimed, int quiet, boolean observable) {
        if (untimed < UNTIMED_PASSES) {
            return false;
        }
        return !UNTIL_JIT_QUIET || !observable || quiet >= QUIET_PASSES || untimed >= MAX_UNTIMED;
    }

    /**
     * @param value the property's value, or null
     * @return the untimed passes it asks for (8 if null)
     * @throws IllegalArgumentException if it is not a whole number from 0 to 100
     */
    static int untimedPasses(String value) {
        if (value == null) {
            return 8;
        }
        try {
            int n = Integer.parseInt(value.trim());
            if (n >= 0 && n <= 100) {
                return n;
            }
        } catch (NumberFormatException e) {
            // the message below
        }
        throw new IllegalArgumentException(UNTIMED_PROP + "=" + value + " must be a whole number from 0 to 100");
    }

    /** The next port of a run in hosts (each run its own, counted up). */
    private static final java.util.concurrent.atomic.AtomicInteger HOST_PORTS = new java.util.concurrent.atomic
        .AtomicInteger(17000);

    /**
     * @param chosen per rank, the providers it uses to reach each other rank (comma separated), or null
     * @return the distinct providers used ("tcp"), or "?" if a rank did not say
     */
    static String providers(String[] chosen) {
        java.util.TreeSet<String> all = new java.util.TreeSet<>();
        for (String c : chosen) {
            if (c == null) {
                return "?";
            }
            all.addAll(List.of(c.split(",")));
        }
        return String.join("+", all);
    }

    private ShuffleRunner() {
    }

    /**
     * One run from the command line (for profiling): transport processes workers rows [bufferSize threshold warm].
     *
     * @param args the arguments
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        Run r = run(args[0], Integer.parseInt(args[1]), Integer.parseInt(args[2]), Long.parseLong(args[3]),
            args.length > 4 ? Integer.parseInt(args[4]) : 64 << 10, args.length > 5 ? Integer.parseInt(args[5])
            : 16 << 10, args.length > 6 ? Long.parseLong(args[6]) : 300_000, null);
        System.out.printf(Locale.ROOT, "%s P=%d W=%d: %.2f s, %.0f rows/s, %.1f cpu ns/row, %d switches, %d read and "
            + "%d write calls, %d GCs, %d blocked; warm-up %d passes, %.2f s, JIT %.2f s CPU%n", r.transport(),
            r.processes(), r.workers(), r.seconds(), r.rowsPerSecond(), r.cpuNanosPerRow(), r.contextSwitches(),
            r.readCalls(), r.writeCalls(), r.gcCount(), r.blocked(), r.untimedPasses(), r.warmUpSeconds(),
            r.warmUpCompileSeconds());
    }

    /**
     * Runs the plan: a warm-up pass, full passes not timed (at least {@link #UNTIMED_PASSES}, then until the JIT
     * is quiet: {@link #warmUpRule()}), then {@link #REPEATS} timed passes in the same processes, each verified;
     * returns the median pass by wall time.
     *
     * @param transport shm, tcp or sockets
     * @param processes P
     * @param workers W
     * @param rows rows per process
     * @param bufferSize bytes per buffer
     * @param threshold batching threshold
     * @param warmRows rows per process of the warm-up pass (0: none)
     * @param log progress output, or null
     * @return the run
     * @throws Exception if a process fails or the verification fails
     */
    public static Run run(String transport, int processes, int workers, long rows, int bufferSize, int threshold,
                          long warmRows, PrintStream log) throws Exception {
        String job = "b" + ProcessHandle.current().pid() + "-" + System.nanoTime() % 1_000_000;
        String endpoints;
        if (Hosts.enabled()) {
            // rank r in host r+1, at a port no earlier run in these hosts used (no TIME_WAIT in the way)
            int base = HOST_PORTS.getAndAdd(processes);
            List<String> members = new ArrayList<>();
            for (int r = 0; r < processes; r++) {
                members.add(Hosts.address(r + 1) + ":" + (base + r));
            }
            endpoints = String.join(",", members);
        } else {
            endpoints = transport.equals("shm") ? "-" : String.join(",", Endpoints.freeLocal(processes));
        }
        String[] chosen = new String[processes];
        List<Process> procs = new ArrayList<>();
        List<BufferedReader> outs = new ArrayList<>();
        List<Writer> ins = new ArrayList<>();
        try {
            for (int r = 0; r < processes; r++) {
                List<String> cmd = ChildJvm.command(ShuffleProc.class.getName(),
                    // compiler threads that come and go (the default) would drop out of the per-thread switch sum
                    List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:-UseDynamicNumberOfCompilerThreads"),
                    transport, Integer.toString(r),
                    Integer.toString(processes), Integer.toString(workers), Long.toString(rows), endpoints, job,
                    Integer.toString(bufferSize), Integer.toString(threshold), Long.toString(warmRows));
                Process p = new ProcessBuilder(Hosts.in(r + 1, cmd)).redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
                procs.add(p);
                outs.add(new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)));
                ins.add(new OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8));
            }
            for (int r = 0; r < processes; r++) {
                String l = outs.get(r).readLine();
                for (int skip = 0; l != null && !"READY".equals(l) && skip < 20; skip++) {
                    if (l.startsWith("PROVIDERS ")) {
                        chosen[r] = l.substring(10);
                    }
                    l = outs.get(r).readLine();
                }
                if (!"READY".equals(l)) {
                    throw new IllegalStateException("rank " + r + " did not join: " + l);
                }
            }
            for (Writer w : ins) {
                w.write("GO\n");
                w.flush();
            }
            for (int r = 0; r < processes; r++) {
                String l = outs.get(r).readLine();
                for (int skip = 0; l != null && !"WARM".equals(l) && skip < 20; skip++) {
                    l = outs.get(r).readLine();
                }
                if (!"WARM".equals(l)) {
                    throw new IllegalStateException("rank " + r + " failed its warm-up pass: " + l);
                }
            }
            List<Run> passes = new ArrayList<>();
            double first = 0;
            int untimed = 0;
            double warmSeconds = 0;
            double warmCompile = 0;
            int quiet = 0;
            boolean observable = true;
            boolean timing = UNTIMED_PASSES == 0 && !UNTIL_JIT_QUIET;
            long[] want = SyntheticPlan.expected(processes, rows); // once: every pass must deliver the same
            for (int pass = 0; passes.size() < REPEATS; pass++) {
                Run r = timedPass(transport, processes, workers, rows, threshold, want, procs, outs, ins, log);
                if (Boolean.getBoolean(PRINT_PASSES_PROP)) {
                    System.out.printf(Locale.ROOT, "  pass %d: %.3f s, %.1f cpu ns/row, %d switches, JIT %.0f ms"
                        + "%s%n", pass, r.seconds(), r.cpuNanosPerRow(), r.contextSwitches(),
                        r.compileSeconds() * 1e3, timing ? " (timed)" : "");
                }
                if (pass == 0) {
                    first = r.seconds();
                }
                if (timing) {
                    passes.add(r);
                    continue;
                }
                untimed++;
                warmSeconds += r.seconds();
                observable &= r.compileSeconds() != -1;
                if (r.compileSeconds() > 0) {
                    warmCompile += r.compileSeconds();
                }
                quiet = jitQuiet(r) ? quiet + 1 : 0;
                timing = warmUpDone(untimed, quiet, observable);
            }
            passes.sort(java.util.Comparator.comparingDouble(Run::seconds));
            Run median = passes.get(passes.size() / 2).withFirstPass(first).withProviders(providers(chosen))
                .withWarmUp(untimed, warmSeconds, observable ? warmCompile : -1,
                    UNTIL_JIT_QUIET && observable && quiet >= QUIET_PASSES);
            for (Writer w : ins) {
                w.write("EXIT\n");
                w.flush();
            }
            for (Process p : procs) {
                p.waitFor(20, TimeUnit.SECONDS);
            }
            return median;
        } finally {
            for (Process p : procs) {
                p.destroyForcibly();
            }
        }
    }

    /**
     * @param before the compiler threads' CPU before a pass (ns, -1: not observable)
     * @param after the same after it
     * @return the seconds between, -1 if not observable, NaN if less than before (a compiler thread went away)
     */
    static double compileSeconds(long before, long after) {
        if (before < 0 || after < 0) {
            return -1;
        }
        return after < before ? Double.NaN : (after - before) / 1e9;
    }

    /**
     * One timed pass in the running processes: RUN, every RESULT, verified against {@code want} (count and both
     * checksums); CPU and switches from /proc.
     */
    private static Run timedPass(String transport, int processes, int workers, long rows, int threshold, long[] want,
                                 List<Process> procs, List<BufferedReader> outs, List<Writer> ins, PrintStream log)
        throws Exception {
        ProcStat before = ProcStat.ZERO;
        long compileBefore = ProcStat.compilerNanos(procs);
        for (Process p : procs) {
            before = before.plus(ProcStat.of(p.pid()));
        }
        long t0 = System.nanoTime();
        for (Writer w : ins) {
            w.write("RUN\n");
            w.flush();
        }
        AtomicLong[] progress = new AtomicLong[processes];
        String[] results = new String[processes];
        List<Thread> readers = new ArrayList<>();
        for (int r = 0; r < processes; r++) {
            int rank = r;
            progress[r] = new AtomicLong();
            Thread t = new Thread(() -> {
                try {
                    String l;
                    while ((l = outs.get(rank).readLine()) != null) {
                        if (l.startsWith("PROGRESS ")) {
                            progress[rank].set(Long.parseLong(l.substring(9)));
                        } else if (l.startsWith("RESULT ")) {
                            results[rank] = l;
                            return;
                        }
                    }
                } catch (IOException e) {
                    results[rank] = "ERROR " + e;
                }
            });
            t.start();
            readers.add(t);
        }
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
        long lastPrint = System.nanoTime();
        for (Thread t : readers) {
            while (t.isAlive()) {
                t.join(200);
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("shuffle run did not finish in 10 minutes");
                }
                if (log != null && System.nanoTime() - lastPrint > TimeUnit.SECONDS.toNanos(2)) {
                    long done = 0;
                    for (AtomicLong a : progress) {
                        done += a.get();
                    }
                    log.printf(Locale.ROOT, "    %s: %.0f%% of rows generated and sent%n", transport,
                        100.0 * done / (rows * processes));
                    lastPrint = System.nanoTime();
                }
            }
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        ProcStat after = ProcStat.ZERO;
        for (Process p : procs) {
            after = after.plus(ProcStat.of(p.pid()));
        }
        long compileAfter = ProcStat.compilerNanos(procs);
        ProcStat used = after.minus(before);
        long gcCount = 0;
        long gcMillis = 0;
        long c1 = 0;
        long s1 = 0;
        long c2 = 0;
        long s2 = 0;
        long blocked = 0;
        for (int r = 0; r < processes; r++) {
            if (results[r] == null || !results[r].startsWith("RESULT ")) {
                throw new IllegalStateException("rank " + r + " failed: " + results[r]);
            }
            String[] f = results[r].split(" ");
            c1 += Long.parseLong(f[1]);
            s1 += Long.parseLong(f[2]);
            c2 += Long.parseLong(f[3]);
            s2 += Long.parseLong(f[4]);
            blocked += Long.parseLong(f[6]);
            gcCount += Long.parseLong(f[7]);
            gcMillis += Long.parseLong(f[8]);
        }
        if (c1 != want[0] || c2 != want[0] || s1 != want[1] || s2 != want[2]) {
            throw new IllegalStateException("exactly-once verification FAILED for " + transport + " P="
                + processes + " W=" + workers + ": stage 1 count " + c1 + " checksum " + s1 + ", stage 2 count "
                + c2 + " checksum " + s2 + "; expected count " + want[0] + " checksums " + want[1] + " / "
                + want[2]);
        }
        return new Run(transport, processes, workers, threshold, rows, seconds, blocked, used.cpuSeconds(),
            used.contextSwitches(), used.readCalls(), used.writeCalls(), gcCount, gcMillis, seconds, "",
            compileSeconds(compileBefore, compileAfter), 0, 0, 0, false);
    }
}
