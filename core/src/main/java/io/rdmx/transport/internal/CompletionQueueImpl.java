package io.rdmx.transport.internal;

import io.rdmx.transport.Completion;
import io.rdmx.transport.CompletionHandler;
import io.rdmx.transport.CompletionQueue;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.capability.InputFollowing;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.jctools.queues.MpscUnboundedXaddArrayQueue;

/**
 * A completion queue: many producers (I/O and posting threads), one consumer at a time. Its length is bounded
 * by the posting limits (each completion stands for a request counted against a send or receive queue depth).
 *
 * <p>The completion channel: the waiter runs the one {@link WaitLoop}; a producer offers and then wakes it (a full
 * fence, then a wake only if the waiter published that it sleeps or reads the input). The same sleeper as the
 * channel layer's readers and writers: a futex where there are futexes, else a park.
 *
 * <p>Leader/follower input ({@link #followInput}): where the node's input comes from one connection whose
 * provider lets a waiting thread read it (shm and tcp on the selector engine), the waiter reads the socket itself
 * rather than sleep: the frame is decoded and the completion added on the waiting thread, with no I/O thread
 * woken on the way in and no hand-off. A producer that adds a completion from another thread ends that wait (the
 * loop's hand-off, jcstress {@code WaitLoopFollowTest} and {@code WaitLoopFollowWakeTest}). Several connections, none, a connection that delivers inline, or one whose
 * input another thread reads now: the waiter sleeps.
 */
public final class CompletionQueueImpl implements CompletionQueue {
    /** System property: polls (with {@code Thread.onSpinWait}) before an {@link #await} parks; 0 parks at once. */
    public static final String SPINS_PROP = "rdmx.cq.spinsBeforePark";
    private static final int SPINS = Integer.getInteger(SPINS_PROP, 0);
    /** A spinning waiter reads the followable input once per this many spins plus one. */
    private static final int SPINS_PER_INPUT_LOOK = 31;
    /**
     * System property: whether a waiter reads the node's single connection's input itself
     * ({@link #followInput}; shm, and tcp on its selector engine), instead of sleeping until the provider's I/O
     * thread has read it and woken it. Read when a node of such a provider opens.
     */
    public static final String FOLLOWER_READS_PROP = "rdmx.cq.followerReads";
    /** Default of {@link #FOLLOWER_READS_PROP}. */
    public static final boolean FOLLOWER_READS_DEFAULT = true;

    private final String owner;
    private final int spinsBeforePark;
    private final MpscUnboundedXaddArrayQueue<Completion> queue = new MpscUnboundedXaddArrayQueue<>(1024);
    private final AtomicReference<Thread> consumer = new AtomicReference<>();
    /** The waiter's loop: its sleeper, and leader/follower on the node's single connection's input. */
    private final WaitLoop wait = new WaitLoop(this);
    /** Set by {@link #kick}: the waiter returns at its next look. */
    private volatile boolean kicked;
    /** The input a waiter may read itself now (null: none, or several connections), or null: never. */
    private volatile Supplier<InputFollowing> inputs;
    /** A waiter that never reads the input itself (a channel engine's network thread), or null. */
    private volatile Thread neverFollows;
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
     * @return {@link #FOLLOWER_READS_PROP}, validated
     * @throws IllegalArgumentException naming the property and its value if it is neither true nor false
     */
    public static boolean followerReads() {
        return SystemProperties.bool(FOLLOWER_READS_PROP, FOLLOWER_READS_DEFAULT);
    }

    /**
     * Leader/follower input: where a waiter about to sleep asks for the input it may read itself (the node's
     * single connection's, or null). Set once, by the node, before any waiter; a supplier that returns null
     * makes the waiter sleep as usual.
     *
     * @param source the node's input, or null for none
     */
    public void followInput(Supplier<InputFollowing> source) {
        this.inputs = source;
    }

    /**
     * Makes a thread wait as before leader/follower input: it sleeps until another thread (the provider's I/O
     * thread) has read the input and added its completions. For a channel engine's network thread on shm: its
     * queue also takes the completions that posting threads add (WRITEs, notifications), and each of those would
     * end a wait on the socket and wake the I/O thread to hand the socket back (two wake-ups where a sleeper's
     * wake is one); the data itself moves through the mapped rings, not the socket.
     *
     * @param t the thread, or null for none
     */
    @Override
    public void neverFollow(Thread t) {
        this.neverFollows = t;
    }

    /**
     * Adds a completion and wakes the waiter (its sleeper, or its wait on the input: after the sleeper's full
     * fence). Any thread; on the waiter's own thread (a completion it decoded itself) no wake-up is needed and
     * none is made.
     *
     * @param c the completion
     */
    public void add(Completion c) {
        queue.offer(c);
        wait.wake();
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

    /** @return the input this thread may read itself now (leader/follower), or null */
    private InputFollowing followable() {
        Supplier<InputFollowing> src = inputs;
        return src == null || Thread.currentThread() == neverFollows ? null : src.get();
    }

    @Override
    public int await(CompletionHandler handler, int max, long timeout, TimeUnit unit)
        throws RdmxException, InterruptedException {
        int n = poll(handler, max);
        if (n > 0) {
            return n;
        }
        n = wait.await(new Wait(handler, max), System.nanoTime() + unit.toNanos(timeout), spinsBeforePark,
            SPINS_PER_INPUT_LOOK);
        return n == WaitLoop.NOT_YET ? 0 : n;
    }

    /**
     * One {@link #await} (allocated per await that waits, not per poll: the queue's consumer may change between
     * awaits, and a second consumer's handler must never reach the first's wait).
     */
    private final class Wait implements WaitLoop.Waiting<RdmxException> {
        private final CompletionHandler handler;
        private final int max;

        Wait(CompletionHandler handler, int max) {
            this.handler = handler;
            this.max = max;
        }

        @Override
        public int check() throws RdmxException {
            int n = queue.isEmpty() ? 0 : poll(handler, max); // a spinning waiter claims the consumer only to drain
            if (n > 0) {
                return n;
            }
            if (closed) {
                throw new RdmxException("completion queue of node '" + owner + "' is closed");
            }
            if (kicked) {
                kicked = false;
                return 0;
            }
            return WaitLoop.NOT_YET;
        }

        @Override
        public InputFollowing spinInput() {
            return followable(); // followers may hold the single connection's input: read it now and then
        }

        @Override
        public InputFollowing followInput() {
            return followable();
        }

        @Override
        public String waiter() {
            return "await on completion queue of node '" + owner + "'";
        }
    }

    /**
     * Ends the current {@link #await} now (or the next one at once) with whatever is there, 0 completions if none:
     * a channel engine's writer wakes the engine's idle network thread this way ({@code EngineIdle}). Any thread.
     */
    @Override
    public boolean kicks() {
        return true;
    }

    @Override
    public void kick() {
        kicked = true;
        wait.wake();
    }

    @Override
    public int size() {
        return queue.size();
    }

    /** Marks the queue closed and wakes the waiter; remaining completions can still be drained. */
    public void close() {
        closed = true;
        wait.wake();
    }
}
