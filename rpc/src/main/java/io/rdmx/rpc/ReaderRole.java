package io.rdmx.rpc;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Who reads an {@link RpcClient}'s responses now: a calling thread waiting for its own response (it takes the role
 * when free), else the client's reader thread. Callers that find the role taken follow: they park until the reading
 * thread completes their calls. A reader that leaves while followers wait has the reader thread take over.
 *
 * <p>No follower is left without a reader (the Dekker pattern, proved by the jcstress test
 * {@code ReaderRoleHandOffTest}): a follower counts itself ({@link #follow}, a full fence) and then tries the role
 * once more before it parks; a reader gives the role back ({@link #release}, a volatile store) and then reads the
 * count. Either the follower takes the role, or the leaving reader sees it and wakes the reader thread. The
 * flag's release and acquire also order the state only the role's holder touches.
 */
final class ReaderRole {
    private final AtomicBoolean taken = new AtomicBoolean();
    private final AtomicInteger followers = new AtomicInteger();

    /** @return true if the calling thread now holds the role */
    boolean tryTake() {
        return !taken.get() && taken.compareAndSet(false, true);
    }

    /** A calling thread will park waiting for the reader: counted before it tries the role once more. */
    void follow() {
        followers.incrementAndGet();
    }

    /** A follower that no longer waits (its call done, or it took the role). */
    void unfollow() {
        followers.decrementAndGet();
    }

    /** @return callers waiting for another thread to read their responses */
    int followers() {
        return followers.get();
    }

    /**
     * Gives the role back.
     *
     * @return true if followers wait: someone must take the role for them (the reader thread)
     */
    boolean release() {
        taken.set(false);
        return followers.get() > 0;
    }

    /** @return true while a thread holds the role (tests) */
    boolean isTaken() {
        return taken.get();
    }
}
