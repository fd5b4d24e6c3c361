package io.rdmx.channel;

import java.lang.invoke.VarHandle;
import org.jctools.queues.MpscUnboundedXaddArrayQueue;

/**
 * The incoming rings with data for one {@link ChannelReader}, each queued at most once (its
 * {@code queuedForReader} flag): the hand-off between the network thread, which publishes a ring's head and
 * then signals it, and the reader thread, which reads the ring and then lets it go.
 *
 * <p>A signal that finds the ring already queued does nothing: the reader that holds the ring must see the new
 * head. So the reader, after reading, clears the flag, issues a full fence and checks the ring for data once
 * more; if there is some, it queues the ring again. A head published after the reader's check finds the flag
 * cleared and queues the ring itself. Never a ring with unread data that is not queued
 * ({@code io.rdmx.channel.ReaderRequeueTest} in the jcstress module proves it).
 *
 * <p>Threads: {@link #signal} any thread (the network thread); {@link #poll} and {@link #doneReading} the reader
 * thread.
 */
final class ReadyQueue {
    private final MpscUnboundedXaddArrayQueue<IncomingRing> ready = new MpscUnboundedXaddArrayQueue<>(256);

    /**
     * Queues a ring with new data (its head published before) unless it is queued already.
     *
     * @param r the ring
     */
    void signal(IncomingRing r) {
        if (r.queuedForReader.compareAndSet(false, true)) {
            ready.offer(r);
        }
    }

    /** @return the next queued ring, or null (reader thread) */
    IncomingRing poll() {
        return ready.relaxedPoll();
    }

    /** @return true if no ring is queued (an estimate from another thread than the reader) */
    boolean isEmpty() {
        return ready.isEmpty();
    }

    /**
     * Reader thread, after reading a ring it polled: lets it go, and queues it again if data came meanwhile.
     *
     * @param r the ring
     * @return true if it was queued again
     */
    boolean doneReading(IncomingRing r) {
        r.queuedForReader.set(false);
        VarHandle.fullFence();
        if (r.hasData()) {
            signal(r);
            return true;
        }
        return false;
    }
}
