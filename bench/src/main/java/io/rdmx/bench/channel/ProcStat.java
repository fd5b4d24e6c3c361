package io.rdmx.bench.channel;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * CPU time, context switches and read/write system calls of a whole process, read from {@code /proc} (Linux).
 *
 * <p>CPU: the process's CPU-time clock in nanoseconds ({@link ProcessCpuClock}: every thread of the process, dead
 * ones included); where that clock cannot be read, {@code utime + stime} of {@code /proc/<pid>/stat} (fields 14
 * and 15), the same time in clock ticks of 10 ms. Context switches: {@code voluntary_ctxt_switches +
 * nonvoluntary_ctxt_switches} summed over {@code /proc/<pid>/task/<tid>/status}, because
 * {@code /proc/<pid>/status} counts the thread-group leader only (in a JVM the launcher's primordial thread,
 * which sits in {@code pthread_join} and switches almost never); threads that exit between two samples drop out
 * of the sum, which the benchmark's processes avoid by starting no threads while measuring. Read and write system
 * calls: {@code syscr} and {@code syscw} of {@code /proc/<pid>/io} (every thread, dead ones included): the calls
 * of the read and write families ({@code read}, {@code readv}, {@code write}, {@code writev}, ...) on anything:
 * sockets, pipes, files, and the event file descriptor a {@code Selector.wakeup()} writes and its selector drains;
 * not {@code futex}, {@code epoll_wait} or {@code sendmsg}. -1 where that file cannot be read.
 *
 * @param cpuNanos user plus system CPU time, nanoseconds
 * @param contextSwitches voluntary plus involuntary context switches of the live threads
 * @param readCalls read system calls ({@code syscr}), or -1 if unknown
 * @param writeCalls write system calls ({@code syscw}), or -1 if unknown
 */
public record ProcStat(long cpuNanos, long contextSwitches, long readCalls, long writeCalls) {
    /** No time, no switches, no calls: the start of a sum over processes. */
    public static final ProcStat ZERO = new ProcStat(0, 0, 0, 0);

    /** Clock ticks per second of {@code /proc/<pid>/stat} ({@code getconf CLK_TCK}); 100 on Linux builds. */
    public static final int TICKS_PER_SECOND = 100;

    /**
     * @param pid a live process
     * @return its counters now
     */
    public static ProcStat of(long pid) {
        Path dir = Paths.get("/proc", Long.toString(pid));
        try {
            long nanos = ProcessCpuClock.nanos(pid);
            if (nanos < 0) {
                nanos = cpuTicks(Files.readString(dir.resolve("stat"), StandardCharsets.US_ASCII))
                    * (1_000_000_000L / TICKS_PER_SECOND);
            }
            long switches = 0;
            try (DirectoryStream<Path> tasks = Files.newDirectoryStream(dir.resolve("task"))) {
                for (Path t : tasks) {
                    switches += switches(t.resolve("status"));
                }
            }
            long[] io = ioCalls(dir.resolve("io"));
            return new ProcStat(nanos, switches, io[0], io[1]);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read /proc/" + pid, e);
        }
    }

    /**
     * @param stat the text of a {@code /proc/<pid>/stat}
     * @return utime + stime (fields 14 and 15)
     */
    static long cpuTicks(String stat) {
        // the command name (field 2) is in parentheses and may hold spaces and ')': fields 3.. follow the last ')'
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
        return Long.parseLong(f[14 - 3]) + Long.parseLong(f[15 - 3]);
    }

    private static long switches(Path status) throws IOException {
        try {
            return switches(Files.readString(status, StandardCharsets.US_ASCII));
        } catch (NoSuchFileException gone) {
            return 0; // the thread exited between listing and reading
        } catch (IOException e) {
            if (Files.notExists(status.getParent())) {
                return 0; // exited while being read: the read fails with ESRCH ("No such process")
            }
            throw e;
        }
    }

    private static long[] ioCalls(Path io) {
        try {
            return ioCalls(Files.readString(io, StandardCharsets.US_ASCII));
        } catch (IOException e) {
            return new long[] {-1, -1}; // not readable (another user's process, no task I/O accounting)
        }
    }

    /**
     * @param s the text of a {@code /proc/<pid>/io}
     * @return {@code syscr} and {@code syscw}, each -1 if missing
     */
    static long[] ioCalls(String s) {
        long r = -1;
        long w = -1;
        for (String line : s.split("\n")) {
            if (line.startsWith("syscr:")) {
                r = Long.parseLong(line.substring(6).trim());
            } else if (line.startsWith("syscw:")) {
                w = Long.parseLong(line.substring(6).trim());
            }
        }
        return new long[] {r, w};
    }

    /**
     * CPU time of the process's JIT compiler threads ({@code C1 CompilerThread<n>} and {@code C2 CompilerThread<n>},
     * named {@code C1 CompilerThre}/{@code C2 CompilerThre} in {@code /proc/<pid>/task/<tid>/comm}): the time on
     * CPU of each in nanoseconds ({@code /proc/<pid>/task/<tid>/schedstat}, first field), or utime + stime of its
     * {@code stat} in 10 ms clock ticks where the kernel keeps no schedstat (too coarse for a 5% share of a 0.1 s
     * pass). Only live threads: a benchmark's processes keep a fixed number of compiler threads
     * ({@code -XX:-UseDynamicNumberOfCompilerThreads}), else a thread that retires takes its time with it.
     *
     * @param pid a live process
     * @return nanoseconds, or -1 if {@code /proc} cannot be read or the process has no such thread (an
     *         interpreter-only or non-HotSpot JVM): then the JIT cannot be observed
     */
    public static long compilerNanos(long pid) {
        Path dir = Paths.get("/proc", Long.toString(pid), "task");
        long nanos = 0;
        int found = 0;
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(dir)) {
            for (Path t : tasks) {
                try {
                    if (isCompilerThread(Files.readString(t.resolve("comm"), StandardCharsets.US_ASCII))) {
                        nanos += threadNanos(t);
                        found++;
                    }
                } catch (IOException gone) {
                    // the thread exited between listing and reading: its time is gone with it (see above)
                }
            }
        } catch (IOException e) {
            return -1;
        }
        return found == 0 ? -1 : nanos;
    }

    /**
     * A warm-up pass (or round, or slice) is JIT-quiet when the compiler threads took at most this share of the
     * processes' CPU in it: the one rule of the benchmarks' warm-ups (shuffle, queries, channel streams).
     */
    public static final double JIT_QUIET_SHARE = 0.05;

    /**
     * @param compileNanos the compiler threads' CPU in a pass (negative or NaN: unknown)
     * @param cpuNanos the processes' CPU in it
     * @return whether the pass was JIT-quiet ({@link #JIT_QUIET_SHARE}); an unknown compiler time is not
     */
    public static boolean jitQuiet(double compileNanos, double cpuNanos) {
        return compileNanos >= 0 && compileNanos <= JIT_QUIET_SHARE * cpuNanos;
    }

    /**
     * @param procs live processes
     * @return their JIT compiler threads' CPU summed, nanoseconds, or -1 if it cannot be observed in one of them
     */
    public static long compilerNanos(java.util.List<Process> procs) {
        long n = 0;
        for (Process p : procs) {
            long c = compilerNanos(p.pid());
            if (c < 0) {
                return -1;
            }
            n += c;
        }
        return n;
    }

    private static long threadNanos(Path task) throws IOException {
        try {
            return schedNanos(Files.readString(task.resolve("schedstat"), StandardCharsets.US_ASCII));
        } catch (NoSuchFileException noSchedstat) {
            return cpuTicks(Files.readString(task.resolve("stat"), StandardCharsets.US_ASCII))
                * (1_000_000_000L / TICKS_PER_SECOND);
        }
    }

    /**
     * @param schedstat the text of a {@code /proc/<pid>/task/<tid>/schedstat}: time on CPU (ns), time waiting to
     *                  run (ns), time slices
     * @return the time on CPU, nanoseconds
     */
    static long schedNanos(String schedstat) {
        return Long.parseLong(schedstat.trim().split(" ")[0]);
    }

    /**
     * @param comm a thread's {@code comm} (its name, cut to 15 characters)
     * @return whether it is a HotSpot JIT compiler thread
     */
    static boolean isCompilerThread(String comm) {
        String c = comm.trim();
        return c.startsWith("C1 CompilerThre") || c.startsWith("C2 CompilerThre");
    }

    /** @return read plus write system calls, or -1 if unknown */
    public long ioCalls() {
        return readCalls < 0 || writeCalls < 0 ? -1 : readCalls + writeCalls;
    }

    private static long minus(long a, long b) {
        return a < 0 || b < 0 ? -1 : a - b;
    }

    private static long plus(long a, long b) {
        return a < 0 || b < 0 ? -1 : a + b;
    }

    /**
     * @param s the text of a {@code /proc/<pid>/task/<tid>/status}
     * @return voluntary plus involuntary context switches
     */
    static long switches(String s) {
        long n = 0;
        for (String line : s.split("\n")) {
            if (line.startsWith("voluntary_ctxt_switches:") || line.startsWith("nonvoluntary_ctxt_switches:")) {
                n += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        return n;
    }

    /**
     * @param earlier an earlier sample of the same process
     * @return the counters between the two samples
     */
    public ProcStat minus(ProcStat earlier) {
        return new ProcStat(cpuNanos - earlier.cpuNanos, contextSwitches - earlier.contextSwitches,
            minus(readCalls, earlier.readCalls), minus(writeCalls, earlier.writeCalls));
    }

    /**
     * @param other a sample of another process
     * @return the sum of the two
     */
    public ProcStat plus(ProcStat other) {
        return new ProcStat(cpuNanos + other.cpuNanos, contextSwitches + other.contextSwitches,
            plus(readCalls, other.readCalls), plus(writeCalls, other.writeCalls));
    }

    /** @return CPU seconds */
    public double cpuSeconds() {
        return cpuNanos / 1e9;
    }
}
