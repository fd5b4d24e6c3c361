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
 * No lost wake-up for a writer waiting for space: it stores its parked word and checks the credit again; the
 * reader publishes its credit and takes the parked word. Either the writer sees the space or the reader rings.
 */
@JCStressTest
@Description("SharedRing: writer-parked flag against credit publication (Dekker)")
@Outcome(id = "1, 0", expect = Expect.ACCEPTABLE, desc = "writer saw the credit: no doorbell needed")
@Outcome(id = "0, 1", expect = Expect.ACCEPTABLE, desc = "writer parks; the reader rings")
@Outcome(id = "1, 1", expect = Expect.ACCEPTABLE, desc = "both: a spare doorbell, harmless")
@Outcome(id = "0, 0", expect = Expect.FORBIDDEN, desc = "lost wake-up: writer parks, no doorbell")
@State
public class SharedRingWriterWakeupTest {
    private static final PairLayout LAYOUT = new PairLayout(1, 1, 1024, true);
    private final ByteBuffer region = ByteBuffer.allocateDirect(LAYOUT.regionLength());
    private final SharedRing writerSide = new SharedRing(region.duplicate(), LAYOUT.ringHeaderOffset(true, 0),
        LAYOUT.readerHeaderOffset(false, 0));
    private final SharedRing readerSide = new SharedRing(region.duplicate(), LAYOUT.ringHeaderOffset(true, 0),
        LAYOUT.readerHeaderOffset(false, 0));

    /**
     * Writer: says it parks for space, then checks the credit once more.
     *
     * @param r r1 = 1 if it saw the credit
     */
    @Actor
    public void writer(II_Result r) {
        writerSide.writerParkedVolatile(SharedRing.PARKED_DOORBELL);
        r.r1 = writerSide.creditAcquire() > 0 ? 1 : 0;
    }

    /**
     * Reader: publishes a credit, and rings if the writer is parked.
     *
     * @param r r2 = 1 if it rang the doorbell
     */
    @Actor
    public void reader(II_Result r) {
        r.r2 = readerSide.publishCreditRelease(256) != SharedRing.AWAKE ? 1 : 0;
    }
}
