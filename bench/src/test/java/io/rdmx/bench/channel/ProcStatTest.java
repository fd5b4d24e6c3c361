package io.rdmx.bench.channel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The /proc counters the channel benchmark reports beside wall time. */
class ProcStatTest {
    @Test
    void cpuTicksAreUtimePlusStimeWhateverTheCommandName() {
        String stat = "4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 100 0 0 0 7 5 0 0 20 0 3 0 99 1000 10";
        assertEquals(12, ProcStat.cpuTicks(stat));
    }

    /**
     * The CPU of a thread that burned a few milliseconds (less than a clock tick of {@code /proc/<pid>/stat}) and
     * exited before the second sample is in the difference: the process clock sums dead threads too, to the
     * nanosecond. Ticks would count it as 0 or 10 ms.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void countsTheCpuOfAThreadThatExitedToTheNanosecond() throws Exception {
        assumeTrue(ProcessCpuClock.available(), "needs the process CPU clock (Linux, 64-bit, JNA)");
        long pid = ProcessHandle.current().pid();
        java.lang.management.ThreadMXBean tmx = java.lang.management.ManagementFactory.getThreadMXBean();
        assumeTrue(tmx.isCurrentThreadCpuTimeSupported(), "needs thread CPU time");
        long[] burned = new long[1];
        ProcStat before = ProcStat.of(pid);
        Thread burner = new Thread(() -> {
            long start = tmx.getCurrentThreadCpuTime();
            long x = 0;
            while (tmx.getCurrentThreadCpuTime() - start < 3_000_000) { // 3 ms of CPU
                x += Long.numberOfTrailingZeros(x + System.nanoTime());
            }
            burned[0] = tmx.getCurrentThreadCpuTime() - start + (x == 42 ? 1 : 0);
        });
        burner.start();
        burner.join();
        ProcStat after = ProcStat.of(pid);
        long used = after.minus(before).cpuNanos();
        assertTrue(used >= burned[0], "the process used " + used + " ns, the exited thread alone " + burned[0]);
        assertTrue(used % 10_000_000 != 0, "a whole number of 10 ms ticks: " + used + " ns");
    }

    @Test
    void ioCallsAreSyscrPlusSyscwAndUnknownWithoutEither() {
        String io = "rchar: 100\nwchar: 200\nsyscr: 7\nsyscw: 35\nread_bytes: 0\n";
        assertArrayEquals(new long[] {7, 35}, ProcStat.ioCalls(io));
        assertArrayEquals(new long[] {7, -1}, ProcStat.ioCalls("rchar: 100\nsyscr: 7\n"));
        ProcStat known = new ProcStat(1, 1, 2, 3);
        ProcStat unknown = new ProcStat(1, 1, 2, -1);
        assertEquals(5, known.ioCalls());
        assertEquals(-1, unknown.ioCalls());
        assertEquals(-1, known.plus(unknown).writeCalls(), "a sum with an unknown count is unknown, not smaller");
        assertEquals(4, known.plus(unknown).readCalls());
        assertEquals(-1, known.minus(unknown).ioCalls());
        assertEquals(10, known.plus(known).ioCalls());
    }

    /**
     * The write calls of a thread that exited before the second sample are in the difference ({@code /proc/<pid>/io}
     * sums every thread, dead ones included), one per call, whatever each wrote.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void countsTheWriteCallsOfAThreadThatExited() throws Exception {
        long pid = ProcessHandle.current().pid();
        assumeTrue(Files.isReadable(Paths.get("/proc", Long.toString(pid), "io")), "needs /proc/<pid>/io");
        java.nio.file.Path file = Files.createTempFile("procstat", ".bin");
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(file,
                java.nio.file.StandardOpenOption.WRITE)) {
            ProcStat before = ProcStat.of(pid);
            Thread writer = new Thread(() -> {
                try {
                    for (int i = 0; i < 500; i++) {
                        ch.write(java.nio.ByteBuffer.wrap(new byte[] {(byte) i}));
                    }
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            writer.start();
            writer.join();
            long calls = ProcStat.of(pid).minus(before).writeCalls();
            // the 500 writes, and whatever else this JVM wrote meanwhile
            assertTrue(calls >= 500, "500 writes, counted " + calls);
            assertTrue(calls < 5_000, "500 writes, counted " + calls);
        } finally {
            Files.deleteIfExists(file);
        }
    }

    @Test
    void switchesAreVoluntaryPlusInvoluntary() {
        String status = "Name:\tjava\nState:\tS (sleeping)\nvoluntary_ctxt_switches:\t30\n"
            + "nonvoluntary_ctxt_switches:\t12\n";
        assertEquals(42, ProcStat.switches(status));
    }

    /**
     * {@code /proc/<pid>/status} counts the thread-group leader only; the sum over tasks must see the switches of
     * another thread: each {@code Thread.sleep} blocks it, a voluntary switch.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void countsTheSwitchesOfEveryThreadNotOnlyTheLeader() throws Exception {
        assumeTrue(Files.isDirectory(Paths.get("/proc/self/task")), "needs Linux /proc");
        long pid = ProcessHandle.current().pid();
        CountDownLatch slept = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch sampled = new CountDownLatch(1);
        Thread sleeper = new Thread(() -> {
            try {
                started.countDown();
                release.await(); // first sample taken
                for (int i = 0; i < 20; i++) {
                    Thread.sleep(1);
                }
                slept.countDown();
                sampled.await(); // stays alive (its task entry with it) until after the second sample
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        sleeper.start();
        started.await();
        ProcStat before = ProcStat.of(pid);
        release.countDown();
        slept.await();
        ProcStat after = ProcStat.of(pid);
        sampled.countDown();
        sleeper.join();
        assertTrue(after.cpuNanos() >= before.cpuNanos(), "CPU time went backwards: " + before + " " + after);
        assertTrue(after.contextSwitches() - before.contextSwitches() >= 20,
            "20 sleeps of another thread, counted " + after.minus(before).contextSwitches() + " switches");
    }

    /**
     * Threads of the sampled process come and go while it is sampled (a benchmark's children start and end
     * threads): a thread that exits between the listing of {@code task/} and the read of its {@code status} is
     * counted as gone, whether the read fails with "no such file" or with "No such process" (ESRCH).
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aThreadExitingWhileSampledIsSkippedNotAFailure() throws Exception {
        assumeTrue(Files.isDirectory(Paths.get("/proc/self/task")), "needs Linux /proc");
        long pid = ProcessHandle.current().pid();
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicLong churned = new java.util.concurrent.atomic.AtomicLong();
        Thread churn = new Thread(() -> {
            while (!stop.get()) {
                Thread[] ts = new Thread[8];
                for (int i = 0; i < ts.length; i++) {
                    ts[i] = new Thread(churned::incrementAndGet);
                    ts[i].start();
                }
                for (Thread t : ts) {
                    try {
                        t.join();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
        });
        churn.start();
        try {
            // sample until a few thousand threads came and went meanwhile (no clock: the test's timeout bounds it)
            long samples = 0;
            while (churned.get() < 4000 || samples < 100) {
                assertTrue(ProcStat.of(pid).contextSwitches() > 0);
                samples++;
            }
            assertTrue(samples > 0 && churned.get() > 0, samples + " samples, " + churned.get() + " threads");
        } finally {
            stop.set(true);
            churn.join();
        }
    }
    @Test
    void schedstatsFirstFieldIsTheTimeOnCpuInNanoseconds() {
        assertEquals(508112320L, ProcStat.schedNanos("508112320 274235489 1657\n"));
    }

    @Test
    void compilerThreadsAreHotSpotsC1AndC2Threads() {
        assertTrue(ProcStat.isCompilerThread("C2 CompilerThre\n"));
        assertTrue(ProcStat.isCompilerThread("C1 CompilerThre"));
        assertTrue(!ProcStat.isCompilerThread("shuffle-worker-\n"));
        assertTrue(!ProcStat.isCompilerThread("VM Thread"));
    }

    /**
     * The JIT's CPU is the compiler threads' only: a thread of this process that burns 300 ms of CPU moves the
     * process's time by that and the compilers' by far less (they may compile its loop, in a few milliseconds).
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void compilerTimeCountsTheCompilerThreadsNotTheOthers() throws Exception {
        assumeTrue(Files.isDirectory(Paths.get("/proc/self/task")), "needs /proc");
        java.lang.management.ThreadMXBean tmx = java.lang.management.ManagementFactory.getThreadMXBean();
        assumeTrue(tmx.isCurrentThreadCpuTimeSupported(), "needs thread CPU time");
        long pid = ProcessHandle.current().pid();
        long compileBefore = ProcStat.compilerNanos(pid);
        // this JVM has compiled since it started (JUnit, this class): its compiler threads were found and had time
        assertTrue(compileBefore > 0, "compiler threads' time: " + compileBefore);
        long cpuBefore = ProcStat.of(pid).cpuNanos();
        Thread burner = new Thread(() -> {
            long start = tmx.getCurrentThreadCpuTime();
            long x = 0;
            while (tmx.getCurrentThreadCpuTime() - start < 300_000_000L) {
                x += Long.numberOfTrailingZeros(x + System.nanoTime());
            }
            if (x == 42) {
                System.out.println(x);
            }
        }, "burner");
        burner.start();
        burner.join();
        long cpu = ProcStat.of(pid).cpuNanos() - cpuBefore;
        long compile = ProcStat.compilerNanos(pid) - compileBefore;
        assertTrue(cpu >= 290_000_000L, "the process used " + cpu + " ns");
        // not bounded below: a compiler thread that retired meanwhile (dynamic compiler threads) takes its time along
        assertTrue(compile < cpu / 2, "the compiler threads used " + compile + " ns of " + cpu);
        assertEquals(-1, ProcStat.compilerNanos(Long.MAX_VALUE), "a process that does not exist");
    }
}
