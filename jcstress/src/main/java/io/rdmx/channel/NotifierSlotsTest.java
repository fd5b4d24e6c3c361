package io.rdmx.channel;

import io.rdmx.transport.Post;
import io.rdmx.transport.Region;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.WorkRequest;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * The {@link Notifier}'s send slots: who fills a slot (the {@code holder} flag) and which slots are in flight
 * (the {@code busy} bits, cleared by completions). A notification marked while every slot is in flight must go
 * out when a completion frees one ({@link CompletionFreesASlot}, windows of two and one); two notifications
 * marked at once with free slots must both go out whichever thread fills ({@link TwoMarkers}); and never more
 * SENDs in flight than the window. (In this package of the jcstress module so that it reaches the
 * package-private notifier.)
 */
public final class NotifierSlotsTest {
    private NotifierSlotsTest() {
    }

    /** A ring as the notifier sees it: a pending position and the queued flag (as {@link ChannelWriter}). */
    static final class Ring implements Notifier.Notifiable {
        final AtomicBoolean queued = new AtomicBoolean();
        final AtomicLong pending = new AtomicLong(-1);
        final int index;

        Ring(int index) {
            this.index = index;
        }

        @Override
        public AtomicBoolean queued() {
            return queued;
        }

        @Override
        public int drainInto(ByteBuffer b, int at, int i) {
            long p = pending.getAndSet(-1);
            if (p < 0) {
                return 0;
            }
            NotificationDescriptor.entry(b, at, i, NotificationDescriptor.KIND_DATA, index, p);
            return 1;
        }
    }

    /** The slots' memory: a heap buffer posing as a registered region. */
    static final class HeapRegion implements Region {
        private final ByteBuffer memory = ByteBuffer.allocate(Notifier.SLOTS * NotificationDescriptor.MESSAGE_SLOT)
            .order(ByteOrder.LITTLE_ENDIAN);

        @Override
        public long address() {
            return 0;
        }

        @Override
        public int length() {
            return memory.capacity();
        }

        @Override
        public int localKey() {
            return 0;
        }

        @Override
        public int remoteKey() {
            return 0;
        }

        @Override
        public int access() {
            return 0;
        }

        @Override
        public ByteBuffer buffer() {
            return memory.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        }

        @Override
        public RemoteRegion descriptor() {
            return new RemoteRegion(0, length(), 0);
        }

        @Override
        public String name() {
            return "slots";
        }

        @Override
        public int refCnt() {
            return 1;
        }

        @Override
        public Region retain() {
            return this;
        }

        @Override
        public boolean release() {
            return false;
        }
    }

    /**
     * A connection reduced to what the notifier sees: every SEND posted is read back at once; {@code sent} gets a
     * bit per ring position 2 announced, {@code most} the most SENDs in flight any post saw.
     */
    abstract static class Base implements Notifier.Port {
        final HeapRegion region = new HeapRegion();
        final Notifier notifier;
        final Ring a = new Ring(0);
        final Ring b = new Ring(1);
        final AtomicInteger sent = new AtomicInteger();
        final AtomicInteger inFlight = new AtomicInteger();
        volatile int most;

        Base(int window) {
            notifier = new Notifier(this, region, 0, window);
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public int post(WorkRequest send, int slot) {
            int now = inFlight.incrementAndGet();
            if (now > most) {
                most = now; // one holder at a time posts
            }
            ByteBuffer m = region.buffer();
            int at = slot * NotificationDescriptor.MESSAGE_SLOT;
            int count = m.getShort(at + NotificationDescriptor.COUNT_OFFSET) & 0xFFFF;
            for (int i = 0; i < count; i++) {
                int e = at + NotificationDescriptor.HEADER_LENGTH + i * NotificationDescriptor.ENTRY_LENGTH;
                int ring = m.getShort(e + NotificationDescriptor.ENTRY_RING_OFFSET);
                if (m.getLong(e + NotificationDescriptor.ENTRY_POSITION_OFFSET) == 2) {
                    sent.getAndAdd(1 << ring);
                }
            }
            return Post.OK;
        }

        /** The completion of the SEND in {@code slot}, as the network thread delivers it. */
        void complete(int slot) {
            inFlight.decrementAndGet();
            notifier.onSendComplete(slot);
        }

        @Override
        public void fail(Throwable cause) {
            throw new AssertionError(cause);
        }

        @Override
        public String name() {
            return "peer";
        }

        @Override
        public void sent() {
        }

        /** Fills every slot of the window with a SEND announcing position 1 of ring a. */
        void fillWindow(int window) {
            for (int i = 0; i < window; i++) {
                a.pending.set(1);
                notifier.mark(a);
            }
        }
    }

    /** Window of two, both in flight: a mark races the completion of slot 0. */
    @JCStressTest
    @Description("Notifier, window 2 full: mark(position 2) against the completion that frees slot 0")
    @Outcome(id = "1, 2", expect = Expect.ACCEPTABLE, desc = "position 2 sent, by either thread; at most 2 in flight")
    @Outcome(id = "0, 2", expect = Expect.FORBIDDEN, desc = "lost: position 2 queued though slot 0 is free")
    @Outcome(expect = Expect.FORBIDDEN, desc = "impossible, or more SENDs in flight than the window")
    @State
    public static class CompletionFreesASlot extends Base {
        /** Two SENDs in flight. */
        public CompletionFreesASlot() {
            super(2);
            fillWindow(2);
        }

        /** A writer announces position 2. */
        @Actor
        public void writer() {
            a.pending.set(2);
            notifier.mark(a);
        }

        /** The network thread: slot 0's SEND completed. */
        @Actor
        public void completion() {
            complete(0);
        }

        /**
         * @param r r1 = 1 if position 2 was sent, r2 = the most SENDs in flight
         */
        @Arbiter
        public void arbiter(II_Result r) {
            r.r1 = sent.get();
            r.r2 = most;
        }
    }

    /** Window of one, in flight: a mark races its completion. */
    @JCStressTest
    @Description("Notifier, window 1 full: mark(position 2) against the completion that frees the slot")
    @Outcome(id = "1, 1", expect = Expect.ACCEPTABLE, desc = "position 2 sent, by either thread; one in flight")
    @Outcome(id = "0, 1", expect = Expect.FORBIDDEN, desc = "lost: position 2 queued though the slot is free")
    @Outcome(expect = Expect.FORBIDDEN, desc = "impossible, or two SENDs in flight in a window of one")
    @State
    public static class CompletionFreesTheOnlySlot extends Base {
        /** One SEND in flight. */
        public CompletionFreesTheOnlySlot() {
            super(1);
            fillWindow(1);
        }

        /** A writer announces position 2. */
        @Actor
        public void writer() {
            a.pending.set(2);
            notifier.mark(a);
        }

        /** The network thread: the SEND completed. */
        @Actor
        public void completion() {
            complete(0);
        }

        /**
         * @param r r1 = 1 if position 2 was sent, r2 = the most SENDs in flight
         */
        @Arbiter
        public void arbiter(II_Result r) {
            r.r1 = sent.get();
            r.r2 = most;
        }
    }

    /** Window of two, both free: two rings marked at once. */
    @JCStressTest
    @Description("Notifier, window 2 free: two writers mark two rings at once")
    @Outcome(id = "3, 1", expect = Expect.ACCEPTABLE, desc = "both in one SEND")
    @Outcome(id = "3, 2", expect = Expect.ACCEPTABLE, desc = "one SEND each")
    @Outcome(expect = Expect.FORBIDDEN, desc = "lost: a ring's position never sent (r1 1 or 2), or impossible")
    @State
    public static class TwoMarkers extends Base {
        /** Nothing in flight. */
        public TwoMarkers() {
            super(2);
        }

        /** A writer of ring a. */
        @Actor
        public void writerA() {
            a.pending.set(2);
            notifier.mark(a);
        }

        /** A writer of ring b. */
        @Actor
        public void writerB() {
            b.pending.set(2);
            notifier.mark(b);
        }

        /**
         * @param r r1 = bit per ring whose position 2 was sent, r2 = SENDs in flight
         */
        @Arbiter
        public void arbiter(II_Result r) {
            r.r1 = sent.get();
            r.r2 = inFlight.get();
        }
    }
}
