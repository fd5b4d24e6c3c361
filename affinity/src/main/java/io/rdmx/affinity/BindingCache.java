package io.rdmx.affinity;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Pins a thread once: the first entry computes its CPU set and calls {@code sched_setaffinity}; later entries
 * are a thread-local lookup.
 */
public final class BindingCache {
    private final ThreadLocal<CpuSet> bound = new ThreadLocal<>();
    private final AtomicLong hits = new AtomicLong();
    private final AtomicLong misses = new AtomicLong();

    /**
     * Pins the calling thread unless it already is.
     *
     * @param assignment computes the CPUs (null: leave the thread unpinned)
     * @return the thread's CPUs, or null if unpinned
     * @throws AffinityException if pinning fails (the thread is then remembered as unpinned)
     */
    public CpuSet bind(Supplier<CpuSet> assignment) throws AffinityException {
        CpuSet s = bound.get();
        if (s != null) {
            hits.incrementAndGet();
            return s.isEmpty() ? null : s;
        }
        misses.incrementAndGet();
        CpuSet want = assignment.get();
        if (want == null) {
            bound.set(CpuSet.of());
            return null;
        }
        try {
            Affinity.setCurrentThread(want);
            bound.set(want);
            return want;
        } catch (AffinityException e) {
            bound.set(CpuSet.of());
            throw e;
        }
    }

    /** @return the calling thread's cached binding (empty if unpinned), or null if never bound */
    public CpuSet current() {
        return bound.get();
    }

    /** Forgets the calling thread's binding (it stays pinned; the next entry pins again). */
    public void forget() {
        bound.remove();
    }

    /** @return cache hits */
    public long hits() {
        return hits.get();
    }

    /** @return cache misses (pinning calls) */
    public long misses() {
        return misses.get();
    }
}
