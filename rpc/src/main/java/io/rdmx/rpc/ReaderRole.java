package io.rdmx.rpc;

import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Who reads an {@link RpcClient}'s responses now: a calling thread waiting for its own response takes the role when
 * it is free. Callers that find the role taken follow: they queue themselves and sleep until the reading thread
 * completes their calls. A reader that leaves while followers wait hands the role to the one that waited longest
 * (it wakes that thread, which takes the role and reads its own response): the wake-up a follower needs anyway,
 * and no reader thread in between. This class is the queue and its hand-off rule only: how a caller waits (checks,
 * queues itself, re-checks, sleeps; its deadline; interrupts) and how it is woken is core's one wait loop
 * ({@code io.rdmx.transport.internal.WaitLoop}, driven by {@code AnswerReader.CallerWait}).
 *
 * <p>No follower is left without a reader (the Dekker pattern through the queue's lock, proved by the jcstress
 * test {@code ReaderRoleHandOffTest}): a follower queues itself under the lock (its wait's prepare step) and then
 * tries the role once more before it sleeps (the wait loop's re-check); a reader gives the role back (a volatile
 * store) and then looks at the queue under the lock. Either the follower takes the role, or the leaving reader
 * finds it queued and wakes it (that the wake-up reaches a follower about to sleep is the wait loop's own
 * hand-off). The flag's release and acquire also order the state only the role's holder touches.
 *
 * <p>No hand-off is lost to a follower that stops waiting as it is handed the role (its call completed by another
 * thread, timed out, interrupted): the leaving reader hands it over with a compare-and-set of the follower's
 * {@link Follower#hand}, the follower leaves with one of {@link Follower#leave}; one of the two wins. If the reader
 * wins, the follower passes the role on when it leaves; if the follower wins, the reader hands the role to the next
 * follower ({@code ReaderRoleLeaveTest} in the jcstress module).
 *
 * @param <T> a follower: what the leaving reader hands the role to
 */
final class ReaderRole<T extends ReaderRole.Follower> {
    /** What a caller waiting for the reader shows the leaving reader. */
    interface Follower {
        /** @return true if it needs no reader any more (its call is done) */
        boolean done();

        /**
         * The leaving reader hands it the role, unless it left first.
         *
         * @return true if handed (it now waits to be woken and take the role)
         */
        boolean hand();

        /**
         * The follower stops waiting (done, timed out, interrupted), unless it was handed the role first.
         *
         * @return true if it left without the role; false if it was handed the role and must pass it on
         */
        boolean leave();

        /** The follower waits again (before it queues once more, or once it took the role): no hand-off pending. */
        void rearm();

        /** The leaving reader took it out of the queue. */
        void dequeued();
    }

    private final AtomicBoolean taken = new AtomicBoolean();
    /** Followers, oldest first; under its own lock (a few threads, short sections, no allocation once grown). */
    private final ArrayDeque<T> followers = new ArrayDeque<>();

    /** @return true if the calling thread now holds the role */
    boolean tryTake() {
        return !taken.get() && taken.compareAndSet(false, true);
    }

    /**
     * A calling thread will sleep waiting for the reader: queued before it tries the role once more. Its hand state
     * is reset in the same step ({@link Follower#rearm}): a hand-off that reached it before, and found the role
     * taken again by another thread, is over; one made from now on reaches it in the queue.
     *
     * @param f the follower
     */
    void follow(T f) {
        synchronized (followers) {
            f.rearm();
            followers.addLast(f);
        }
    }

    /**
     * A follower that no longer waits (its call done): out of the queue, if it still is.
     *
     * @param f the follower
     */
    void unfollow(T f) {
        synchronized (followers) {
            if (followers.remove(f)) {
                f.dequeued();
            }
        }
    }

    /**
     * A follower took the role itself ({@link #tryTake}): out of the queue, and no hand-off pending (one made
     * before this, while the role was free, is void: it holds the role now).
     *
     * @param f the follower
     */
    void took(T f) {
        synchronized (followers) {
            if (followers.remove(f)) {
                f.dequeued();
            }
            f.rearm();
        }
    }

    /** @return followers queued now */
    int followers() {
        synchronized (followers) {
            return followers.size();
        }
    }

    /**
     * Gives the role back and hands it to the follower that waited longest and still waits (see the class comment):
     * the caller wakes it, and it takes the role. Followers whose calls are done, or that left as they were
     * handed the role, are passed over. Taking a follower out of the queue and handing it the role are one step
     * under the queue's lock, so a follower that queues itself again ({@link #follow}) does so either before (and
     * is handed the role) or after (with its hand state reset): never in between, which would leave it queued as
     * handed, passed over by the next hand-off.
     *
     * @return the follower handed the role, or null if none waits
     */
    T handOff() {
        taken.set(false);
        synchronized (followers) {
            T next;
            while ((next = followers.pollFirst()) != null) {
                next.dequeued();
                if (!next.done() && next.hand()) {
                    return next;
                }
            }
            return null;
        }
    }

    /** @return true while a thread holds the role (tests) */
    boolean isTaken() {
        return taken.get();
    }
}
