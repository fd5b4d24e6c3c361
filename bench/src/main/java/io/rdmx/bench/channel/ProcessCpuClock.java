package io.rdmx.bench.channel;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Platform;

/**
 * The CPU time of a whole process in nanoseconds, read from another process: the process's CPU-time clock
 * ({@code clock_getcpuclockid}, then {@code clock_gettime}; glibc through JNA). It sums every thread of the
 * process, threads that exited included, as the kernel accounts them (the scheduler's run time), where
 * {@code /proc/<pid>/stat} rounds the same time to clock ticks of 10 ms: too coarse for a few nanoseconds per
 * row over a pass of a few hundred milliseconds. Linux on 64-bit only; {@link #nanos} returns -1 elsewhere, and
 * {@link ProcStat} then falls back to the ticks.
 */
final class ProcessCpuClock {
    /** The two calls, from the C library. */
    interface CLib extends Library {
        /** @return 0, or an error number (not -1 and errno) */
        int clock_getcpuclockid(int pid, int[] clockId);

        /** @return 0, or -1 */
        int clock_gettime(int clockId, long[] timespec);
    }

    private static final CLib C = load();

    private ProcessCpuClock() {
    }

    private static CLib load() {
        // struct timespec is two longs (tv_sec, tv_nsec) of 8 bytes on 64-bit Linux: long[2] maps it
        if (!Platform.isLinux() || Native.LONG_SIZE != 8) {
            return null;
        }
        try {
            return Native.load("c", CLib.class);
        } catch (UnsatisfiedLinkError e) {
            return null;
        }
    }

    /** @return true where {@link #nanos} reads the clock */
    static boolean available() {
        return C != null;
    }

    /**
     * @param pid a process
     * @return its CPU time (user and system, all threads) in nanoseconds; -1 if the clock cannot be read here or
     *         the process is gone
     */
    static long nanos(long pid) {
        if (C == null) {
            return -1;
        }
        int[] id = new int[1];
        if (C.clock_getcpuclockid((int) pid, id) != 0) {
            return -1;
        }
        long[] ts = new long[2];
        if (C.clock_gettime(id[0], ts) != 0) {
            return -1;
        }
        return ts[0] * 1_000_000_000L + ts[1];
    }
}
