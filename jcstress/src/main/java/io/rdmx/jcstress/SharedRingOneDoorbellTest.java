package io.rdmx.jcstress;

import io.rdmx.channel.PairLayout;
import io.rdmx.channel.SharedRing;
import java.nio.ByteBuffer;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * One doorbell per sleep: two writers of the same peer (two rings to one parked reader share its parked word)
 * publish at once; exactly one of them takes the word and rings.
 */
@JCStressTest
@Description("SharedRing: a parked reader gets exactly one doorbell from racing writers")
@Outcome(id = "1, 0", expect = Expect.ACCEPTABLE, desc = "first writer rang")
@Outcome(id = "0, 1", expect = Expect.ACCEPTABLE, desc = "second writer rang")
@Outcome(expect = Expect.FORBIDDEN, desc = "no doorbell, or two")
@State
public class SharedRingOneDoorbellTest {
    private static final PairLayout LAYOUT = new PairLayout(1, 2, 1024, true);
    private final ByteBuffer region = ByteBuffer.allocateDirect(LAYOUT.regionLength());
    // rings 0 -> 0 and 1 -> 0 from the high node's workers to the low node's worker 0
    private final SharedRing first = new SharedRing(region.duplicate(), LAYOUT.ringHeaderOffset(false,
        LAYOUT.ringIndex(false, 0, 0)), LAYOUT.readerHeaderOffset(true, 0));
    private final SharedRing second = new SharedRing(region.duplicate(), LAYOUT.ringHeaderOffset(false,
        LAYOUT.ringIndex(false, 1, 0)), LAYOUT.readerHeaderOffset(true, 0));

    /** The reader parked before either writer published. */
    public SharedRingOneDoorbellTest() {
        first.readerParkedVolatile(SharedRing.PARKED_DOORBELL);
    }

    /**
     * First writer.
     *
     * @param r r1 = 1 if it rang
     */
    @Actor
    public void writer1(II_Result r) {
        r.r1 = first.publishHeadRelease(64) != SharedRing.AWAKE ? 1 : 0;
    }

    /**
     * Second writer.
     *
     * @param r r2 = 1 if it rang
     */
    @Actor
    public void writer2(II_Result r) {
        r.r2 = second.publishHeadRelease(64) != SharedRing.AWAKE ? 1 : 0;
    }
}
