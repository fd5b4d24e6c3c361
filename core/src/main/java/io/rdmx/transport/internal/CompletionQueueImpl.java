package io.rdmx.transport.internal;

import io.rdmx.transport.Completion;
import io.rdmx.transport.CompletionHandler;
import io.rdmx.transport.CompletionQueue;
import io.rdmx.transport.RdmxException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.jctools.queues.MpscUnboundedXaddArrayQueue;

/**
 * A completion queue: many producers (I/O and posting threads), one consumer at a time. Its length is bounded
 * by the posting limits (each completion stands for a request counted against a send or receive queue depth).
 *
 * <p>The completion channel: a waiter arms its {@link Sleeper} (a volatile store, a full fence) and re-checks the
 * queue; a producer offers and wakes the sleeper (a full fence, then a wake only if it is armed). Either the
 * waiter sees the completion or the producer sees the waiter, so no wake-up is lost. The same sleeper as the
 * channel layer's readers and writers: a futex where there are futexes, else a park.
 */
public final class CompletionQueueImpl implements CompletionQueue {
    /** System property: polls (with {@code Thread.onSpinWait}) before an {@link #await} parks; 0 parks at once. */
    public static final String SPINS_PROP = "rdmx.cq.spinsBeforePark";
    private static final int SPINS = Integer.getInteger(SPINS_PROP, 0);

    private final String owner;
    private final int spinsBeforePark;
    private final MpscUnboundedXaddArrayQueue<Completion> queue = new MpscUnboundedXaddArrayQueue<>(1024);
    private final AtomicReference<Thread> consumer = new AtomicReference<>();
    private final Sleeper sleeper = new Sleeper(this);
    private volatile boolean closed;

    /**
     * @param owner the node's name, for messages
     */
    public CompletionQueueImpl(String owner) {
        this(owner, SPINS);
    }

    /**
     * @param owner the node's name, for messages
     * @param spinsBeforePark polls (with {@code Thread.onSpinWait}) before an {@link #await} parks; 0 parks at
     *                        once; the timeout and close are checked on every poll
     */
    public CompletionQueueImpl(String owner, int spinsBeforePark) {
        if (spinsBeforePark < 0) {
            throw new IllegalArgumentException("spinsBeforePark=" + spinsBeforePark + " must not be negative");
        }
        this.owner = owner;
        this.spinsBeforePark = spinsBeforePark;
    }

    /**
     * Adds a completion and wakes the waiter. Any thread.
     *
     * @param c the completion
     */
    public void add(Completion c) {
        queue.offer(c);
        sleeper.wake();
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
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        int spins = spinsBeforePark;
        try {
            // Spinning and parking share one loop, and it ends on the clock, not on a spin counter (as
            // ChannelWriter.claim): a loop that ends on an int counter is a counted loop to C2, which may compile
            // it without a safepoint poll, so a long spin would hold every other thread of the JVM at a safepoint;
            // and every spin checks the timeout and close (and reads the queue without claiming the consumer).
            do {
                n = queue.isEmpty() ? 0 : poll(handler, max);
                if (n > 0) {
                    return n;
                }
                if (closed) {
                    throw new RdmxException("completion queue of node '" + owner + "' is closed");
                }
                if (spins > 0) {
                    spins--;
                    Thread.onSpinWait();
                    continue;
                }
                // arm the sleeper, then poll once more before sleeping: add() offers, fences, reads the sleeper
                sleeper.arm();
                n = poll(handler, max);
                if (n > 0) {
                    return n;
                }
                if (closed) {
                    throw new RdmxException("completion queue of node '" + owner + "' is closed");
                }
                sleeper.sleep(deadline - System.nanoTime());
                if (Thread.interrupted()) {
                    throw new InterruptedException("await on completion queue of node '" + owner + "'");
                }
            } while (System.nanoTime() - deadline < 0);
            n = poll(handler, max);
            if (n == 0 && closed) {
                throw new RdmxException("completion queue of node '" + owner + "' is closed");
            }
            return n;
        } finally {
            sleeper.disarm();
        }
    }

    @Override
    public int size() {
        return queue.size();
    }

    /** Marks the queue closed and wakes the waiter; remaining completions can still be drained. */
    public void close() {
        closed = true;
        sleeper.wake();
    }
}
