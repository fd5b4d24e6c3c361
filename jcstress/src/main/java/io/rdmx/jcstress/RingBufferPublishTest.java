package io.rdmx.jcstress;

import io.rdmx.channel.RingBuffer;
import java.nio.ByteBuffer;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.JJ_Result;

/**
 * Claim, then publish: a reader racing the writer sees either no record or the whole record, never a header
 * without its payload.
 */
@JCStressTest
@Description("RingBuffer: a record is visible only complete")
@Outcome(id = "-1, -1", expect = Expect.ACCEPTABLE, desc = "reader ran first: nothing")
@Outcome(id = "42, 4242424242", expect = Expect.ACCEPTABLE, desc = "whole record")
@Outcome(expect = Expect.FORBIDDEN, desc = "torn record")
@State
public class RingBufferPublishTest {
    private final RingBuffer ring = new RingBuffer(ByteBuffer.allocateDirect(256), 64);

    /** Writer: claim, write the payload, commit. */
    @Actor
    public void writer() {
        int at = ring.tryClaim(7, 12);
        ring.buffer().putInt(at, 42);
        ring.buffer().putLong(at + 4, 4242424242L);
        ring.commit();
    }

    /**
     * Reader: one read.
     *
     * @param r the payload seen
     */
    @Actor
    public void reader(JJ_Result r) {
        r.r1 = -1;
        r.r2 = -1;
        ring.read((s, b, o, l) -> {
            r.r1 = b.getInt(o);
            r.r2 = b.getLong(o + 4);
        }, 1);
    }
}
