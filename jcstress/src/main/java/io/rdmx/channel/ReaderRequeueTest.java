package io.rdmx.channel;

import java.nio.ByteBuffer;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * The {@link ChannelReader}'s re-queue ({@link ReadyQueue}, the queue the reader uses, with a real
 * {@link IncomingRing}): the ring is queued with 4 records announced; the reader polls it, reads what is
 * announced and lets it go, while the network thread announces 4 more records (head release, then signal).
 * Either the reader read them, or the ring is queued again: never a ring with unread data that no one queued.
 * (In this package of the jcstress module so that it reaches the package-private classes.)
 */
@JCStressTest
@Description("ChannelReader: done reading (clear queued, fence, re-check) against a data signal")
@Outcome(id = "0, 0", expect = Expect.ACCEPTABLE, desc = "the reader read everything")
@Outcome(id = "1, 1", expect = Expect.ACCEPTABLE, desc = "unread data, the ring queued again")
@Outcome(id = "0, 1", expect = Expect.ACCEPTABLE, desc = "all read, a spare queue entry (harmless)")
@Outcome(id = "1, 0", expect = Expect.FORBIDDEN, desc = "lost: unread data, the ring not queued")
@State
public class ReaderRequeueTest {
    private static final ChannelConfig CONFIG = ChannelConfig.builder(1).ringCapacity(1024).build();
    private static final RecordHandler IGNORE = (stream, buffer, offset, length, source) -> { };
    private final ReadyQueue ready = new ReadyQueue();
    private final IncomingRing ring;

    /** 8 empty records in the ring's memory; the first 4 announced and the ring queued. */
    public ReaderRequeueTest() {
        ByteBuffer memory = ByteBuffer.allocateDirect(CONFIG.ringCapacity());
        RingBuffer peer = new RingBuffer(memory.duplicate(), CONFIG.maxRecordPayload());
        for (int i = 0; i < 8; i++) {
            peer.write(1, ByteBuffer.allocate(0));
        }
        // no peer: reading 64 bytes stays below the credit threshold, so no credit is sent
        ring = new IncomingRing(null, 0, 0, 0, memory, CONFIG, null);
        ring.onData(32);
        ready.signal(ring);
    }

    /** The network thread: a data notification up to 64 ({@link PeerChannel}, then {@link ChannelReader}). */
    @Actor
    public void network() {
        ring.onData(64);
        ready.signal(ring);
    }

    /** The reader thread: one round of {@link ChannelReader#poll}. */
    @Actor
    public void reader() {
        IncomingRing r = ready.poll();
        if (r != null) {
            r.read(IGNORE, Integer.MAX_VALUE);
            ready.doneReading(r);
        }
    }

    /**
     * After both.
     *
     * @param r r1 = 1 if the ring has unread data, r2 = 1 if it is queued
     */
    @Arbiter
    public void arbiter(II_Result r) {
        r.r1 = ring.hasData() ? 1 : 0;
        r.r2 = ready.isEmpty() ? 0 : 1;
    }
}
