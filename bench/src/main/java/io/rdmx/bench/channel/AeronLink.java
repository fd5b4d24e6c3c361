package io.rdmx.bench.channel;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.FragmentAssembler;
import io.aeron.Subscription;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Aeron IPC to an {@link AeronPeer}: an Aeron client on the peer's embedded driver directory, an exclusive
 * publication on {@link AeronPeer#DATA_STREAM} and a subscription on {@link AeronPeer#ECHO_STREAM}; loops idle with
 * the variant's strategy ({@link AeronPeer#idle(String)}).
 */
final class AeronLink implements Link {
    private final Aeron aeron;
    private final ExclusivePublication pub;
    private final Subscription echo;
    private final IdleStrategy idle;
    private final UnsafeBuffer buf = new UnsafeBuffer(ByteBuffer.allocateDirect(64 << 10));
    private final FragmentAssembler handler;
    private long answer;
    private boolean got;

    /**
     * @param dir the peer's Aeron directory
     * @param variant the variant (idle strategy)
     * @throws InterruptedException if interrupted while waiting for the streams to connect
     */
    AeronLink(String dir, String variant) throws InterruptedException {
        idle = AeronPeer.idle(AeronPeer.variant(variant));
        aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(dir));
        echo = aeron.addSubscription(AeronPeer.CHANNEL, AeronPeer.ECHO_STREAM);
        pub = aeron.addExclusivePublication(AeronPeer.CHANNEL, AeronPeer.DATA_STREAM);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!pub.isConnected() || !echo.isConnected()) {
            if (System.nanoTime() > deadline) {
                aeron.close();
                throw new IllegalStateException("aeron streams not connected within 30 s: dir=" + dir);
            }
            Thread.sleep(1);
        }
        handler = new FragmentAssembler((b, off, len, header) -> {
            if (b.getInt(off) == MARK) {
                answer = b.getLong(off + 8);
            }
            got = true;
        });
    }

    private void send(int kind, int size) {
        buf.putInt(0, kind);
        AeronPeer.offer(pub, buf, 0, size, idle, null);
    }

    private void await(String what) {
        got = false;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!got) {
            int n = echo.poll(handler, 1);
            if (n == 0 && System.nanoTime() > deadline) {
                throw new IllegalStateException("no " + what + " from the aeron peer within 30 s");
            }
            idle.idle(n);
        }
        idle.reset();
    }

    @Override
    public void data(int size) {
        send(DATA, size);
    }

    @Override
    public long mark() {
        send(MARK, 16);
        await("MARK answer");
        return answer;
    }

    @Override
    public void ping(int size) {
        send(PING, size);
        await("echo");
    }

    @Override
    public void bye() {
        send(BYE, 8);
    }

    @Override
    public void close() {
        aeron.close();
    }
}
