package io.rdmx.jcstress;

import io.rdmx.channel.RingBuffer;
import java.nio.ByteBuffer;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * Space is reused only after the reader released it: the buffer is full, the reader consumes the first
 * record while the writer tries to claim its space; the reader must see the old payload, never the new one.
 */
@JCStressTest
@Description("RingBuffer: the writer never overwrites a record the reader is still reading")
@Outcome(id = "1, -1", expect = Expect.ACCEPTABLE, desc = "writer found no space yet")
@Outcome(id = "1, 0", expect = Expect.ACCEPTABLE, desc = "writer reused the space after the reader")
@Outcome(expect = Expect.FORBIDDEN, desc = "reader saw the overwrite")
@State
public class RingBufferReuseTest {
    private final RingBuffer ring = new RingBuffer(ByteBuffer.allocateDirect(64), 24);

    /** Fills the 64 bytes with two 32-byte records, payloads 1 and 2. */
    public RingBufferReuseTest() {
        for (int v = 1; v <= 2; v++) {
            int at = ring.tryClaim(1, 24);
            ring.buffer().putInt(at, v);
            ring.commit();
        }
    }

    /**
     * Reader: reads the first record, slowly.
     *
     * @param r r1: the payload seen
     */
    @Actor
    public void reader(II_Result r) {
        ring.read((s, b, o, l) -> {
            int first = b.getInt(o);
            for (int i = 0; i < 20; i++) {
                Thread.onSpinWait();
            }
            int again = b.getInt(o);
            r.r1 = first == again ? first : 100 + again;
        }, 1);
    }

    /**
     * Writer: claims the first record's space if released and writes 3 there.
     *
     * @param r r2: the claim's index, or -1
     */
    @Actor
    public void writer(II_Result r) {
        int at = ring.tryClaim(1, 24);
        if (at >= 0) {
            ring.buffer().putInt(at, 3);
            ring.commit();
            r.r2 = at - 8;
        } else {
            r.r2 = -1;
        }
    }
}
