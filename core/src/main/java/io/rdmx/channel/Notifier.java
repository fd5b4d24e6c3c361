package io.rdmx.channel;

import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Post;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Region;
import io.rdmx.transport.WorkRequest;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Batches the notifications of one peer connection into SENDs. Rings with something to report mark
 * themselves dirty (at most once in the queue); whoever wins {@code inFlight} drains the dirty rings into one
 * message and posts it; while that SEND is in flight, new notifications accumulate and go out together when it
 * completes (the network thread then calls {@link #onSendComplete(int)}). Any thread; no locks.
 */
final class Notifier {
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

    private final PeerChannel peer;
    private final Region slots;
    private final int firstSlot;
    private final DirtyQueue dirty = new DirtyQueue();
    /** The slots, written with absolute puts by the holder of {@link #inFlight} only: no view per SEND. */
    private final ByteBuffer slotsView;
    private final AtomicBoolean inFlight = new AtomicBoolean();
    private final WorkRequest send = new WorkRequest();
    private final Covered covered0 = new Covered();
    private final Covered covered1 = new Covered();
    private int next;

    Notifier(PeerChannel peer, Region slots, int firstSlot) {
        this.peer = peer;
        this.slots = slots;
        this.firstSlot = firstSlot;
        this.slotsView = slots.buffer();
        send.opcode(io.rdmx.transport.Opcode.SEND);
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

    private Covered covered(int slot) {
        return ((slot - firstSlot) & 1) == 0 ? covered0 : covered1;
    }

    /**
     * Queues a ring's notification and sends if no SEND is in flight. Any thread.
     *
     * @param n the ring
     */
    void mark(Notifiable n) {
        dirty.mark(n);
        trySend();
    }

    /** @return true when no notification waits and none is in flight */
    boolean quiet() {
        return dirty.isEmpty() && !inFlight.get();
    }

    /**
     * Network thread: the previous SEND completed. In SEND mode it also completes the (unsignaled) WRITEs whose
     * data notifications it carried: on a reliable connection a completion implies every request before it.
     *
     * @param slot the slot the SEND was posted from
     */
    void onSendComplete(int slot) {
        Covered done = covered(slot);
        inFlight.set(false);
        done.completeAll();
        trySend();
    }

    private void trySend() {
        while (!dirty.isEmpty() && peer.isOpen()) {
            if (!inFlight.compareAndSet(false, true)) {
                return;
            }
            int slot = firstSlot + (next++ & 1);
            int at = slot * NotificationDescriptor.MESSAGE_SLOT;
            ByteBuffer b = slotsView;
            Covered cover = covered(slot);
            int count = dirty.drain(b, at, NotificationDescriptor.MAX_ENTRIES, cover);
            if (count == 0) {
                inFlight.set(false);
                continue;
            }
            NotificationDescriptor.header(b, at, NotificationDescriptor.TYPE_NOTIFY, count);
            send.local(slots, at, NotificationDescriptor.HEADER_LENGTH + count * NotificationDescriptor.ENTRY_LENGTH)
                .wrId(peer.wrId(WrIdDescriptor.KIND_NOTIFY, slot));
            try {
                int rc = peer.connection().post(send);
                if (rc != Post.OK) {
                    peer.fail(new RdmxException("notification SEND to '" + peer.name() + "' refused: "
                        + Post.name(rc)));
                    return;
                }
            } catch (ConnectionClosedException e) {
                peer.fail(e);
                return;
            }
            peer.engine().metricNotificationSent();
            return;
        }
    }
}
