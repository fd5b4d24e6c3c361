package io.rdmx.spark;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The worker slots of an executor's pipelined channel engine: each running task that writes or reads a pipelined
 * shuffle holds one (its ring index, as writer and as reader) from its first use until it completes. A task asking
 * again gets the slot it holds. Lock-based; a task waits, bounded, while all slots are held.
 */
final class PipeSlots {
    private final int slots;
    private final boolean[] held;
    private final Map<Long, Integer> byTask = new HashMap<>();

    /** @param slots how many (the engine's workers) */
    PipeSlots(int slots) {
        if (slots < 1) {
            throw new IllegalArgumentException("pipelined shuffle slots=" + slots + " must be at least 1");
        }
        this.slots = slots;
        this.held = new boolean[slots];
    }

    /**
     * @param taskAttemptId the task
     * @param timeoutMillis the longest wait for a free slot
     * @return the task's slot
     * @throws IllegalStateException if none came free in time (names the count and the holders)
     * @throws InterruptedException if interrupted while waiting
     */
    synchronized int lease(long taskAttemptId, long timeoutMillis) throws InterruptedException {
        Integer mine = byTask.get(taskAttemptId);
        if (mine != null) {
            return mine;
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (true) {
            for (int i = 0; i < slots; i++) {
                if (!held[i]) {
                    held[i] = true;
                    byTask.put(taskAttemptId, i);
                    return i;
                }
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new IllegalStateException("rdmx pipelined shuffle: all " + slots + " slots of this executor "
                    + "are held (tasks " + byTask.keySet() + ") and task " + taskAttemptId + " waited "
                    + timeoutMillis + " ms for one; raise " + PipeConf.SLOTS_KEY);
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
    }

    /**
     * Gives back a task's slot (nothing if it holds none).
     *
     * @param taskAttemptId the task
     */
    synchronized void release(long taskAttemptId) {
        Integer i = byTask.remove(taskAttemptId);
        if (i != null) {
            held[i] = false;
            notifyAll();
        }
    }

    /** @return slots held now */
    synchronized int held() {
        return byTask.size();
    }
}
