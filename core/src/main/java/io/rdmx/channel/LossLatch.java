package io.rdmx.channel;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Who tells the readers that a peer was lost, exactly once, when the peer may fail on one thread while its rings
 * are attached on another (its HELLO handled on the completion thread): the failing thread says the peer failed
 * and then looks for rings; the attaching thread publishes the rings and then looks for a failure. Each is a
 * volatile store followed by a volatile load (Dekker), so at least one of them sees the other, and the
 * compare-and-set lets only one announce ({@code io.rdmx.channel.LossLatchTest} in the jcstress module). A peer
 * that failed with no rings and never gets any is announced to nobody: no reader holds anything of it.
 */
final class LossLatch {
    private volatile boolean failed;
    private volatile boolean attached;
    private final AtomicBoolean announced = new AtomicBoolean();

    /**
     * The peer failed. Once; any thread.
     *
     * @return true if the caller announces the loss (the rings were attached and nobody announced it)
     */
    boolean fail() {
        failed = true;
        return attached && announced.compareAndSet(false, true);
    }

    /**
     * The peer's rings exist (published before this call). Once; the completion thread.
     *
     * @return true if the caller announces the loss (the peer failed meanwhile and nobody announced it)
     */
    boolean attach() {
        attached = true;
        return failed && announced.compareAndSet(false, true);
    }

    /** @return true once the loss was announced */
    boolean announced() {
        return announced.get();
    }
}
