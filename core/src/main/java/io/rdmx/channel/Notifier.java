package io.rdmx.channel;

import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Post;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Region;
import io.rdmx.transport.WorkRequest;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Batches the notifications of one peer connection into SENDs. Rings with something to report mark
 * themselves dirty (at most once in the queue); whoever wins the {@code holder} flag drains the dirty rings into
 * one message in a free send slot and posts it. Up to {@link ChannelConfig#notificationsInFlight()} SENDs (one
 * per slot, at most {@link #SLOTS}) are in flight at once; while all are, new notifications accumulate and go
 * out together when one completes (the completing thread then calls {@link #onSendComplete(int)}). Any thread;
 * no locks.
 *
 * <p>No lost notification: a marker that loses the holder flag leaves its ring to the holder, which looks at
 * the queue again after it lets go; a holder that finds every slot in flight lets go and looks at the slots
 * again, and a completion frees its slot before it looks at the queue. ({@code io.rdmx.channel.NotifierSlotsTest}
 * in the jcstress module.)
 */
final class Notifier {
    /** Send slots: the most notification SENDs in flight at once. */
    static final int SLOTS = 2;

    /** Something that may have a position to report. */
    interface Notifiable {
        /** @return the at-most-once-queued flag */
        AtomicBoolean queued();

        /**
         * Writes this ring's pending entry, if any.
         *
         * @param b the message buffer
         * @param at the message index
         * @param i the entry number
         * @return 1 if an entry was written, else 0
         */
        int drainInto(ByteBuffer b, int at, int i);
    }

    /** Where the notifier's SENDs go: the peer's connection (a test double in the jcstress module). */
    interface Port {
        /** @return false once the peer is down: nothing more is sent */
        boolean isOpen();

        /**
         * Posts one notification SEND.
         *
         * @param send the request (its local range set; the port sets the work-request id)
         * @param slot the send slot, handed back to {@link #onSendComplete} by its completion
         * @return {@link Post#OK} or why not
         * @throws ConnectionClosedException the connection is gone
         */
        int post(WorkRequest send, int slot) throws ConnectionClosedException;

        /**
         * Takes the peer down.
         *
         * @param cause why
         */
        void fail(Throwable cause);

        /** @return the peer's name, for errors */
        String name();

        /** One notification SEND was posted (metrics). */
        void sent();
    }

    private final Port port;
    private final Region slots;
    private final int firstSlot;
    private final int window;
    private final DirtyQueue dirty = new DirtyQueue();
    /** The slots, written with absolute puts by the holder only: no view per SEND. */
    private final ByteBuffer slotsView;
    /** Won by the one thread that fills a slot. */
    private final AtomicBoolean holder = new AtomicBoolean();
    /** Bit i: slot {@code firstSlot + i} is in flight; set by the holder before its post, cleared by the completion. */
    private final AtomicInteger busy = new AtomicInteger();
    /** One request per slot: a provider may hold a posted request until its completion. */
    private final WorkRequest[] sends = new WorkRequest[SLOTS];
    private final Covered[] covered = new Covered[SLOTS];

    /**
     * @param port where the SENDs go
     * @param slots the region holding the send slots
     * @param firstSlot the first of {@link #SLOTS} consecutive message slots in it
     * @param window the most SENDs in flight, 1 to {@link #SLOTS}
     */
    Notifier(Port port, Region slots, int firstSlot, int window) {
        if (window < 1 || window > SLOTS) {
            throw new IllegalArgumentException("notifications in flight=" + window + " out of range [1, " + SLOTS
                + "]");
        }
        this.port = port;
        this.slots = slots;
        this.firstSlot = firstSlot;
        this.window = window;
        this.slotsView = slots.buffer();
        for (int i = 0; i < SLOTS; i++) {
            sends[i] = new WorkRequest().opcode(io.rdmx.transport.Opcode.SEND);
            covered[i] = new Covered();
        }
    }

    /**
     * The writers whose data entries one notification carries, with the positions: its completion completes their
     * WRITEs up to there. Filled by the notifier's holder, emptied by the completing thread; no object per SEND.
     */
    static final class Covered {
        private final ChannelWriter[] writers = new ChannelWriter[NotificationDescriptor.MAX_ENTRIES];
        private final long[] ends = new long[NotificationDescriptor.MAX_ENTRIES];
        private int size;

        /**
         * @param w a writer whose entry the message carries
         * @param end the position of the entry
         */
        void add(ChannelWriter w, long end) {
            writers[size] = w;
            ends[size] = end;
            size++;
        }

        /** @return the writers added */
        int size() {
            return size;
        }

        /** Completes every writer's WRITEs up to its position, and empties this. */
        void completeAll() {
            for (int i = 0; i < size; i++) {
                ChannelWriter w = writers[i];
                writers[i] = null;
                w.onWriteComplete(ends[i]);
            }
            size = 0;
        }
    }

    /**
     * Queues a ring's notification and sends if a slot is free. Any thread.
     *
     * @param n the ring
     */
    void mark(Notifiable n) {
        dirty.mark(n);
        trySend();
    }

    /**
     * Queues a ring's notification without sending: it goes out with the next notification to the peer (any
     * thread's {@link #mark}, a completion's), or by {@link #sendQueued} (the engine's scan, within the flush
     * interval). Any thread.
     *
     * @param n the ring
     */
    void markLazily(Notifiable n) {
        dirty.mark(n);
    }

    /** Sends what is queued (lazily marked rings) if a slot is free. Any thread. */
    void sendQueued() {
        trySend();
    }

    /** @return true when no notification waits and none is in flight */
    boolean quiet() {
        // the queue first: a holder marks its slot busy before it drains the queue
        return dirty.isEmpty() && busy.get() == 0;
    }

    /** @return the notification SENDs in flight now (tests) */
    int inFlight() {
        return Integer.bitCount(busy.get());
    }

    /**
     * The completing thread: a SEND completed. In SEND mode it also completes the (unsignaled) WRITEs whose data
     * notifications it carried: on a reliable connection a completion implies every request before it.
     *
     * @param slot the slot the SEND was posted from
     */
    void onSendComplete(int slot) {
        int i = slot - firstSlot;
        if (i < 0 || i >= SLOTS || (busy.get() & (1 << i)) == 0) {
            port.fail(new RdmxException("a notification SEND to '" + port.name() + "' completed from slot=" + slot
                + ", which has none in flight"));
            return;
        }
        covered[i].completeAll(); // before the slot is free: a holder may fill it again right after
        busy.getAndAdd(-(1 << i));
        trySend();
    }

    private int freeSlot(int b) {
        for (int i = 0; i < window; i++) {
            if ((b & (1 << i)) == 0) {
                return i;
            }
        }
        return -1;
    }

    private void trySend() {
        while (!dirty.isEmpty() && port.isOpen()) {
            if (!holder.compareAndSet(false, true)) {
                return; // the holder looks at the queue again after it lets go
            }
            int i = freeSlot(busy.get());
            if (i < 0) {
                holder.set(false);
                if (freeSlot(busy.get()) < 0) {
                    return; // every slot in flight: the completion that frees one looks at the queue
                }
                continue; // freed while we held the flag: its completion may have found the flag taken
            }
            busy.getAndAdd(1 << i);
            int slot = firstSlot + i;
            int at = slot * NotificationDescriptor.MESSAGE_SLOT;
            ByteBuffer b = slotsView;
            int count = dirty.drain(b, at, NotificationDescriptor.MAX_ENTRIES, covered[i]);
            if (count == 0) {
                busy.getAndAdd(-(1 << i));
                holder.set(false);
                continue;
            }
            NotificationDescriptor.header(b, at, NotificationDescriptor.TYPE_NOTIFY, count);
            WorkRequest send = sends[i];
            send.local(slots, at, NotificationDescriptor.HEADER_LENGTH + count * NotificationDescriptor.ENTRY_LENGTH);
            try {
                int rc = port.post(send, slot);
                if (rc != Post.OK) {
                    holder.set(false);
                    port.fail(new RdmxException("notification SEND to '" + port.name() + "' refused: "
                        + Post.name(rc)));
                    return;
                }
            } catch (ConnectionClosedException e) {
                holder.set(false);
                port.fail(e);
                return;
            }
            port.sent();
            holder.set(false);
        }
    }
}
