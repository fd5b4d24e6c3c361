package io.rdmx.bench.transport;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/** The baselines of the transport benchmark, measured in the same run. */
public class Baselines {
    private Baselines() {
    }

    /** A single-thread off-heap memory copy: the physical limit of a WRITE. */
    @State(Scope.Benchmark)
    public static class Memcpy {
        /** Bytes per copy. */
        @Param({"65536"})
        public int size;
        private ByteBuffer src;
        private ByteBuffer dst;
        private int slot;

        /** Allocates 16 slots so the copy is not all in L1. */
        @Setup
        public void setUp() {
            src = ByteBuffer.allocateDirect(size * 16);
            dst = ByteBuffer.allocateDirect(size * 16);
        }

        /**
         * One copy.
         *
         * @return the destination (consumed by JMH)
         */
        @Benchmark
        public ByteBuffer copy() {
            int off = (slot++ & 15) * size;
            return dst.put(off, src, off, size);
        }
    }

    /** A blocking NIO socket ping-pong over TCP loopback: the sockets baseline of a SEND round trip. */
    @State(Scope.Benchmark)
    public static class NioRoundTrip {
        /** Message size. */
        @Param({"64"})
        public int size;
        private ServerSocketChannel server;
        private SocketChannel client;
        private Thread echo;
        private ByteBuffer buf;

        /**
         * Starts the echo server.
         *
         * @throws IOException on failure
         */
        @Setup(Level.Trial)
        public void setUp() throws IOException {
            server = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
            client = SocketChannel.open(server.getLocalAddress());
            client.setOption(StandardSocketOptions.TCP_NODELAY, true);
            SocketChannel peer = server.accept();
            peer.setOption(StandardSocketOptions.TCP_NODELAY, true);
            echo = new Thread(() -> {
                ByteBuffer b = ByteBuffer.allocateDirect(size);
                try {
                    while (true) {
                        b.clear();
                        while (b.hasRemaining()) {
                            if (peer.read(b) < 0) {
                                return;
                            }
                        }
                        b.flip();
                        while (b.hasRemaining()) {
                            peer.write(b);
                        }
                    }
                } catch (IOException e) {
                    // the client closed: the benchmark is over
                }
            }, "nio-echo");
            echo.setDaemon(true);
            echo.start();
            buf = ByteBuffer.allocateDirect(size);
        }

        /**
         * Stops the echo server.
         *
         * @throws IOException on failure
         */
        @TearDown(Level.Trial)
        public void tearDown() throws IOException {
            client.close();
            server.close();
        }

        /**
         * One round trip.
         *
         * @param switches the process's context switches and CPU time, and the round trips counted here
         * @return bytes read back
         * @throws IOException on failure
         */
        @Benchmark
        public int roundTrip(Switches switches) throws IOException {
            switches.roundTrips++;
            buf.clear();
            while (buf.hasRemaining()) {
                client.write(buf);
            }
            buf.clear();
            int n = 0;
            while (buf.hasRemaining()) {
                n += client.read(buf);
            }
            return n;
        }
    }
}
