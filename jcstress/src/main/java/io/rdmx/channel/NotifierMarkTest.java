package io.rdmx.channel;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.JI_Result;

/**
 * The {@link Notifier}'s mark/drain ({@link DirtyQueue}, the queue the notifier uses): a ring with position 1
 * pending is queued; a writer stores position 2 and marks the ring while the notifier drains the queue. Either
 * the drain takes position 2, or the ring is queued again with 2 pending: never a pending position in a ring
 * that is not queued (a lost mark: the position would never be sent). (In this package of the jcstress module
 * so that it reaches the package-private queue.)
 */
@JCStressTest
@Description("Notifier: mark (store the position, CAS queued, offer) against drain (poll, clear queued, take)")
@Outcome(id = "2, 0", expect = Expect.ACCEPTABLE, desc = "the drain took the new position")
@Outcome(id = "1, 1", expect = Expect.ACCEPTABLE, desc = "the drain took the old one; the ring is queued again")
@Outcome(id = "2, 3", expect = Expect.ACCEPTABLE, desc = "the drain took the new one; a spare mark, harmless")
@Outcome(id = "1, 2", expect = Expect.FORBIDDEN, desc = "lost mark: position 2 pending, the ring not queued")
@Outcome(id = "2, 2", expect = Expect.FORBIDDEN, desc = "lost mark")
@Outcome(expect = Expect.FORBIDDEN, desc = "impossible")
@State
public class NotifierMarkTest {
    /** A ring as the notifier sees it: a copy of {@link ChannelWriter}'s queued flag and pending position. */
    static final class Ring implements Notifier.Notifiable {
        final AtomicBoolean queued = new AtomicBoolean();
        final AtomicLong pending = new AtomicLong(-1);

        @Override
        public AtomicBoolean queued() {
            return queued;
        }

        /** As {@link ChannelWriter#drainInto}: takes the pending position, writes its entry. */
        @Override
        public int drainInto(ByteBuffer b, int at, int i) {
            long p = pending.getAndSet(-1);
            if (p < 0) {
                return 0;
            }
            NotificationDescriptor.entry(b, at, i, NotificationDescriptor.KIND_DATA, 0, p);
            return 1;
        }
    }

    private final DirtyQueue dirty = new DirtyQueue();
    private final Ring ring = new Ring();
    private final ByteBuffer message = ByteBuffer.allocate(256).order(ByteOrder.LITTLE_ENDIAN);
    private final Notifier.Covered cover = new Notifier.Covered();
    private long drained;

    /** Position 1 pending, the ring queued. */
    public NotifierMarkTest() {
        ring.pending.set(1);
        dirty.mark(ring);
    }

    /** A writer: a new position, then the mark ({@link ChannelWriter}'s post or publish). */
    @Actor
    public void writer() {
        ring.pending.set(2);
        dirty.mark(ring);
    }

    /** The notifier: drains the queue into a message ({@link Notifier}'s trySend). */
    @Actor
    public void notifier() {
        // the drain may take the ring twice (queued again while draining): the last entry is the newest
        int n = dirty.drain(message, 0, 8, cover);
        drained = n > 0 ? message.getLong(NotificationDescriptor.HEADER_LENGTH
            + (n - 1) * NotificationDescriptor.ENTRY_LENGTH + NotificationDescriptor.ENTRY_POSITION_OFFSET) : 0;
    }

    /**
     * After both.
     *
     * @param r r1 = the newest position drained, r2 = 0 nothing pending and not queued, 1 pending and queued,
     *          2 pending and not queued (lost), 3 nothing pending and queued (spare)
     */
    @Arbiter
    public void arbiter(JI_Result r) {
        r.r1 = drained;
        boolean pending = ring.pending.get() >= 0;
        boolean queued = !dirty.isEmpty();
        r.r2 = pending ? (queued ? 1 : 2) : (queued ? 3 : 0);
    }
}
