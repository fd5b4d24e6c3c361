package io.rdmx.bench.channel;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.FragmentAssembler;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import java.util.function.IntSupplier;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The receiving process of the Aeron IPC baseline. It launches the embedded media driver (in a directory the
 * benchmark names, under {@code /dev/shm}); the driving process connects its Aeron client to the same directory, so
 * both publish and subscribe on {@code aeron:ipc} through log buffers mapped from that directory: shared memory
 * between two processes, as Aeron IPC users run it. DATA records are counted, PING echoed and MARK answered
 * on the echo stream, BYE ends it (the kinds of {@link Link}, in the first word of each message).
 *
 * <p>Variants ({@link #variant(String)}): {@code spin-shared} - Aeron's low-latency set-up on a 2-core budget: the
 * driver's agents on one thread ({@link ThreadingMode#SHARED}) and every loop (driver, publishers, subscribers)
 * on a {@link BusySpinIdleStrategy}; {@code spin-invoker} - clients busy-spin, the driver has no thread of its own
 * ({@link ThreadingMode#INVOKER}): this process's subscriber loop invokes its duty cycle, so only two threads spin;
 * {@code backoff} - driver ({@code SHARED}) and clients on Aeron's default {@link BackoffIdleStrategy} (spin, yield,
 * then park from 1 us up to 1 ms).
 */
public final class AeronPeer {
    /** The channel of both streams. */
    static final String CHANNEL = "aeron:ipc";
    /** Stream id: driver to peer (DATA, PING, MARK, BYE). */
    static final int DATA_STREAM = 1001;
    /** Stream id: peer to driver (echoes and MARK answers). */
    static final int ECHO_STREAM = 1002;

    private static long count;
    private static boolean done;

    private AeronPeer() {
    }

    /**
     * @param name a variant name
     * @return the name, validated
     * @throws IllegalArgumentException if unknown
     */
    static String variant(String name) {
        if (!name.equals("spin-shared") && !name.equals("spin-invoker") && !name.equals("backoff")) {
            throw new IllegalArgumentException("aeron variant=" + name + " is not spin-shared, spin-invoker or "
                + "backoff");
        }
        return name;
    }

    /**
     * @param variant a variant name
     * @return a new idle strategy for one loop of that variant
     */
    static IdleStrategy idle(String variant) {
        return variant.startsWith("spin") ? new BusySpinIdleStrategy() : new BackoffIdleStrategy();
    }

    /**
     * Offers a message, idling while back-pressured.
     *
     * @param invoker duty cycles to run while waiting (the driver's, in INVOKER mode), or null
     * @throws IllegalStateException when the publication is closed or not connected
     */
    static void offer(ExclusivePublication pub, DirectBuffer buf, int offset, int length, IdleStrategy idle,
        IntSupplier invoker) {
        long r;
        while ((r = pub.offer(buf, offset, length)) < 0) {
            if (r == Publication.CLOSED || r == Publication.NOT_CONNECTED || r == Publication.MAX_POSITION_EXCEEDED) {
                throw new IllegalStateException("aeron offer failed: result=" + r + " stream=" + pub.streamId());
            }
            idle.idle(invoker == null ? 0 : invoker.getAsInt());
        }
        idle.reset();
    }

    /**
     * @param args variant, Aeron directory
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        String variant = variant(args[0]);
        String dir = args[1];
        MediaDriver.Context dctx = new MediaDriver.Context().aeronDirectoryName(dir).dirDeleteOnStart(true)
            .dirDeleteOnShutdown(true)
            .threadingMode(variant.equals("spin-invoker") ? ThreadingMode.INVOKER : ThreadingMode.SHARED)
            .sharedIdleStrategy(idle(variant));
        try (MediaDriver driver = MediaDriver.launch(dctx);
             Aeron aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(dir)
                 .useConductorAgentInvoker(driver.sharedAgentInvoker() != null)
                 .driverAgentInvoker(driver.sharedAgentInvoker()))) {
            // INVOKER: this thread runs the driver's duty cycle and then this client's conductor
            AgentInvoker driverDuty = driver.sharedAgentInvoker();
            IntSupplier invoker = driverDuty == null ? null
                : () -> driverDuty.invoke() + aeron.conductorAgentInvoker().invoke();
            Subscription in = aeron.addSubscription(CHANNEL, DATA_STREAM);
            ExclusivePublication back = aeron.addExclusivePublication(CHANNEL, ECHO_STREAM);
            IdleStrategy idle = idle(variant);
            IdleStrategy backIdle = idle(variant);
            UnsafeBuffer reply = new UnsafeBuffer(new byte[16]);
            FragmentAssembler handler = new FragmentAssembler((buf, off, len, header) -> {
                switch (buf.getInt(off)) {
                    case Link.DATA:
                        count++;
                        break;
                    case Link.PING:
                        offer(back, buf, off, len, backIdle, invoker);
                        break;
                    case Link.MARK:
                        reply.putInt(0, Link.MARK);
                        reply.putLong(8, count);
                        count = 0;
                        offer(back, reply, 0, 16, backIdle, invoker);
                        break;
                    default:
                        done = true;
                }
            });
            System.out.println("ADDRESS " + dir);
            System.out.flush();
            while (!done) {
                int work = invoker == null ? 0 : invoker.getAsInt();
                work += in.poll(handler, 256);
                idle.idle(work);
            }
        }
    }
}
