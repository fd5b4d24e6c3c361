package io.rdmx.rpc;

import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Who reads an {@link RpcClient}'s responses now: a calling thread waiting for its own response takes the role when
 * it is free. Callers that find the role taken follow: they queue themselves and park until the reading thread
 * completes their calls. A reader that leaves while followers wait hands the role to the one that waited longest
 * (it unparks that thread, which takes the role and reads its own response): the wake-up a follower needs anyway,
 * and no reader thread in between.
 *
 * <p>No follower is left without a reader (the Dekker pattern through the queue's lock, proved by the jcstress
 * test {@code ReaderRoleHandOffTest}): a follower queues itself under the lock and then tries the role once more
 * before it parks; a reader gives the role back (a volatile store) and then looks at the queue under the lock.
 * Either the follower takes the role, or the leaving reader finds it queued and wakes it. The flag's release and
 * acquire also order the state only the role's holder touches.
 *
 * @param <T> a follower: what the leaving reader hands the role to
 */
final class ReaderRole<T> {
    private final AtomicBoolean taken = new AtomicBoolean();
    /** Followers, oldest first; under its own lock (a few threads, short sections, no allocation once grown). */
    private final ArrayDeque<T> followers = new ArrayDeque<>();

    /** @return true if the calling thread now holds the role */
    boolean tryTake() {
        return !taken.get() && taken.compareAndSet(false, true);
    }

    /**
     * A calling thread will park waiting for the reader: queued before it tries the role once more.
     *
     * @param f the follower
     */
    void follow(T f) {
        synchronized (followers) {
            followers.addLast(f);
        }
    }

    /**
     * A follower that no longer waits (its call done, or it took the role).
     *
     * @param f the follower
     */
    void unfollow(T f) {
        synchronized (followers) {
            followers.remove(f);
        }
    }

    /** @return followers queued now */
    int followers() {
        synchronized (followers) {
            return followers.size();
        }
    }

    /**
     * Gives the role back.
     *
     * @return the follower that waited longest, taken out of the queue: the caller wakes it to take the role; or
     *         null if none waits
     */
    T release() {
        taken.set(false);
        synchronized (followers) {
            return followers.pollFirst();
        }
    }

    /**
     * After {@link #release}: the next follower, when the one it returned no longer needs the role.
     *
     * @return the follower that waited longest now, taken out of the queue, or null
     */
    T nextFollower() {
        synchronized (followers) {
            return followers.pollFirst();
        }
    }

    /** @return true while a thread holds the role (tests) */
    boolean isTaken() {
        return taken.get();
    }
}
