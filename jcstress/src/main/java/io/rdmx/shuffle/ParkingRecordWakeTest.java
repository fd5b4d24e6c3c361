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
 * A shuffle worker's wait for records ({@link Parking}): the worker announces that it waits ({@link Parking#arm}
 * with no full buffer: a volatile store and a full fence) and then reads its in-process ring, while another worker
 * of the process commits a record to that ring and then wakes it if it waits ({@link Parking#wakeIfWaiting}: a
 * full fence, then the load of the flag). Either the writer sees the flag (and wakes the worker through the
 * transport) or the worker's read sees the record: never neither, which would leave the record unread until the
 * wait's bound. (In this package of the jcstress module to reach the package-private class.)
 */
@JCStressTest
@Outcome(id = {"true, true", "true, false", "false, true"}, expect = Expect.ACCEPTABLE,
    desc = "the writer wakes the worker, or the worker sees the record")
@Outcome(id = "false, false", expect = Expect.FORBIDDEN, desc = "the worker sleeps with a record it did not see")
@State
public class ParkingRecordWakeTest {
    private final RingBuffer ring = new RingBuffer(ByteBuffer.allocateDirect(64), 24);
    private final ByteBuffer record = ByteBuffer.allocate(8);
    /** Set by the transport's wake-up of the worker. */
    private boolean woken;
    private final Parking parking = new Parking(wakeups(), 0, null, null, null, null, null, null);

    /**
     * Another worker of the process: commits a record to the ring it writes this worker, then wakes it if it waits.
     *
     * @param r r1: whether it woke the worker
     */
    @Actor
    public void writer(ZZ_Result r) {
        ring.write(1, record);
        parking.wakeIfWaiting();
        r.r1 = woken;
    }

    /**
     * The worker: announces its wait, then looks at the ring (as its read of the local rings does).
     *
     * @param r r2: whether it saw the record
     */
    @Actor
    public void worker(ZZ_Result r) {
        parking.arm(-1);
        r.r2 = ring.headAcquire() != ring.tailAcquire();
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
