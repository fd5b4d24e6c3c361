package io.rdmx.jcstress;

import io.rdmx.channel.PairLayout;
import io.rdmx.channel.RingBuffer;
import io.rdmx.channel.SharedRing;
import java.nio.ByteBuffer;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.JJ_Result;

/**
 * Mapped publication: the writer claims and commits a record directly in the reader's ring and publishes the
 * head in shared memory (release store); the reader takes the head (acquire load) into its own ring and reads.
 * It sees no record or the whole record, never a header or a head without the payload. The two ends use two
 * views of one region, as two processes do.
 */
@JCStressTest
@Description("SharedRing: a record published through shared memory is visible only complete")
@Outcome(id = "-1, -1", expect = Expect.ACCEPTABLE, desc = "reader ran first: nothing published")
@Outcome(id = "42, 4242424242", expect = Expect.ACCEPTABLE, desc = "whole record")
@Outcome(expect = Expect.FORBIDDEN, desc = "torn record")
@State
public class SharedRingPublishTest {
    private static final int CAPACITY = 1024;
    private static final PairLayout LAYOUT = new PairLayout(1, 1, CAPACITY, true);
    private final ByteBuffer region = ByteBuffer.allocateDirect(LAYOUT.regionLength());
    private final RingBuffer writerRing = new RingBuffer(slice(region.duplicate()), 64);
    private final SharedRing writerSide = new SharedRing(region.duplicate(), LAYOUT.ringHeaderOffset(true, 0),
        LAYOUT.readerHeaderOffset(false, 0));
    private final RingBuffer readerRing = new RingBuffer(slice(region.duplicate()), 64);
    private final SharedRing readerSide = new SharedRing(region.duplicate(), LAYOUT.ringHeaderOffset(true, 0),
        LAYOUT.readerHeaderOffset(false, 0));

    private static ByteBuffer slice(ByteBuffer b) {
        int at = LAYOUT.offset(true, 0);
        return b.position(at).limit(at + CAPACITY);
    }

    /** Writer: claim, payload, commit, publish the head. */
    @Actor
    public void writer() {
        int at = writerRing.tryClaim(7, 12);
        writerRing.buffer().putInt(at, 42);
        writerRing.buffer().putLong(at + 4, 4242424242L);
        writerRing.commit();
        writerSide.publishHeadRelease(writerRing.headAcquire());
    }

    /**
     * Reader: takes the published head and reads.
     *
     * @param r the payload seen
     */
    @Actor
    public void reader(JJ_Result r) {
        r.r1 = -1;
        r.r2 = -1;
        long h = readerSide.headAcquire();
        if (h > 0) {
            readerRing.headRelease(h);
            readerRing.read((s, b, o, l) -> {
                r.r1 = b.getInt(o);
                r.r2 = b.getLong(o + 4);
            }, 1);
        }
    }
}
