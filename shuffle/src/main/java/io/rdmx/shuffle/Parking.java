package io.rdmx.shuffle;

import io.rdmx.channel.RingBuffer;
import io.rdmx.transport.RdmxException;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;

/**
 * One worker's blocking waits, for records or for space in the buffer its last offer found full, and the
 * wake-ups other workers of its process give it. A writer to this worker's in-process ring wakes it after a
 * commit while it is {@link #waiting}; a reader of the ring this worker waits on ({@link #spaceFrom}) wakes it
 * after a read. Both sides store their part, then a full fence, then load the other's: the waiter announces
 * itself before it reads, so a commit or read after that read sees the announcement. The waits are bounded
 * (the transport's read or park), so a wake-up that is lost costs at most their bound. Neither a commit nor a
 * read is missed by both sides (the Dekker pattern; jcstress {@code ParkingRecordWakeTest},
 * {@code ParkingSpaceWakeTest}).
 *
 * <p>Not core's {@code WaitLoop}: these waits are one pass, not a loop (the worker's caller loops, doing work
 * between passes), their sleep is the transport's own bounded read or park of this worker (which may itself bring
 * the records waited for, and which {@link ShuffleTransport#wakeup} ends), not a sleeper of their own, and the
 * waiter reads its rings between announcing the wait and sleeping, with delivery paused.
 */
final class Parking {
    private final ShuffleTransport transport;
    private final int local;
    private final ShuffleTransport.Outbox[] outboxes;
    /** The rings to the workers of this process (this worker writes them). */
    private final RingBuffer[] localOut;
    private final Packer packer;
    private final ExchangeWindow window;
    private final Inbox inbox;
    private final Delivery delivery;

    private volatile boolean waiting;
    /**
     * While {@link #waiting}: the worker of this process whose full ring (from this worker) it waits on, or -1.
     * That reader wakes it after a read; other readers of its rows do not (a wake-up for space it does not wait
     * for costs both threads a futex call and a context switch).
     */
    private volatile int spaceFrom = -1;

    Parking(ShuffleTransport transport, int local, ShuffleTransport.Outbox[] outboxes, RingBuffer[] localOut,
            Packer packer, ExchangeWindow window, Inbox inbox, Delivery delivery) {
        this.transport = transport;
        this.local = local;
        this.outboxes = outboxes;
        this.localOut = localOut;
        this.packer = packer;
        this.window = window;
        this.inbox = inbox;
        this.delivery = delivery;
    }

    /** A worker of this process committed to the ring it writes this worker: wakes this one if it waits. */
    void wakeIfWaiting() {
        VarHandle.fullFence();
        if (waiting) {
            transport.wakeup(local);
        }
    }

    /**
     * Another worker of this process read from the ring this worker writes it: wakes this worker if it waits for
     * space in that very ring.
     *
     * @param reader that worker's local index
     */
    void wakeIfWaitingForSpace(int reader) {
        VarHandle.fullFence();
        if (waiting && spaceFrom == reader) {
            transport.wakeup(local);
        }
    }

    /**
     * Before a wait for space in a local ring: says which ring (a fence follows), then whether its reader moved
     * the tail since the offer found it full (then there is space: do not sleep; else the reader wakes this
     * worker after its next read, having seen {@link #spaceFrom}). Package-private for the jcstress test of this
     * hand-off ({@code ParkingSpaceWakeTest}).
     *
     * @param w the local worker that reads the full ring
     * @param fullTail that ring's tail when the offer found it full
     * @return true if space came already
     */
    boolean armSpace(int w, long fullTail) {
        spaceFrom = w;
        waiting = true;
        VarHandle.fullFence();
        return localOut[w].tailAcquire() != fullTail;
    }

    /**
     * Announces the wait (for space in a local ring, or for anything), before the reads that precede it.
     * Package-private for the jcstress test of this hand-off ({@code ParkingRecordWakeTest}).
     *
     * @param dst the global worker whose full buffer the wait is for, or -1 (waiting for records or a credit)
     * @return true if space came already: do not wait
     */
    boolean arm(int dst) {
        int spaceW = dst < 0 ? -1 : packer.localWorker(dst);
        if (spaceW >= 0) {
            return armSpace(spaceW, packer.spaceTail());
        }
        waiting = true;
        VarHandle.fullFence();
        return false;
    }

    private void disarm(ShuffleTransport.Outbox ob) {
        waiting = false;
        spaceFrom = -1;
        if (ob != null) {
            ob.wakeOnSpace(-1);
        }
    }

    /**
     * Waits for space in the back-pressured buffer: reads incoming records into the inbox meanwhile (not
     * delivering them), so two workers sending to each other cannot deadlock while their inboxes have room.
     *
     * @throws RdmxException if a peer is lost
     * @throws InterruptedException if interrupted
     */
    void awaitSpace() throws RdmxException, InterruptedException {
        // waiting for a credit: any record read may be it (no wake-up on space to arm)
        int dst = packer.pressuredByWindow() ? -1 : packer.pressuredDst();
        if (window.owes()) {
            window.sendCredits();
        }
        for (ShuffleTransport.Outbox ob : outboxes) {
            ob.flush();
        }
        if (delivery.paused()) {
            // inside a handler: a ring is being read, it cannot be read again; wait for the receiver alone (no
            // wake-up is armed for that here: the bound is what ends this wait, unless another wake-up does)
            transport.park(local, 20_000);
            return;
        }
        delivery.pause();
        ShuffleTransport.Outbox ob = dst >= 0 ? outboxes[dst] : null;
        if (ob != null) {
            ob.wakeOnSpace(local);
        }
        try {
            // waiting from before the read of the local rings: a commit after that read wakes this worker
            if (arm(dst)) {
                return; // the reader freed space meanwhile
            }
            if (delivery.readAll() == 0) {
                int room = inbox.room();
                if (room > 0) {
                    delivery.readTransport(room, TimeUnit.MILLISECONDS.toNanos(1));
                } else {
                    transport.park(local, 50_000); // inbox full: woken for space (armed above), bounded
                }
            }
        } finally {
            disarm(ob);
            delivery.resume();
        }
    }

    /**
     * Blocks until records arrive, space frees in the buffer the last offer found full, or the timeout (the
     * caller flushed first). Forgets the last back-pressured offer.
     *
     * @param timeoutNanos the bound
     * @return records read meanwhile (delivered or set aside); 0 on timeout or a wake-up for space
     * @throws RdmxException if a peer is lost
     * @throws InterruptedException if interrupted
     */
    int await(long timeoutNanos) throws RdmxException, InterruptedException {
        long nanos = timeoutNanos;
        // waiting for a credit: any record read may be it
        int dst = packer.pressuredByWindow() ? -1 : packer.pressuredDst();
        packer.clearPressure();
        ShuffleTransport.Outbox ob = dst >= 0 ? outboxes[dst] : null;
        if (ob != null) {
            ob.wakeOnSpace(local);
            nanos = Math.min(nanos, TimeUnit.MILLISECONDS.toNanos(1));
        }
        if (window.owes()) {
            // a credit waits for space in a full ring: nothing arms a wake-up for that, look again soon
            nanos = Math.min(nanos, TimeUnit.MILLISECONDS.toNanos(1));
        }
        try {
            if (arm(dst)) {
                return 0; // the reader freed space meanwhile
            }
            int n = delivery.readAll();
            int room = inbox.room();
            if (n == 0 && room > 0) {
                n = delivery.readTransport(room, Math.max(1, nanos));
            } else if (n == 0) {
                transport.park(local, Math.min(nanos, 50_000)); // inbox full: as in awaitSpace
            }
            return n;
        } finally {
            disarm(ob);
        }
    }
}
