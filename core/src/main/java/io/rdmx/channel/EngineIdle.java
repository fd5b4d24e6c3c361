package io.rdmx.channel;

import java.lang.invoke.VarHandle;
import java.util.function.BooleanSupplier;

/**
 * Whether a channel engine's network thread sleeps with no flush scan due, and who wakes it: the hand-off between
 * that thread, which stops scanning once no writer has unposted data, and a writer whose commit leaves unposted
 * data (below the batching threshold, not flushed) that a scan must flush within the flush interval.
 *
 * <p>The network thread {@link #goIdle goes idle} (a volatile store) and then looks at every writer's unposted
 * data once more; a writer publishes its commit, issues a full fence and then {@link #wakeIfIdle reads} the flag.
 * So either the network thread's second look sees the commit (it keeps scanning) or the writer sees the flag (it
 * wakes the thread): no commit waits past the flush interval for a thread that sleeps (jcstress
 * {@code io.rdmx.channel.EngineIdleTest}). Without it an engine with a flush interval woke every half interval
 * (1 ms by default), busy or idle.
 */
final class EngineIdle {
    private volatile boolean idle;

    /**
     * Network thread, about to sleep, after a scan: goes idle unless a writer has unposted data.
     *
     * @param unposted true if some writer has committed data not yet posted (volatile reads of its positions)
     * @return true if the thread may sleep without a scan due (a writer's commit will wake it)
     */
    boolean goIdle(BooleanSupplier unposted) {
        idle = true;
        if (unposted.getAsBoolean()) {
            idle = false;
            return false;
        }
        return true;
    }

    /** Network thread, awake: scans are due again until it goes idle. */
    void awake() {
        idle = false;
    }

    /**
     * Writer, after a commit that left unposted data where there was none: fences, then reads the flag.
     *
     * @return true if the caller must wake the network thread (it went idle)
     */
    boolean wakeIfIdle() {
        VarHandle.fullFence();
        if (idle) {
            idle = false;
            return true;
        }
        return false;
    }

    /** @return true while the network thread sleeps with no scan due (tests) */
    boolean idle() {
        return idle;
    }
}
