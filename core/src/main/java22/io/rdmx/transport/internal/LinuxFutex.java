package io.rdmx.transport.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;

/**
 * {@link Futex} through {@code java.lang.foreign}: {@code syscall(SYS_futex, addr, FUTEX_WAKE, ...)} to wake, and
 * {@code syscall(SYS_futex_waitv, ...)} (Linux 5.16+, the same number on every architecture) to sleep on several
 * words at once with an absolute {@code CLOCK_MONOTONIC} deadline. Compiled for Java 22 and loaded by name by
 * {@link Futex#get()} only on a Java 22+ runtime. Futexes are not private: the words may be in memory other
 * processes map.
 */
@SuppressWarnings("restricted") // native access is the point of this class; run with --enable-native-access
final class LinuxFutex extends Futex {
    private static final long SYS_FUTEX_WAITV = 449;
    private static final long FUTEX_WAKE = 1;
    private static final long FUTEX2_SIZE_U32 = 2;
    private static final int CLOCK_MONOTONIC = 1;
    private static final int WAITV_SIZE = 24;
    private static final int EINTR = 4;
    private static final int EAGAIN = 11;
    private static final int EFAULT = 14;
    private static final int EINVAL = 22;
    private static final int ENOSYS = 38;
    private static final int ETIMEDOUT = 110;
    private static final StructLayout STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));

    private final long sysFutex;
    /** syscall(n, a, b, c, d, e) capturing errno: for sleeps. */
    private final MethodHandle syscallErrno;
    /** syscall(n, a, b, c, d, e), a critical call (it never blocks): for wakes. */
    private final MethodHandle syscallWake;
    /** clock_gettime(clock, timespec*), critical. */
    private final MethodHandle clockGettime;

    LinuxFutex(long sysFutex) {
        this.sysFutex = sysFutex;
        Linker linker = Linker.nativeLinker();
        MemorySegment syscall = linker.defaultLookup().find("syscall").orElseThrow(
            () -> new UnsupportedOperationException("no syscall(2) in the C library"));
        MemorySegment gettime = linker.defaultLookup().find("clock_gettime").orElseThrow(
            () -> new UnsupportedOperationException("no clock_gettime(2) in the C library"));
        FunctionDescriptor six = FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
            ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
            ValueLayout.JAVA_LONG);
        this.syscallErrno = linker.downcallHandle(syscall, six, Linker.Option.firstVariadicArg(1),
            Linker.Option.captureCallState("errno"));
        this.syscallWake = linker.downcallHandle(syscall, six, Linker.Option.firstVariadicArg(1),
            Linker.Option.critical(false));
        this.clockGettime = linker.downcallHandle(gettime, FunctionDescriptor.of(ValueLayout.JAVA_INT,
            ValueLayout.JAVA_INT, ValueLayout.ADDRESS), Linker.Option.critical(false));
        probe();
    }

    /** futex_waitv on no word fails with EINVAL where the call exists, ENOSYS where it does not. */
    private void probe() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment state = a.allocate(STATE);
            long rc = (long) syscallErrno.invokeExact(state, SYS_FUTEX_WAITV, 0L, 0L, 0L, 0L, 0L);
            int errno = (int) ERRNO.get(state, 0L);
            if (rc == -1 && errno == ENOSYS) {
                throw new UnsupportedOperationException("the kernel has no futex_waitv (Linux 5.16+)");
            }
            if (rc != -1 || errno != EINVAL) {
                throw new UnsupportedOperationException("futex_waitv probe: rc=" + rc + " errno=" + errno);
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new UnsupportedOperationException(t);
        }
    }

    @Override
    public long address(ByteBuffer direct, int index) {
        if (!direct.isDirect()) {
            throw new IllegalArgumentException("futex word must be in direct memory");
        }
        if (index < 0 || (index & 3) != 0 || index > direct.capacity() - 4) {
            throw new IllegalArgumentException("futex word index=" + index + " misaligned or outside capacity="
                + direct.capacity());
        }
        return MemorySegment.ofBuffer(direct.duplicate().clear()).address() + index;
    }

    @Override
    public WaitSet newWaitSet(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("wait set capacity=" + capacity);
        }
        return new Set(capacity);
    }

    @Override
    public void wake(long address) {
        try {
            long rc = (long) syscallWake.invokeExact(sysFutex, address, FUTEX_WAKE, (long) Integer.MAX_VALUE, 0L,
                0L);
            assert rc >= 0 || address != 0;
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** The futex_waitv array, the deadline and the errno slot, allocated once. */
    private final class Set extends WaitSet {
        private final int capacity;
        private final MemorySegment waiters;
        private final MemorySegment deadline;
        private final MemorySegment state;

        Set(int capacity) {
            this.capacity = capacity;
            Arena arena = Arena.ofAuto();
            this.waiters = arena.allocate((long) WAITV_SIZE * capacity, 8);
            this.deadline = arena.allocate(16, 8);
            this.state = arena.allocate(STATE);
        }

        @Override
        public int capacity() {
            return capacity;
        }

        @Override
        public void set(int i, long address, int expected) {
            if (i < 0 || i >= capacity) {
                throw new IndexOutOfBoundsException("wait set index=" + i + " capacity=" + capacity);
            }
            long at = (long) i * WAITV_SIZE;
            waiters.set(ValueLayout.JAVA_LONG, at, expected & 0xFFFF_FFFFL);
            waiters.set(ValueLayout.JAVA_LONG, at + 8, address);
            waiters.set(ValueLayout.JAVA_LONG, at + 16, FUTEX2_SIZE_U32); // flags (32), reserved (32)
        }

        @Override
        public void await(int n, long timeoutNanos) {
            if (n < 1 || n > capacity) {
                throw new IllegalArgumentException("wait on n=" + n + " words of a set of " + capacity);
            }
            long t = Math.max(0, Math.min(timeoutNanos, Long.MAX_VALUE / 2));
            try {
                int rc = (int) clockGettime.invokeExact(CLOCK_MONOTONIC, deadline);
                if (rc != 0) {
                    throw new IllegalStateException("clock_gettime(CLOCK_MONOTONIC) failed");
                }
                long nanos = deadline.get(ValueLayout.JAVA_LONG, 8) + t;
                long seconds = deadline.get(ValueLayout.JAVA_LONG, 0) + nanos / 1_000_000_000L;
                deadline.set(ValueLayout.JAVA_LONG, 0, seconds);
                deadline.set(ValueLayout.JAVA_LONG, 8, nanos % 1_000_000_000L);
                long r = (long) syscallErrno.invokeExact(state, SYS_FUTEX_WAITV, waiters.address(), (long) n, 0L,
                    deadline.address(), (long) CLOCK_MONOTONIC);
                if (r < 0) {
                    int errno = (int) ERRNO.get(state, 0L);
                    // EAGAIN: a word already differed; ETIMEDOUT, EINTR: return, the caller checks again.
                    // EFAULT: a word's memory went away (a peer's region released at close): the caller's
                    // condition (closed) ends its wait. Anything else is a bug: say so rather than spin.
                    if (errno != EAGAIN && errno != ETIMEDOUT && errno != EINTR && errno != EFAULT) {
                        throw new IllegalStateException("futex_waitv on " + n + " words failed: errno=" + errno);
                    }
                }
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
