package io.rdmx.bench.channel;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * The receiving process of the sockets baseline: a plain NIO socket stream of length-prefixed records
 * ({@code int length, int kind, payload}), read through a 1 MiB buffer; same commands as {@link ChannelPeer}.
 * Blocking, or busy-polling (a non-blocking channel whose reads and writes are retried in a loop).
 */
public final class NioPeer {
    private NioPeer() {
    }

    /**
     * @param args {@code blocking} (default) or {@code busy-poll}
     * @throws IOException on failure
     */
    public static void main(String[] args) throws IOException {
        boolean busyPoll = args.length > 0 && args[0].equals("busy-poll");
        String host = io.rdmx.bench.report.Hosts.ownAddress();   // 127.0.0.1 unless in a host of --hosts
        try (ServerSocketChannel server = ServerSocketChannel.open().bind(new InetSocketAddress(host, 0))) {
            System.out.println("ADDRESS " + host + ":" + ((InetSocketAddress) server.getLocalAddress()).getPort());
            System.out.flush();
            try (SocketChannel ch = server.accept()) {
                ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                ch.configureBlocking(!busyPoll);
                serve(ch);
            }
        }
    }

    private static void serve(SocketChannel ch) throws IOException {
        ByteBuffer in = ByteBuffer.allocateDirect(1 << 20).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer out = ByteBuffer.allocateDirect(1 << 20).order(ByteOrder.LITTLE_ENDIAN);
        in.limit(0);
        long count = 0;
        while (true) {
            if (!fill(ch, in, 8)) {
                return;
            }
            int len = in.getInt(in.position());
            int kind = in.getInt(in.position() + 4);
            if (!fill(ch, in, 8 + len)) {
                return;
            }
            in.position(in.position() + 8);
            switch (kind) {
                case Link.DATA:
                    count++;
                    in.position(in.position() + len);
                    break;
                case Link.PING:
                    out.clear();
                    out.putInt(len).putInt(Link.PING);
                    out.put(in.slice(in.position(), len));
                    in.position(in.position() + len);
                    write(ch, out);
                    break;
                case Link.MARK:
                    in.position(in.position() + len);
                    out.clear();
                    out.putInt(8).putInt(Link.MARK).putLong(count);
                    count = 0;
                    write(ch, out);
                    break;
                default:
                    return;
            }
        }
    }

    private static void write(SocketChannel ch, ByteBuffer out) throws IOException {
        out.flip();
        while (out.hasRemaining()) {
            ch.write(out);
        }
    }

    /**
     * Makes at least {@code need} bytes readable at the buffer's position; on a non-blocking channel this is the
     * busy-poll loop (a read that returns 0 is retried at once).
     *
     * @return false at end of stream
     */
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
