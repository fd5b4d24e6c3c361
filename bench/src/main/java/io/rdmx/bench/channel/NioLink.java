package io.rdmx.bench.channel;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;

/**
 * The sockets baseline: one TCP loopback connection to a {@link NioPeer}, records framed as
 * {@code int length, int kind, payload} and batched in a 64 KiB buffer (written when full or on MARK/PING).
 * Blocking, or busy-polling: a non-blocking channel whose reads and writes are retried in a loop (the loops in
 * {@link #send} and {@link NioPeer#fill} serve both).
 */
final class NioLink implements Link {
    private final SocketChannel ch;
    private final ByteBuffer out = ByteBuffer.allocateDirect(64 << 10).order(ByteOrder.LITTLE_ENDIAN);
    private final ByteBuffer in = ByteBuffer.allocateDirect(1 << 20).order(ByteOrder.LITTLE_ENDIAN);
    private final ByteBuffer payload = ByteBuffer.allocateDirect(64 << 10);
    private final ByteBuffer big = ByteBuffer.allocateDirect(8 + (64 << 10)).order(ByteOrder.LITTLE_ENDIAN);

    /**
     * @param address host:port of the peer
     * @param busyPoll a non-blocking channel polled in a loop instead of blocking calls
     * @throws IOException when the peer cannot be reached
     */
    NioLink(String address, boolean busyPoll) throws IOException {
        String[] hp = address.split(":");
        ch = SocketChannel.open(new InetSocketAddress(hp[0], Integer.parseInt(hp[1])));
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        ch.configureBlocking(!busyPoll);
        in.limit(0);
    }

    private void send() throws IOException {
        out.flip();
        while (out.hasRemaining()) {
            ch.write(out);
        }
        out.clear();
    }

    private void record(int kind, int size) throws IOException {
        if (out.remaining() < 8 + size) {
            send();
        }
        if (out.remaining() < 8 + size) { // larger than the batch buffer: one write of its own
            big.clear();
            big.putInt(size).putInt(kind).put(payload.slice(0, size)).flip();
            while (big.hasRemaining()) {
                ch.write(big);
            }
            return;
        }
        out.putInt(size).putInt(kind).put(payload.slice(0, size));
    }

    @Override
    public void data(int size) throws IOException {
        record(DATA, size);
    }

    @Override
    public long mark() throws IOException {
        record(MARK, 0);
        send();
        if (!NioPeer.fill(ch, in, 16)) {
            throw new IOException("the NIO peer closed the connection");
        }
        long n = in.getLong(in.position() + 8);
        in.position(in.position() + 16);
        return n;
    }

    @Override
    public void ping(int size) throws IOException {
        record(PING, size);
        send();
        if (!NioPeer.fill(ch, in, 8 + size)) {
            throw new IOException("the NIO peer closed the connection");
        }
        in.position(in.position() + 8 + size);
    }

    @Override
    public void bye() throws IOException {
        record(BYE, 0);
        send();
    }

    @Override
    public void close() throws IOException {
        ch.close();
    }
}
