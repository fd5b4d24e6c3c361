package io.rdmx.channel;

import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Who sends a {@link ChannelWriter}'s committed range, and when: the hand-off between the writer thread (commit,
 * flush) and the thread that learns of completions (a WRITE completed, the flush interval), without locks. Up to
 * {@code window} sends stay in flight at once (WRITEs posted and not completed), completed in the order posted.
 *
 * <p>Whoever wins the {@code holder} CAS may send: if fewer than {@code window} sends are in flight, it sends the
 * unposted range {@code [posted end, committed)} if it is due (at least the batch threshold, or a flush was
 * requested). A send that stays in flight (a posted WRITE) is recorded (its end, then the {@code posted} count, a
 * volatile store) before it is made, since its completion may run on another thread before the send returns;
 * {@link #complete(long)} retires the sends in flight up to a position (moves {@code sent}, then the
 * {@code retired} count) and sends what is due since. A thread that loses the CAS leaves its data to the holder;
 * so the holder, after releasing the gate, issues a full fence and re-reads the committed position, the flush
 * request and the {@code retired} count: a commit or a completion (a volatile store, then the CAS that failed)
 * either is seen by that re-read or finds the gate free itself. Never committed data left unsent while the
 * window has room ({@code io.rdmx.channel.SendGateTest} in the jcstress module proves the hand-offs, the window
 * full one included).
 *
 * <p>Threads: {@link #committed()} the writer thread, {@link #flush()} and {@link #trySend()} any thread,
 * {@link #complete(long)} and {@link #completeOldest()} the thread that learns of the completion (one at a
 * time). Nothing is allocated after construction.
 */
final class SendGate {
    /** The largest window: sends in flight per ring. */
    static final int MAX_WINDOW = 256;

    /** What the gate sends. */
    interface Sender {
        /** @return the committed position (acquire load of the ring's head) */
        long committedAcquire();

        /** @return false once the channel is down: nothing is sent any more */
        boolean open();

        /**
         * Holding the gate: sends {@code [from, to)}.
         *
         * @param from the first unposted position
         * @param to the committed position
         * @return true if the send stays in flight until {@link #complete(long)} (a posted WRITE; also after a post
         *         that failed the channel: the gate then stays closed), false if it is done now (a mapped publish;
         *         a sender whose sends are done at once never calls complete)
         */
        boolean send(long from, long to);
    }

    /** The right to send: one holder at a time, so sends are made in the order of their ranges. */
    private final AtomicBoolean holder = new AtomicBoolean();
    private final AtomicBoolean flushRequested = new AtomicBoolean();
    private final int threshold;
    private final int window;
    /** The ends of the sends in flight, send number {@code n} at {@code n & mask}; see the class comment. */
    private final long[] ends;
    private final int mask;
    private final Sender sender;
    /** Sends made (in flight or done), written by the holder. */
    private volatile long posted;
    /** Sends completed, written by the completing thread (or by the holder for a send done at once). */
    private volatile long retired;
    /** The end of the last send made, written by the holder. */
    private volatile long postedEnd;
    /** The end of the last send completed. */
    private volatile long sent;
    /** Writer thread only: no send is due before the committed head reaches this ({@link #committed()}). */
    private long sendAt;
    /** The most sends seen in flight at once (tests, metrics), written by the holder. */
    private volatile int peak;

    /**
     * @param threshold the batch threshold in bytes (at least 1 when a send is due on every commit)
     * @param window the most sends in flight at once, 1 to {@link #MAX_WINDOW}
     * @param sender what sends
     */
    SendGate(int threshold, int window, Sender sender) {
        if (window < 1 || window > MAX_WINDOW) {
            throw new IllegalArgumentException("window=" + window + " out of range [1, " + MAX_WINDOW + "]");
        }
        this.threshold = threshold;
        this.window = window;
        int size = Integer.highestOneBit(window) == window ? window : Integer.highestOneBit(window) << 1;
        this.ends = new long[size];
        this.mask = size - 1;
        this.sender = sender;
    }

    /** @return the end of what was sent (completed, or published when mapped) */
    long sent() {
        return sent;
    }

    /** @return the end of what was handed to the sender (in flight or sent) */
    long postedEnd() {
        return postedEnd;
    }

    /** @return true while a send is in flight or a thread holds the gate */
    boolean inFlight() {
        return holder.get() || posted != retired;
    }

    /** @return the sends in flight now */
    int inFlightCount() {
        return (int) (posted - retired);
    }

    /** @return the most sends that were in flight at once */
    int peakInFlight() {
        return peak;
    }

    /** @return the most sends in flight at once */
    int window() {
        return window;
    }

    /**
     * Writer thread, after a commit: sends if the threshold is reached. Per record this is one compare with a
     * plain field of the writer thread ({@code sendAt}): the volatile {@code postedEnd} and the gate are looked
     * at only once the committed head reaches {@code sendAt}, a bound that is never above the real one
     * ({@code postedEnd} only grows, so a send made meanwhile by another thread only makes it early). With the
     * window full the writer leaves the send to the completion that frees a place and moves {@code sendAt} a
     * threshold on: one fence per threshold of data, not a pass through the gate per record.
     */
    void committed() {
        committed(sender.committedAcquire());
    }

    /**
     * Writer thread: as {@link #committed()}, with the head it has just committed (it alone moves it, so it need
     * not read it back).
     *
     * @param h the committed head
     */
    void committed(long h) {
        if (h >= sendAt) {
            if (h - postedEnd >= threshold) {
                if (posted - retired >= window) {
                    // the window is full: the completion that frees a place sends what is due (it retires, then
                    // reads the head). The fence orders this commit before the re-read (Dekker with complete():
                    // either this thread sees the place freed, or the completion sees this commit). Looked at
                    // again a threshold later, not on every record: each look was a CAS and two fences
                    VarHandle.fullFence();
                    if (posted - retired >= window) {
                        sendAt = h + threshold;
                        return;
                    }
                }
                trySend();
            }
            sendAt = postedEnd + threshold;
        }
    }

    /** Sends whatever is committed now, or as soon as the window has room. Any thread. */
    void flush() {
        flushRequested.set(true);
        trySend();
    }

    /**
     * The sends in flight that end at or before {@code end} completed (a notification that announced them
     * completed: on a reliable connection its completion implies theirs): retires them, and sends what is due.
     *
     * @param end a position a send ended at
     */
    void complete(long end) {
        long r = retired;
        long p = posted;
        long s = -1;
        while (r < p && ends[(int) r & mask] <= end) {
            s = ends[(int) r & mask]; // read before retired moves past it: only then may the holder reuse the slot
            r++;
        }
        if (s >= 0) {
            sent = s;
            retired = r;
        }
        trySend();
    }

    /** The oldest send in flight completed (its own completion; sends complete in the order posted). */
    void completeOldest() {
        long r = retired;
        if (r < posted) {
            sent = ends[(int) r & mask];
            retired = r + 1;
        }
        trySend();
    }

    /** Any thread: sends the unposted range if it is due and the window has room. */
    void trySend() {
        while (sender.open()) {
            if (!holder.compareAndSet(false, true)) {
                return;
            }
            long n = posted;
            if (n - retired < window) {
                boolean flush = flushRequested.getAndSet(false);
                long from = postedEnd;
                long to = sender.committedAcquire();
                if (to > from && (flush || to - from >= threshold)) {
                    // recorded before the send: its completion may run on another thread before it returns
                    ends[(int) n & mask] = to;
                    postedEnd = to;
                    posted = n + 1;
                    int now = (int) (n + 1 - retired);
                    if (now > peak) {
                        peak = now;
                    }
                    if (!sender.send(from, to)) {
                        sent = to; // done now; nothing else completes it
                        retired = n + 1;
                    }
                }
            }
            holder.set(false);
            // a commit, flush or completion that lost the CAS to us left its work to us: look again after releasing
            VarHandle.fullFence();
            if (posted - retired >= window) {
                return; // full: the completion that frees a place sends
            }
            long h = sender.committedAcquire();
            long e = postedEnd;
            if (!(h > e && (flushRequested.get() || h - e >= threshold))) {
                return;
            }
        }
    }
}
