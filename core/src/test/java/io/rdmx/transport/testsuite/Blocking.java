package io.rdmx.transport.testsuite;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/**
 * Test helpers for "a blocked thread is woken by X" tests: start the blocking call on a thread of its own, wait
 * until that thread really is parked inside the rdmx method under test, and only then act. A test written this
 * way fails when the call never blocks (it returned or threw first), instead of passing after a sleep.
 */
public final class Blocking {
    private static final String RDMX_PACKAGE = "io.rdmx.";

    private Blocking() {
    }

    /**
     * A call running on its own platform thread.
     *
     * @param <T> what the call returns
     */
    public static final class Call<T> {
        private final Thread thread;
        private final CompletableFuture<T> result = new CompletableFuture<>();

        private Call(String name, Callable<T> body) {
            thread = new Thread(() -> {
                try {
                    result.complete(body.call());
                } catch (Throwable e) {
                    result.completeExceptionally(e);
                }
            }, name);
            thread.setDaemon(true);
        }

        /** @return the thread running the call */
        public Thread thread() {
            return thread;
        }

        /** @return completes with what the call returned, or exceptionally with what it threw */
        public CompletableFuture<T> result() {
            return result;
        }

        /**
         * Waits for the call to end by throwing.
         *
         * @param timeout the bound
         * @return what the call threw
         * @throws AssertionError if it returned normally or did not end within the bound
         * @throws InterruptedException if interrupted
         */
        public Throwable failure(Duration timeout) throws InterruptedException {
            try {
                T value = result.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
                throw new AssertionError("thread '" + thread.getName() + "' returned " + value
                    + " instead of throwing");
            } catch (ExecutionException e) {
                return e.getCause();
            } catch (TimeoutException e) {
                throw new AssertionError("thread '" + thread.getName() + "' still running after " + timeout
                    + "; state=" + thread.getState() + " stack=" + Arrays.toString(thread.getStackTrace()));
            }
        }
    }

    /**
     * Starts a (blocking) call on a new daemon thread.
     *
     * @param name the thread's name
     * @param body the call
     * @param <T> what it returns
     * @return the running call
     */
    public static <T> Call<T> start(String name, Callable<T> body) {
        Call<T> c = new Call<>(name, body);
        c.thread.start();
        return c;
    }

    /**
     * Waits until {@code thread} is parked (state WAITING or TIMED_WAITING, or asleep on a futex) with an rdmx
     * frame named {@code method} on its stack.
     *
     * @param thread the thread
     * @param method {@code "method"} or {@code "SimpleClassName.method"}; matched against frames of classes in
     *               {@code io.rdmx} only, so JDK methods of the same name do not count
     * @param timeout how long the thread may take to get there
     * @throws AssertionError if the thread ends first, or is not parked there within the bound (with its last
     *                        state and stack)
     * @throws InterruptedException if interrupted
     */
    public static void awaitBlockedIn(Thread thread, String method, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Thread.State state = thread.getState();
            StackTraceElement[] stack = thread.getStackTrace();
            if ((state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING
                || state == Thread.State.RUNNABLE && inFutexSleep(stack)) && contains(stack, method)
                && thread.getState() == state) {
                return;
            }
            if (state == Thread.State.TERMINATED) {
                throw new AssertionError("thread '" + thread.getName() + "' ended without blocking in " + method);
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("thread '" + thread.getName() + "' not blocked in " + method + " within "
                    + timeout + "; state=" + state + " stack=" + Arrays.toString(stack));
            }
            Thread.sleep(1);
        }
    }

    /**
     * A thread asleep on a futex ({@code io.rdmx.transport.internal.Futex}), or in its sleeper's selector on its
     * bells (no futexes), or a follower waiting in a select on its connection's socket (tcp leader/follower
     * input), is in a native call, so its state is RUNNABLE: it counts as blocked when the sleep is the top rdmx
     * frame (it armed its word, or published its connection, before it got there, so a wake from now on is not
     * lost).
     */
    private static boolean inFutexSleep(StackTraceElement[] stack) {
        boolean selecting = false;
        for (StackTraceElement e : stack) {
            if (e.getClassName().startsWith(RDMX_PACKAGE)) {
                return e.getClassName().startsWith("io.rdmx.transport.internal.LinuxFutex")
                    && e.getMethodName().equals("await")
                    || e.getClassName().equals("io.rdmx.transport.internal.Sleeper")
                    && e.getMethodName().equals("selectBells")
                    || selecting && e.getClassName().equals("io.rdmx.transport.selector.SocketLink")
                    && e.getMethodName().equals("follow");
            }
            selecting |= e.getClassName().equals("sun.nio.ch.SelectorImpl") && e.getMethodName().equals("select");
        }
        return false;
    }

    /**
     * Waits until the call's thread is parked in {@code method}; see {@link #awaitBlockedIn(Thread, String,
     * Duration)}. If the call ended, the failure names what it returned or threw.
     *
     * @param call the call
     * @param method the rdmx method
     * @param timeout the bound
     * @throws InterruptedException if interrupted
     */
    public static void awaitBlockedIn(Call<?> call, String method, Duration timeout) throws InterruptedException {
        try {
            awaitBlockedIn(call.thread, method, timeout);
        } catch (AssertionError e) {
            if (!call.result.isDone()) {
                throw e;
            }
            Throwable thrown = call.result.handle((v, t) -> t).getNow(null);
            AssertionError more = new AssertionError(e.getMessage() + "; it ended with "
                + (thrown == null ? "result " + call.result.getNow(null) : "exception " + thrown), thrown);
            throw more;
        }
    }

    /**
     * Waits for a state (a metric moved, a flag set) instead of sleeping and hoping.
     *
     * @param what the state, for the failure message
     * @param condition true once the state is reached
     * @param timeout the bound
     * @throws AssertionError if the state is not reached within the bound
     * @throws InterruptedException if interrupted
     */
    public static void awaitTrue(String what, BooleanSupplier condition, Duration timeout)
        throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("not reached within " + timeout + ": " + what + "\n" + rdmxThreads());
            }
            Thread.sleep(1);
        }
    }

    /**
     * @return where the threads running rdmx code are now (name, state and their rdmx frames, up to 12 each): what a
     *     state not reached was waiting for
     */
    static String rdmxThreads() {
        StringBuilder b = new StringBuilder("threads in rdmx code:");
        Thread.getAllStackTraces().forEach((t, stack) -> {
            StringBuilder frames = new StringBuilder();
            int rdmx = 0;
            for (int i = 0; i < stack.length && rdmx < 12; i++) {
                boolean ours = stack[i].getClassName().startsWith(RDMX_PACKAGE);
                if (ours || i < 3) {   // the top frames (where it waits) and the rdmx ones
                    frames.append("\n    at ").append(stack[i]);
                }
                rdmx += ours ? 1 : 0;
            }
            if (rdmx > 0) {
                b.append("\n  '").append(t.getName()).append("' ").append(t.getState()).append(frames);
            }
        });
        return b.toString();
    }

    static boolean contains(StackTraceElement[] stack, String method) {
        int dot = method.lastIndexOf('.');
        String cls = dot < 0 ? null : method.substring(0, dot);
        String name = method.substring(dot + 1);
        for (StackTraceElement f : stack) {
            String c = f.getClassName();
            if (!c.startsWith(RDMX_PACKAGE) || !f.getMethodName().equals(name)) {
                continue;
            }
            String simple = c.substring(c.lastIndexOf('.') + 1);
            if (cls == null || simple.equals(cls)) {
                return true;
            }
        }
        return false;
    }
}
