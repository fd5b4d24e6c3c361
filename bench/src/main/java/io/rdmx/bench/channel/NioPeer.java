package io.rdmx.bench.channel;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * The receiving process of the sockets baseline: a plain blocking NIO socket stream of length-prefixed records
 * ({@code int length, int stream, payload}), read through a 64 KiB buffer; same commands as {@link ChannelPeer}.
 */
public final class NioPeer {
    private NioPeer() {
    }

    /**
     * @param args unused
     * @throws IOException on failure
     */
    public static void main(String[] args) throws IOException {
        try (ServerSocketChannel server = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            System.out.println("ADDRESS 127.0.0.1:" + ((InetSocketAddress) server.getLocalAddress()).getPort());
            System.out.flush();
            try (SocketChannel ch = server.accept()) {
                ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                ByteBuffer in = ByteBuffer.allocateDirect(1 << 20).order(ByteOrder.LITTLE_ENDIAN);
                ByteBuffer out = ByteBuffer.allocateDirect(1 << 20).order(ByteOrder.LITTLE_ENDIAN);
                in.limit(0);
                long count = 0;
                while (true) {
                    if (!fill(ch, in, 8)) {
                        return;
                    }
                    int len = in.getInt(in.position());
                    int stream = in.getInt(in.position() + 4);
                    if (!fill(ch, in, 8 + len)) {
                        return;
                    }
                    in.position(in.position() + 8);
                    switch (stream) {
                        case ChannelPeer.DATA:
                            count++;
                            in.position(in.position() + len);
                            break;
                        case ChannelPeer.PING:
                            out.clear();
                            out.putInt(len).putInt(ChannelPeer.PING);
                            out.put(in.slice(in.position(), len));
                            in.position(in.position() + len);
                            out.flip();
                            while (out.hasRemaining()) {
                                ch.write(out);
                            }
                            break;
                        case ChannelPeer.MARK:
                            in.position(in.position() + len);
                            out.clear();
                            out.putInt(8).putInt(ChannelPeer.MARK).putLong(count);
                            count = 0;
                            out.flip();
                            while (out.hasRemaining()) {
                                ch.write(out);
                            }
                            break;
                        default:
                            return;
                    }
                }
            }
        }
    }

    /** Makes at least {@code need} bytes readable at the buffer's position. */
    static boolean fill(SocketChannel ch, ByteBuffer in, int need) throws IOException {
        while (in.remaining() < need) {
            in.compact();
            int n = ch.read(in);
            in.flip();
            if (n < 0) {
                return false;
            }
        }
        return true;
    }
}
