package io.rdmx.spark;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A resource opened on a thread of its own ahead of its first use: the first user {@linkplain #take takes} it
 * (waiting a bounded time) or, when it failed or is late, opens one itself; a resource nobody takes is closed
 * once it is open ({@link #abandon}). The hand-off is the {@link CompletableFuture}'s: an abandoned or timed-out
 * resource is closed by the opener's completion when it comes later, or at once when it is already open.
 *
 * @param <T> the resource
 */
final class Prestart<T extends AutoCloseable> {
    private static final Logger LOG = LoggerFactory.getLogger(Prestart.class);

    private final String what;
    private final CompletableFuture<T> future = new CompletableFuture<>();
    /** Set by the one call that decides the resource's fate: take or abandon. */
    private final AtomicBoolean claimed = new AtomicBoolean();

    private Prestart(String what) {
        this.what = what;
    }

    /**
     * Starts opening on a new daemon thread.
     *
     * @param what what is opened (names the thread and appears in messages)
     * @param open opens the resource
     * @param <T> the resource
     * @return the pending resource
     */
    static <T extends AutoCloseable> Prestart<T> start(String what, Callable<T> open) {
        Prestart<T> p = new Prestart<>(what);
        Thread t = new Thread(() -> {
            try {
                p.future.complete(open.call());
            } catch (Throwable e) {
                p.future.completeExceptionally(e);
            }
        }, "rdmx-prestart-" + what);
        t.setDaemon(true);
        t.start();
        return p;
    }

    /**
     * Takes the resource, waiting for it at most {@code wait}. Only once: a second call, or one after
     * {@link #abandon}, throws. A resource that opens after a timed-out take is closed.
     *
     * @param wait the longest wait
     * @return the open resource, now the caller's
     * @throws ExecutionException if opening failed (its cause)
     * @throws TimeoutException if it did not open within {@code wait}
     * @throws InterruptedException if the caller was interrupted
     * @throws IllegalStateException if it was already taken or abandoned
     */
    T take(Duration wait) throws ExecutionException, TimeoutException, InterruptedException {
        if (!claimed.compareAndSet(false, true)) {
            throw new IllegalStateException(what + " was already taken or abandoned");
        }
        try {
            return future.get(wait.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException | InterruptedException e) {
            future.thenAccept(this::closeQuietly);
            throw e;
        }
    }

    /**
     * {@link #take}, once: null instead of a refusal when it was taken (or abandoned) before, so a caller whose
     * first take failed (interrupted, timed out) opens its own resource rather than failing for good.
     *
     * @param wait the longest wait
     * @return the open resource, now the caller's; null if it was taken or abandoned before
     * @throws ExecutionException if opening failed (its cause)
     * @throws TimeoutException if it did not open within {@code wait}
     * @throws InterruptedException if the caller was interrupted
     */
    T takeUnlessTaken(Duration wait) throws ExecutionException, TimeoutException, InterruptedException {
        return claimed.get() ? null : takeOrNullIfRaced(wait);
    }

    private T takeOrNullIfRaced(Duration wait) throws ExecutionException, TimeoutException, InterruptedException {
        try {
            return take(wait);
        } catch (IllegalStateException e) {
            return null; // another caller claimed it between the look and the take
        }
    }

    /** Closes the resource once it is open, unless it was taken. Idempotent. */
    void abandon() {
        if (claimed.compareAndSet(false, true)) {
            future.thenAccept(this::closeQuietly);
        }
    }

    private void closeQuietly(T r) {
        try {
            r.close();
        } catch (Exception e) {
            LOG.warn("rdmx shuffle: closing the unused {} failed", what, e);
        }
    }
}
