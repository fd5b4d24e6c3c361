package io.rdmx.bench.queries;

import io.rdmx.bench.channel.ProcStat;
import io.rdmx.bench.report.ChildJvm;
import io.rdmx.bench.report.Hosts;
import io.rdmx.shuffle.Endpoints;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Runs the queries in P processes of W workers: every query {@code runs} times, the first a warm-up in the same
 * processes, each run started in every process at once and finished when all are done. Checks worker 0's answer
 * against the expected digest of the single-process evaluation every time.
 */
public final class QueriesRunner implements AutoCloseable {
    /** A timed query: wall time (the slowest process), CPU seconds and context switches of all processes. */
    public record Timing(int query, int run, double seconds, double cpuSeconds, long contextSwitches,
                         String digest) {
    }

    private static final long STEP_TIMEOUT_MINUTES = 10;
    private final String provider;
    private final int processes;
    private final List<Process> procs = new ArrayList<>();
    private final List<Writer> ins = new ArrayList<>();
    private final List<BlockingQueue<String>> outs = new ArrayList<>();
    private long rows;

    /**
     * Starts the processes and waits until each generated its rows.
     *
     * @param provider an rdmx provider or {@code sockets}
     * @param processes P
     * @param workers W
     * @param warehouses the TPC-C scale factor
     * @throws Exception if a process does not start or join
     */
    public QueriesRunner(String provider, int processes, int workers, int warehouses) throws Exception {
        this.provider = provider;
        this.processes = processes;
        String job = "q" + ProcessHandle.current().pid() + "-" + System.nanoTime() % 1_000_000;
        String members = Hosts.enabled() ? hostMembers(processes) : needsMembers(provider) ? members(processes) : "-";
        try {
            for (int r = 0; r < processes; r++) {
                List<String> cmd = ChildJvm.command(QueriesProc.class.getName(),
                    // a fixed number of compiler threads: their CPU tells when the warm-up is over (ProcStat)
                    List.of("-Xmx1g", "-XX:+UseParallelGC", "-XX:-UseDynamicNumberOfCompilerThreads"), provider,
                    Integer.toString(r), Integer.toString(processes), Integer.toString(workers),
                    Integer.toString(warehouses), members, job);
                Process p = new ProcessBuilder(Hosts.in(r + 1, cmd)).redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
                procs.add(p);
                ins.add(new OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8));
                BlockingQueue<String> q = new LinkedBlockingQueue<>();
                outs.add(q);
                BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(),
                    StandardCharsets.UTF_8));
                int rank = r;
                Thread t = new Thread(() -> {
                    try {
                        String l;
                        while ((l = out.readLine()) != null) {
                            q.add(l);
                        }
                        q.add("EOF");
                    } catch (IOException e) {
                        q.add("EOF " + e);
                    }
                }, "query-proc-" + rank);
                t.setDaemon(true);
                t.start();
            }
            for (int r = 0; r < processes; r++) {
                String l = next(r, "READY");
                rows += Long.parseLong(l.split(" ")[1]);
            }
        } catch (Exception e) {
            close();
            throw e;
        }
    }

    /** System property: the host of the processes' endpoints for providers that need addresses (an RDMA NIC's). */
    public static final String HOST_PROP = "rdmx.bench.queries.host";

    private static boolean needsMembers(String provider) {
        return !provider.equals("shm") && !provider.equals("loopback") && !provider.equals("auto");
    }

    /** The next port of a run in hosts (each run its own, counted up). */
    private static final java.util.concurrent.atomic.AtomicInteger HOST_PORTS = new java.util.concurrent.atomic
        .AtomicInteger(27000);

    /** @return rank r at host r+1 (--hosts), each at a port no earlier run in these hosts used */
    private static String hostMembers(int processes) {
        int base = HOST_PORTS.getAndAdd(processes);
        List<String> out = new ArrayList<>();
        for (int r = 0; r < processes; r++) {
            out.add(Hosts.address(r + 1) + ":" + (base + r));
        }
        return String.join(",", out);
    }

    private static String members(int processes) throws java.io.IOException {
        String host = System.getProperty(HOST_PROP, "127.0.0.1");
        List<String> out = new ArrayList<>();
        for (String local : Endpoints.freeLocal(processes)) {
            out.add(host + local.substring(local.lastIndexOf(':')));
        }
        return String.join(",", out);
    }

    /** @return TPC-C rows generated over all processes */
    public long rows() {
        return rows;
    }

    /**
     * Runs one query once in every process.
     *
     * @param query 1, 2 or 3
     * @param run the run number (0 = warm-up; exchange ids differ per run)
     * @param expected the digest worker 0's answer must have, or null to skip the check
     * @return the timing
     * @throws Exception if a process fails, stalls, or the answer differs
     */
    public Timing run(int query, int run, String expected) throws Exception {
        ProcStat before = stat();
        for (Writer w : ins) {
            w.write("RUN " + query + " " + run + "\n");
            w.flush();
        }
        long slowest = 0;
        String digest = null;
        for (int r = 0; r < processes; r++) {
            String[] f = next(r, "DONE").split(" ");
            slowest = Math.max(slowest, Long.parseLong(f[3]));
            if (f.length > 4) {
                digest = f[4];
            }
        }
        ProcStat used = stat().minus(before);
        if (digest == null) {
            throw new IllegalStateException("Q" + query + " on " + provider + ": no process reported worker 0's"
                + " answer");
        }
        if (expected != null && !expected.equals(digest)) {
            throw new IllegalStateException("Q" + query + " on " + provider + " P=" + processes + ": answer "
                + digest + " differs from the single-process evaluation's " + expected);
        }
        return new Timing(query, run, slowest / 1e9, used.cpuSeconds(), used.contextSwitches(), digest);
    }

    /**
     * @return the JIT compiler threads' CPU of all processes, nanoseconds, or -1 if it cannot be observed in one
     *         ({@link ProcStat#compilerNanos})
     */
    public long compilerNanos() {
        return ProcStat.compilerNanos(procs);
    }

    /** @return the counters of all processes now */
    public ProcStat stat() {
        ProcStat s = ProcStat.ZERO;
        for (Process p : procs) {
            s = s.plus(ProcStat.of(p.pid()));
        }
        return s;
    }

    private String next(int rank, String prefix) throws Exception {
        while (true) {
            String l = outs.get(rank).poll(STEP_TIMEOUT_MINUTES, TimeUnit.MINUTES);
            if (l == null) {
                throw new IllegalStateException(provider + " rank " + rank + " printed no " + prefix + " within "
                    + STEP_TIMEOUT_MINUTES + " minutes");
            }
            if (l.startsWith(prefix + " ")) {
                return l;
            }
            if (l.startsWith("EOF")) {
                throw new IllegalStateException(provider + " rank " + rank + " exited before " + prefix
                    + " (exit code " + exitCode(rank) + "; its stderr is above)");
            }
        }
    }

    private String exitCode(int rank) throws InterruptedException {
        Process p = procs.get(rank);
        return p.waitFor(5, TimeUnit.SECONDS) ? Integer.toString(p.exitValue()) : "still running";
    }

    @Override
    public void close() {
        for (Writer w : ins) {
            try {
                w.write("EXIT\n");
                w.flush();
            } catch (IOException e) {
                // the process is gone already
            }
        }
        for (Process p : procs) {
            try {
                if (!p.waitFor(20, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }
}
