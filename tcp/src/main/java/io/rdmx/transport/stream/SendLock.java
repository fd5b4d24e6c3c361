package io.rdmx.transport.stream;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The send lock of a stream connection, with an owed acknowledgement that whoever holds the lock carries.
 *
 * <p>The event loop must not wait for a posting thread that holds the lock across its {@code writev}: that wait
 * costs a futex sleep and wake on both threads, in a round trip exactly when the woken reader answers. So the
 * event loop only records the ACK it owes ({@link #owe}) and takes the lock if it is free; if it is not, the
 * holder writes the ACK (in front of its own frame, in the same {@code writev}: {@link #takeOwed}) or, at the
 * latest, when it releases the lock ({@link #unlock}). No ACK is lost: the event loop stores the owed sequence
 * number before it tries the lock, and a holder looks at it after it released the lock; if the holder looked
 * too early, the event loop's try found the lock free (or a later holder looks). Checked by the jcstress test
 * {@code SendLockOwedAckTest}.
 */
final class SendLock {
    /** Writes one ACK frame; called with the lock held. */
    @FunctionalInterface
    interface AckWriter {
        /**
         * @param seq the highest sequence number handled
         */
        void writeAck(long seq);
    }

    private final ReentrantLock lock = new ReentrantLock();
    /** The highest sequence number owed an ACK, 0 if none (sequence numbers start at 1). */
    private final AtomicLong owed = new AtomicLong();
    private final AckWriter writer;

    /**
     * @param writer writes an owed ACK under the lock
     */
    SendLock(AckWriter writer) {
        this.writer = writer;
    }

    void lock() {
        lock.lock();
    }

    /**
     * Releases the lock, then writes an ACK owed meanwhile if the lock is free (else its next holder does). A
     * nested release leaves it to the outermost one.
     */
    void unlock() {
        lock.unlock();
        if (owed.get() != 0 && !lock.isHeldByCurrentThread()) {
            drain();
        }
    }

    /**
     * Owes the peer an ACK up to {@code seq} (cumulative, so only the highest counts) and writes it now if the
     * lock is free; never waits for the lock. One thread (the event loop) owes.
     *
     * @param seq the highest sequence number handled, at least 1
     */
    void owe(long seq) {
        owed.getAndAccumulate(seq, Math::max);
        drain();
    }

    /**
     * With the lock held: takes the owed ACK to send it with a frame.
     *
     * @return the sequence number to acknowledge, or 0 if none is owed
     */
    long takeOwed() {
        return owed.get() == 0 ? 0 : owed.getAndSet(0);
    }

    /**
     * With the lock held: gives back an ACK taken by {@link #takeOwed} whose frame was not written; it goes out
     * when the lock is released.
     *
     * @param seq what {@link #takeOwed} returned (0: nothing)
     */
    void restoreOwed(long seq) {
        if (seq != 0) {
            owed.getAndAccumulate(seq, Math::max);
        }
    }

    /** @return the sequence number owed an ACK, 0 if none (tests) */
    long owed() {
        return owed.get();
    }

    private void drain() {
        while (owed.get() != 0 && lock.tryLock()) {
            try {
                long seq = owed.getAndSet(0);
                if (seq != 0) {
                    writer.writeAck(seq);
                }
            } finally {
                lock.unlock();
            }
        }
    }
}
