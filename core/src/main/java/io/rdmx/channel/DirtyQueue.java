package io.rdmx.channel;

import java.nio.ByteBuffer;
import org.jctools.queues.MpscUnboundedXaddArrayQueue;

/**
 * The rings of one peer that have a position to report, each queued at most once: the hand-off between the
 * threads that mark a ring ({@link Notifier#mark}) and the one that drains the queue into a notification.
 *
 * <p>A marker first stores the ring's pending position, then marks it: CAS of its {@code queued} flag from false
 * to true, and the queue offer if it won. The drainer takes a ring off the queue, clears {@code queued}, and only
 * then takes the pending position ({@code getAndSet(-1)} in {@link Notifier.Notifiable#drainInto}). So a position
 * stored after the drainer took it finds the flag cleared and queues the ring again, and a mark that finds the
 * flag still set leaves a position that the drain still takes. Never a pending position in a ring that is not
 * queued ({@code io.rdmx.channel.NotifierMarkTest} in the jcstress module proves it).
 *
 * <p>Threads: {@link #mark} any thread; {@link #drain} one thread at a time (the holder of the notifier's
 * in-flight flag).
 */
final class DirtyQueue {
    private final MpscUnboundedXaddArrayQueue<Notifier.Notifiable> dirty = new MpscUnboundedXaddArrayQueue<>(256);

    /**
     * Queues a ring unless it is queued already. Any thread, after storing the ring's pending position.
     *
     * @param n the ring
     */
    void mark(Notifier.Notifiable n) {
        if (n.queued().compareAndSet(false, true)) {
            dirty.offer(n);
        }
    }

    /** @return true if no ring is queued */
    boolean isEmpty() {
        return dirty.isEmpty();
    }

    /**
     * Takes queued rings and writes their pending entries into a message.
     *
     * @param b the message buffer
     * @param at the message index
     * @param max the most entries
     * @param cover receives every writer that wrote a data entry, with its position (its WRITEs up to there
     *              complete with the SEND)
     * @return entries written
     */
    int drain(ByteBuffer b, int at, int max, Notifier.Covered cover) {
        int count = 0;
        Notifier.Notifiable n;
        while (count < max && (n = dirty.relaxedPoll()) != null) {
            n.queued().set(false); // before taking the position: a position stored after it queues n again
            int k = n.drainInto(b, at, count);
            if (k > 0 && n instanceof ChannelWriter) {
                ChannelWriter w = (ChannelWriter) n;
                cover.add(w, w.drained());
            }
            count += k;
        }
        return count;
    }
}
