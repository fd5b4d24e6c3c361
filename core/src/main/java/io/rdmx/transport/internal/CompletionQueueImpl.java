package io.rdmx.transport.internal;

import io.rdmx.transport.Completion;
import io.rdmx.transport.CompletionHandler;
import io.rdmx.transport.CompletionQueue;
import io.rdmx.transport.RdmxException;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.jctools.queues.MpscUnboundedXaddArrayQueue;

/**
 * A completion queue: many producers (I/O and posting threads), one consumer at a time. Its length is bounded
 * by the posting limits (each completion stands for a request counted against a send or receive queue depth).
 *
 * <p>The completion channel: a waiter arms its {@link Sleeper} (a volatile store, a full fence) and re-checks the
 * queue; a producer offers and wakes the sleeper (a full fence, then a wake only if it is armed). Either the
 * waiter sees the completion or the producer sees the waiter, so no wake-up is lost. The same sleeper as the
 * channel layer's readers and writers: a futex where there are futexes, else a park.
 *
 * <p>Leader/follower input ({@link #followInput}): where the node's input comes from one connection whose
 * provider lets a waiting thread read it (shm and tcp on the selector engine), a waiter about to sleep publishes
 * that input ({@link InputFollower#begin}, then a full fence), polls once more, and then reads the socket itself:
 * the frame is decoded and the completion added on the waiting thread, with no I/O thread woken on the way in and
 * no hand-off. A producer that adds a completion from another thread ends that wait ({@link InputFollower#wake},
 * after the sleeper's full fence); either the waiter's re-check sees the completion or the producer sees the
 * published input (jcstress {@code CompletionQueueFollowerTest}). Several connections, none, a connection that
 * delivers inline, or one whose input another thread reads now: the waiter sleeps as above.
 */
public final class CompletionQueueImpl implements CompletionQueue {
    /** System property: polls (with {@code Thread.onSpinWait}) before an {@link #await} parks; 0 parks at once. */
    public static final String SPINS_PROP = "rdmx.cq.spinsBeforePark";
    private static final int SPINS = Integer.getInteger(SPINS_PROP, 0);
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
    private final Sleeper sleeper = new Sleeper(this);
    /** Leader/follower: the waiter reads the node's single connection's input itself. */
    private final InputFollower follower = new InputFollower();
    /** Set by {@link #kick}: the waiter returns at its next look. */
    private volatile boolean kicked;
    /** The input a waiter may read itself now (null: none, or several connections), or null: never. */
    private volatile Supplier<InputFollower.Input> inputs;
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
        String v = System.getProperty(FOLLOWER_READS_PROP, Boolean.toString(FOLLOWER_READS_DEFAULT)).trim();
        if (!v.equalsIgnoreCase("true") && !v.equalsIgnoreCase("false")) {
            throw new IllegalArgumentException(FOLLOWER_READS_PROP + "=" + v + " must be true or false");
        }
        return Boolean.parseBoolean(v);
    }

    /**
     * Leader/follower input: where a waiter about to sleep asks for the input it may read itself (the node's
     * single connection's, or null). Set once, by the node, before any waiter; a supplier that returns null
     * makes the waiter sleep as usual.
     *
     * @param source the node's input, or null for none
     */
    public void followInput(Supplier<InputFollower.Input> source) {
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
        sleeper.wake();
        follower.wake();
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

    /** A spinning waiter's look at the followable input, if any: true if it read something. */
    private boolean spinLook() {
        Supplier<InputFollower.Input> src = inputs;
        InputFollower.Input in = src == null || Thread.currentThread() == neverFollows ? null : src.get();
        return in != null && in.awaitInput(0) > 0;
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
                if (kicked) {
                    kicked = false;
                    return 0;
                }
                if (spins > 0) {
                    spins--;
                    if ((spins & 31) == 0 && spinLook()) {
                        continue; // read the single connection's socket itself (followers may hold its input)
                    }
                    Thread.onSpinWait();
                    continue;
                }
                Supplier<InputFollower.Input> src = inputs;
                InputFollower.Input in = src == null || Thread.currentThread() == neverFollows ? null : src.get();
                if (in != null) {
                    // leader/follower: read the connection's input on this thread rather than sleep until the I/O
                    // thread read it and woke this one. Published before the re-check (a full fence, as arm()):
                    // add() offers, fences, then reads it and ends the wait
                    int r;
                    try {
                        n = publishAndPoll(in, handler, max);
                        if (n > 0) {
                            return n;
                        }
                        if (closed) {
                            throw new RdmxException("completion queue of node '" + owner + "' is closed");
                        }
                        r = follower.await(deadline - System.nanoTime());
                    } finally {
                        follower.end();
                    }
                    if (r >= 0) {
                        if (Thread.interrupted()) {
                            throw new InterruptedException("await on completion queue of node '" + owner + "'");
                        }
                        continue;
                    }
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
                if (kicked) {
                    kicked = false;
                    return 0;
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

    /**
     * Waiter, leader/follower, before it waits on the input: publishes the input ({@link InputFollower#begin},
     * then a full fence), then polls once more. {@link #add} offers, fences, then reads the published input and
     * ends the wait: either this poll sees the completion or that wake-up comes. The caller always ends with
     * {@code follower.end()}. Part of {@link #await}; public for the jcstress test of this hand-off
     * ({@code CompletionQueueFollowerHandOffTest}), not for callers.
     *
     * @param in the input the waiter will read
     * @param handler receives each completion
     * @param max the most completions
     * @return completions handled
     */
    public int publishAndPoll(InputFollower.Input in, CompletionHandler handler, int max) {
        follower.begin(in);
        VarHandle.fullFence();
        return poll(handler, max);
    }

    /**
     * Ends the current {@link #await} now (or the next one at once) with whatever is there, 0 completions if none:
     * a channel engine's writer wakes the engine's idle network thread this way ({@code EngineIdle}). Any thread.
     */
    public void kick() {
        kicked = true;
        sleeper.wake();
        follower.wake();
    }

    @Override
    public int size() {
        return queue.size();
    }

    /** Marks the queue closed and wakes the waiter; remaining completions can still be drained. */
    public void close() {
        closed = true;
        sleeper.wake();
        follower.wake();
    }
}
