package io.rdmx.shuffle;

import io.rdmx.channel.RingBuffer;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.ZZ_Result;

/**
 * A shuffle worker's wait for space in the in-process ring its last offer found full ({@link Parking}): the worker
 * says which ring it waits on and that it waits (volatile stores, a full fence) and then looks whether that ring's
 * reader moved the tail since the offer ({@link Parking#armSpace}), while the reader (another worker of the
 * process) reads a record, releasing its space, and then wakes the writer if it waits for space in that very ring
 * ({@link Parking#wakeIfWaitingForSpace}: a full fence, then the loads of the flags). Either the reader sees the
 * waiting writer (and wakes it through the transport) or the writer sees the space: never neither, which would
 * leave it asleep beside free space until the wait's bound. (In this package of the jcstress module to reach the
 * package-private class.)
 */
@JCStressTest
@Outcome(id = {"true, true", "true, false", "false, true"}, expect = Expect.ACCEPTABLE,
    desc = "the reader wakes the writer, or the writer sees the space")
@Outcome(id = "false, false", expect = Expect.FORBIDDEN, desc = "the writer sleeps beside space it did not see")
@State
public class ParkingSpaceWakeTest {
    /** The reader's local index, and the ring's index among the writer's local rings. */
    private static final int READER = 0;
    private final RingBuffer ring = new RingBuffer(ByteBuffer.allocateDirect(64), 24);
    /** The ring's tail when the writer's offer found it full. */
    private final long fullTail;
    /** Set by the transport's wake-up of the writer. */
    private boolean woken;
    private final Parking parking = new Parking(wakeups(), 1, null, new RingBuffer[] {ring}, null, null, null, null);

    /** Fills the 64 bytes with two 32-byte records: the writer's next offer found no space. */
    public ParkingSpaceWakeTest() {
        for (int i = 0; i < 2; i++) {
            ring.write(1, ByteBuffer.allocate(24));
        }
        fullTail = ring.tailAcquire();
    }

    /**
     * The ring's reader: reads a record (its space released), then wakes the writer if it waits for that space.
     *
     * @param r r1: whether it woke the writer
     */
    @Actor
    public void reader(ZZ_Result r) {
        ring.read((s, b, o, l) -> { }, 1);
        parking.wakeIfWaitingForSpace(READER);
        r.r1 = woken;
    }

    /**
     * The writer: announces its wait for space in that ring, then looks whether the tail moved.
     *
     * @param r r2: whether it saw the space
     */
    @Actor
    public void writer(ZZ_Result r) {
        r.r2 = parking.armSpace(READER, fullTail);
    }

    /** @return a transport whose only used method, {@code wakeup}, records the wake-up */
    private ShuffleTransport wakeups() {
        return (ShuffleTransport) Proxy.newProxyInstance(ShuffleTransport.class.getClassLoader(),
            new Class<?>[] {ShuffleTransport.class}, (proxy, m, args) -> {
                if (!m.getName().equals("wakeup")) {
                    throw new UnsupportedOperationException(m.getName());
                }
                woken = true;
                return null;
            });
    }
}
