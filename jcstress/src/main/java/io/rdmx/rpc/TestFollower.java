package io.rdmx.rpc;

import java.util.concurrent.atomic.AtomicInteger;

/** A caller waiting for an {@link RpcClient}'s reader role, as the jcstress tests of {@link ReaderRole} need one. */
final class TestFollower implements ReaderRole.Follower {
    private static final int WAITING = 0;
    private static final int HANDED = 1;
    private static final int LEFT = 2;

    private final AtomicInteger hand = new AtomicInteger();
    private volatile boolean done;
    volatile boolean queued = true;

    /** Its call completes (by another thread, a timeout). */
    void complete() {
        done = true;
    }

    @Override
    public boolean done() {
        return done;
    }

    @Override
    public boolean hand() {
        return hand.compareAndSet(WAITING, HANDED);
    }

    @Override
    public boolean leave() {
        return hand.compareAndSet(WAITING, LEFT) || hand.get() == LEFT;
    }

    @Override
    public void rearm() {
        hand.set(WAITING);
    }

    @Override
    public void dequeued() {
        queued = false;
    }
}
