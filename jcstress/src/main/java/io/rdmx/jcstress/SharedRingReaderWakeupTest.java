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
 * No lost wake-up for a reader: a reader about to park stores its parked word and checks the head again; a
 * writer publishes its head and takes the parked word. Either the reader sees the data (it does not park) or the
 * writer rings its doorbell, or both: never a parked reader with data and no doorbell.
 */
@JCStressTest
@Description("SharedRing: reader-parked flag against head publication (Dekker)")
@Outcome(id = "1, 0", expect = Expect.ACCEPTABLE, desc = "reader saw the data: no doorbell needed")
@Outcome(id = "0, 1", expect = Expect.ACCEPTABLE, desc = "reader parks; the writer rings")
@Outcome(id = "1, 1", expect = Expect.ACCEPTABLE, desc = "both: a spare doorbell, harmless")
@Outcome(id = "0, 0", expect = Expect.FORBIDDEN, desc = "lost wake-up: reader parks, no doorbell")
@State
public class SharedRingReaderWakeupTest {
    private static final PairLayout LAYOUT = new PairLayout(1, 1, 1024, true);
    private final ByteBuffer region = ByteBuffer.allocateDirect(LAYOUT.regionLength());
    private final SharedRing writerSide = new SharedRing(region.duplicate(), LAYOUT.ringHeaderOffset(true, 0),
        LAYOUT.readerHeaderOffset(false, 0));
    private final SharedRing readerSide = new SharedRing(region.duplicate(), LAYOUT.ringHeaderOffset(true, 0),
        LAYOUT.readerHeaderOffset(false, 0));

    /**
     * Reader: says it parks, then checks the head once more.
     *
     * @param r r1 = 1 if it saw the data
     */
    @Actor
    public void reader(II_Result r) {
        readerSide.readerParkedVolatile(SharedRing.PARKED_DOORBELL);
        r.r1 = readerSide.headAcquire() > 0 ? 1 : 0;
    }

    /**
     * Writer: publishes, and rings if the reader is parked.
     *
     * @param r r2 = 1 if it rang the doorbell
     */
    @Actor
    public void writer(II_Result r) {
        r.r2 = writerSide.publishHeadRelease(64) != SharedRing.AWAKE ? 1 : 0;
    }
}
