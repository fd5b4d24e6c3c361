package io.rdmx.affinity;

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.NativeLong;
import com.sun.jna.Platform;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pinning of the calling thread through {@code sched_setaffinity(2)} / {@code sched_getaffinity(2)} (JNA, no
 * native code of ours); the thread id comes from {@code gettid(2)}. Off Linux every call is a logged no-op.
 */
public final class Affinity {
    private static final Logger LOG = LoggerFactory.getLogger(Affinity.class);
    /** errno: operation not permitted. */
    public static final int EPERM = 1;
    /** errno: no such thread. */
    public static final int ESRCH = 3;
    /** errno: invalid argument (no usable CPU in the set, or a mask too small for the kernel). */
    public static final int EINVAL = 22;

    private static final int SYS_GETTID_X86_64 = 186;
    private static final int SYS_GETTID_GENERIC = 178;
    private static final int SYS_GETTID_PPC64 = 207;

    /** The libc calls used. */
    interface CLib extends Library {
        int sched_setaffinity(int tid, NativeLong size, byte[] mask) throws LastErrorException;

        int sched_getaffinity(int tid, NativeLong size, byte[] mask) throws LastErrorException;

        long syscall(long number) throws LastErrorException;
    }

    private static final CLib C = load();
    private static volatile boolean warned;

    private Affinity() {
    }

    private static CLib load() {
        if (!Platform.isLinux()) {
            return null;
        }
        try {
            return Native.load("c", CLib.class);
        } catch (UnsatisfiedLinkError e) {
            LOG.warn("libc not loadable through JNA ({}); thread pinning disabled", e.getMessage());
            return null;
        }
    }

    /** @return true where pinning works (Linux with libc) */
    public static boolean supported() {
        return C != null;
    }

    /** @return the calling thread's kernel thread id */
    public static int tid() {
        if (C == null) {
            return -1;
        }
        long nr = Platform.isIntel() && Platform.is64Bit() ? SYS_GETTID_X86_64
            : Platform.isPPC() ? SYS_GETTID_PPC64 : SYS_GETTID_GENERIC;
        return (int) C.syscall(nr);
    }

    private static int maskBytes(CpuSet cpus) {
        return Math.max(128, ((cpus.max() / 64) + 1) * 8);
    }

    /**
     * Pins the calling thread to a set of CPUs.
     *
     * @param cpus the CPUs (non-empty)
     * @throws AffinityException with the errno explained (EINVAL, EPERM, ESRCH)
     */
    public static void setCurrentThread(CpuSet cpus) throws AffinityException {
        if (cpus.isEmpty()) {
            throw new AffinityException("sched_setaffinity: empty CPU set", EINVAL);
        }
        if (C == null) {
            if (!warned) {
                warned = true;
                LOG.info("thread pinning is a no-op on {} ({})", System.getProperty("os.name"),
                    System.getProperty("os.arch"));
            }
            return;
        }
        int tid = tid();
        int bytes = maskBytes(cpus);
        try {
            C.sched_setaffinity(tid, new NativeLong(bytes), cpus.toMask(bytes));
        } catch (LastErrorException e) {
            throw new AffinityException("sched_setaffinity(tid=" + tid + ", cpus=" + cpus + ") failed: "
                + explain(e.getErrorCode()), e.getErrorCode());
        }
    }

    /**
     * @return the calling thread's allowed CPUs (every CPU off Linux is unknown: the empty set)
     * @throws AffinityException if the call fails
     */
    public static CpuSet getCurrentThread() throws AffinityException {
        if (C == null) {
            return CpuSet.of();
        }
        int tid = tid();
        for (int bytes = 128; bytes <= 1 << 16; bytes *= 2) {
            byte[] mask = new byte[bytes];
            try {
                C.sched_getaffinity(tid, new NativeLong(bytes), mask);
                return CpuSet.fromMask(mask);
            } catch (LastErrorException e) {
                if (e.getErrorCode() != EINVAL) {
                    throw new AffinityException("sched_getaffinity(tid=" + tid + ") failed: "
                        + explain(e.getErrorCode()), e.getErrorCode());
                }
            }
        }
        throw new AffinityException("sched_getaffinity(tid=" + tid + ") failed: EINVAL for every mask size", EINVAL);
    }

    /**
     * @param errno an errno of the affinity calls
     * @return its name and meaning
     */
    public static String explain(int errno) {
        switch (errno) {
            case EINVAL:
                return "EINVAL (the set holds no online CPU this thread may use, or the mask is too small)";
            case EPERM:
                return "EPERM (not permitted: another user's thread, or CAP_SYS_NICE missing)";
            case ESRCH:
                return "ESRCH (no such thread)";
            default:
                return "errno " + errno;
        }
    }
}
