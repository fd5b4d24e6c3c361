package io.rdmx.channel;

import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Who sends a {@link ChannelWriter}'s committed range, and when: the hand-off between the writer thread (commit,
 * flush) and the network thread (a WRITE completed, the flush interval), without locks.
 *
 * <p>Whoever wins the {@code inFlight} CAS sends the unsent range {@code [sent, committed)} if it is due (at least
 * the batch threshold, or a flush was requested). A send that stays in flight (a posted WRITE) keeps the gate
 * until {@link #complete()}, which moves {@code sent} and sends what was committed meanwhile. A thread that loses
 * the CAS leaves its data to the holder; so the holder, after releasing the gate, issues a full fence and
 * re-reads the committed position and the flush request: a commit (release store, then the CAS that failed)
 * either is seen by that re-read or finds the gate free itself. Never committed data left unsent with nothing
 * in flight to send it ({@code io.rdmx.channel.SendGateTest} in the jcstress module proves the hand-off).
 *
 * <p>Threads: {@link #committed()} and {@link #flush()} the writer thread (flush any thread), {@link #complete()}
 * the thread that learns of the completion; {@code sent} is published by volatile stores.
 */
final class SendGate {
    /** What the gate sends. */
    interface Sender {
        /** @return the committed position (acquire load of the ring's head) */
        long committedAcquire();

        /** @return false once the channel is down: nothing is sent any more */
        boolean open();

        /**
         * Holding the gate: sends {@code [from, to)}.
         *
         * @param from the first unsent position
         * @param to the committed position
         * @return true if the send stays in flight until {@link #complete()} (a posted WRITE; also after a post
         *         that failed the channel: the gate then stays closed), false if it is done now (a mapped publish)
         */
        boolean send(long from, long to);
    }

    private final AtomicBoolean inFlight = new AtomicBoolean();
    private final AtomicBoolean flushRequested = new AtomicBoolean();
    private final int threshold;
    private final Sender sender;
    private volatile long sent;
    /** Written by the gate's holder before a send that stays in flight, read by {@link #complete()}. */
    private volatile long inFlightEnd;

    /**
     * @param threshold the batch threshold in bytes (at least 1 when a send is due on every commit)
     * @param sender what sends
     */
    SendGate(int threshold, Sender sender) {
        this.threshold = threshold;
        this.sender = sender;
    }

    /** @return the end of what was sent (completed, or published when mapped) */
    long sent() {
        return sent;
    }

    /** @return true while a send is in flight or a thread holds the gate */
    boolean inFlight() {
        return inFlight.get();
    }

    /** Writer thread, after a commit: sends if the threshold is reached. */
    void committed() {
        if (sender.committedAcquire() - sent >= threshold) {
            trySend();
        }
    }

    /** Sends whatever is committed now, or right after the send in flight completes. Any thread. */
    void flush() {
        flushRequested.set(true);
        trySend();
    }

    /** The send in flight completed: moves {@code sent}, frees the gate and sends what is due since. */
    void complete() {
        sent = inFlightEnd;
        inFlight.set(false);
        trySend();
    }

    /** Any thread: sends the unsent range if it is due and nothing is in flight. */
    void trySend() {
        while (sender.open()) {
            if (!inFlight.compareAndSet(false, true)) {
                return;
            }
            boolean flush = flushRequested.getAndSet(false);
            long from = sent;
            long to = sender.committedAcquire();
            if (to > from && (flush || to - from >= threshold)) {
                inFlightEnd = to; // before the send: its completion may run on another thread before it returns
                if (sender.send(from, to)) {
                    return;
                }
                sent = to;
            }
            inFlight.set(false);
            // a commit or flush that lost the CAS to us left its data to us: look again after releasing
            VarHandle.fullFence();
            long h = sender.committedAcquire();
            if (!(h > sent && (flushRequested.get() || h - sent >= threshold))) {
                return;
            }
        }
    }
}
