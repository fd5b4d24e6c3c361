package io.rdmx.transport.internal;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Linux futexes on 32-bit words of direct memory, shared between processes when the memory is a shared file
 * mapping (the {@code shm} provider's regions): a thread sleeps until one of several words no longer holds the
 * value it expects, and another thread, of this process or of another that maps the same file, wakes it with one
 * system call, and only when it sleeps. This is what lets an shm reader sleep on the words its writers in other
 * processes publish to, with no I/O thread, completion queue or network thread between them.
 *
 * <p>Present on Linux with Java 22 or later ({@code java.lang.foreign} calls {@code syscall(2)}), on a
 * little-endian CPU whose system call numbers are known (x86_64, aarch64, ppc64le, riscv64) and a kernel with
 * {@code futex_waitv} (5.16+); {@link #get()} returns null elsewhere, or when {@value #PROPERTY} is
 * {@code false}, and callers fall back to {@link java.util.concurrent.locks.LockSupport} and notification
 * messages. On Java 22-24 the JVM warns once about native access unless started with
 * {@code --enable-native-access=ALL-UNNAMED}.
 *
 * <p>A sleeping thread is not woken by {@link Thread#interrupt()}: callers sleep in slices of at most
 * {@link #MAX_SLICE_NANOS} and check for an interrupt between them.
 */
public abstract class Futex {
    /** System property: {@code false} disables futexes (the LockSupport and doorbell-message path is used). */
    public static final String PROPERTY = "rdmx.futex";
    /** The longest single sleep: the bound on how late an interrupt is noticed. */
    public static final long MAX_SLICE_NANOS = 50_000_000L;
    private static final Logger LOG = LoggerFactory.getLogger(Futex.class);
    private static final Futex INSTANCE = load();

    /** For the implementation. */
    protected Futex() {
    }

    /** @return the futex of this platform, or null where there is none (see the class comment) */
    public static Futex get() {
        return INSTANCE;
    }

    private static Futex load() {
        if (!Boolean.parseBoolean(System.getProperty(PROPERTY, "true"))) {
            return null;
        }
        if (Runtime.version().feature() < 22
            || !System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux")
            || ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN || syscallNumber() < 0) {
            return null;
        }
        try {
            Class<?> c = Class.forName("io.rdmx.transport.internal.LinuxFutex");
            return (Futex) c.getDeclaredConstructor(long.class).newInstance(syscallNumber());
        } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
            Throwable cause = e instanceof java.lang.reflect.InvocationTargetException ? e.getCause() : e;
            LOG.debug("futexes unavailable, falling back to LockSupport: {}", String.valueOf(cause));
            return null;
        }
    }

    /** @return the number of the futex system call on this CPU, or -1 if unknown */
    static long syscallNumber() {
        switch (System.getProperty("os.arch", "")) {
            case "amd64":
            case "x86_64":
                return 202;
            case "aarch64":
            case "riscv64":
                return 98;
            case "ppc64le":
                return 221;
            default:
                return -1;
        }
    }

    /**
     * @param direct direct memory
     * @param index a byte index in it, a multiple of 4
     * @return the address of that byte, valid while the memory is reachable
     * @throws IllegalArgumentException if the memory is not direct, or the index is misaligned or outside it
     */
    public abstract long address(ByteBuffer direct, int index);

    /**
     * @param capacity the most words one sleep waits on (at least 1)
     * @return a wait set, for one thread at a time
     */
    public abstract WaitSet newWaitSet(int capacity);

    /**
     * Wakes every thread sleeping on the word (any process). A system call: call it only when a sleeper said so.
     *
     * @param address the word's address
     */
    public abstract void wake(long address);

    /** The words one thread sleeps on, in native memory prepared once (nothing allocated per sleep). */
    public abstract static class WaitSet {
        /** For the implementation. */
        protected WaitSet() {
        }

        /** @return the most words */
        public abstract int capacity();

        /**
         * @param i 0..capacity-1
         * @param address a word's address ({@link Futex#address})
         * @param expected the value it holds while the caller may sleep
         */
        public abstract void set(int i, long address, int expected);

        /**
         * Sleeps until a word among the first {@code n} no longer holds its expected value, a wake on one of them,
         * or the timeout; returns at once if a word already differs. May return early for no reason: callers
         * check their condition again.
         *
         * @param n words to wait on (1..capacity)
         * @param timeoutNanos the longest sleep (not interruptible: callers that must notice an interrupt sleep
         *                     in slices of at most {@link #MAX_SLICE_NANOS})
         */
        public abstract void await(int n, long timeoutNanos);
    }
}
