package io.rdmx.transport.internal;

import io.rdmx.transport.Completion;
import io.rdmx.transport.CompletionHandler;
import io.rdmx.transport.CompletionQueue;
import io.rdmx.transport.RdmxException;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.jctools.queues.MpscUnboundedXaddArrayQueue;

/**
 * A completion queue: many producers (I/O and posting threads), one consumer at a time. Its length is bounded
 * by the posting limits (each completion stands for a request counted against a send or receive queue depth).
 *
 * <p>The completion channel: a waiter publishes itself with a volatile store and re-checks the queue; a producer
 * offers, issues a full fence and unparks the published waiter. Either the waiter sees the completion or the
 * producer sees the waiter, so no wake-up is lost.
 */
public final class CompletionQueueImpl implements CompletionQueue {
    /** System property: polls (with {@code Thread.onSpinWait}) before an {@link #await} parks; 0 parks at once. */
    public static final String SPINS_PROP = "rdmx.cq.spinsBeforePark";
    private static final int SPINS = Integer.getInteger(SPINS_PROP, 0);

    private final String owner;
    private final MpscUnboundedXaddArrayQueue<Completion> queue = new MpscUnboundedXaddArrayQueue<>(1024);
    private final AtomicReference<Thread> consumer = new AtomicReference<>();
    private volatile Thread waiter;
    private volatile boolean closed;

    /**
     * @param owner the node's name, for messages
     */
    public CompletionQueueImpl(String owner) {
        this.owner = owner;
    }

    /**
     * Adds a completion and wakes the waiter. Any thread.
     *
     * @param c the completion
     */
    public void add(Completion c) {
        queue.offer(c);
        VarHandle.fullFence();
        Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
    }

    @Override
    public int poll(CompletionHandler handler, int max) {
        if (max <= 0) {
            throw new IllegalArgumentException("max=" + max + " must be positive");
        }
        Thread me = Thread.currentThread();
        Thread prev = consumer.get();
        if (prev != me && !consumer.compareAndSet(null, me)) {
            throw new IllegalStateException("completion queue of node '" + owner
                + "' is single-consumer: thread " + consumer.get() + " is draining it, caller=" + me);
        }
        try {
            int n = 0;
            Completion c;
            while (n < max && (c = queue.relaxedPoll()) != null) {
                n++;
                handler.onCompletion(c);
            }
            return n;
        } finally {
            if (prev != me) {
                consumer.set(null);
            }
        }
    }

    @Override
    public int await(CompletionHandler handler, int max, long timeout, TimeUnit unit)
        throws RdmxException, InterruptedException {
        int n = poll(handler, max);
        if (n > 0) {
            return n;
        }
        for (int i = 0; i < SPINS; i++) {
            Thread.onSpinWait();
            if (!queue.isEmpty()) {
                return poll(handler, max);
            }
        }
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        waiter = Thread.currentThread();
        try {
            while (true) {
                n = poll(handler, max);
                if (n > 0) {
                    return n;
                }
                if (closed) {
                    throw new RdmxException("completion queue of node '" + owner + "' is closed");
                }
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    return 0;
                }
                LockSupport.parkNanos(this, remaining);
                if (Thread.interrupted()) {
                    throw new InterruptedException("await on completion queue of node '" + owner + "'");
                }
            }
        } finally {
            waiter = null;
        }
    }

    @Override
    public int size() {
        return queue.size();
    }

    /** Marks the queue closed and wakes the waiter; remaining completions can still be drained. */
    public void close() {
        closed = true;
        Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
    }
}
