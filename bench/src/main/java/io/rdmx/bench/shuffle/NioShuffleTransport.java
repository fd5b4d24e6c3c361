package io.rdmx.bench.shuffle;

import io.rdmx.channel.RingBuffer;
import io.rdmx.shuffle.RingOutbox;
import io.rdmx.shuffle.ShuffleConfig;
import io.rdmx.shuffle.ShuffleTransport;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RdmxTimeoutException;
import io.rdmx.transport.internal.Sleeper;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sockets baseline (the DAIS paper's original middleware): one TCP connection per pair of processes, an
 * I/O thread per process on a java.nio selector; workers write records into per-destination outgoing buffers,
 * the I/O thread copies them into the socket, and on the other side copies received records into per-source
 * incoming buffers that the workers read. A full incoming buffer stops reading from that socket (back pressure).
 *
 * <p>Wire record: {@code src worker (16) | dst worker (16) | stream (16) | reserved (16) | length (32) | payload}.
 */
public final class NioShuffleTransport implements ShuffleTransport {
    private static final Logger LOG = LoggerFactory.getLogger(NioShuffleTransport.class);
    private static final int HEADER = 12;
    private static final int IO_BUFFER = 1 << 20;

    private final ShuffleConfig cfg;
    private final Selector selector;
    private final ServerSocketChannel server;
    private final Conn[] conns;
    private final Waiter[] waiters;
    private final Thread io;
    private volatile boolean running = true;
    private volatile ConnectionClosedException failure;
    private final java.util.concurrent.atomic.LongAdder sentRecords = new java.util.concurrent.atomic.LongAdder();

    /** A worker's wait: the same sleeper rdmx's channel readers use (futexes where there are), for a fair baseline. */
    private static final class Waiter {
        final Sleeper sleeper = new Sleeper(this);
        volatile boolean waiting;
        volatile boolean wake;
        /** The poll's receiver and the worker whose ring it reads now: one adapter, no allocation per read. */
        Receiver target;
        int source;
        final RingBuffer.Handler adapter = (stream, buf, off, len) -> target.onRecord(source, stream, buf, off, len);
    }

    private final class Conn {
        final int rank;
        final SocketChannel ch;
        final ByteBuffer rbuf = ByteBuffer.allocateDirect(IO_BUFFER).order(ByteOrder.LITTLE_ENDIAN);
        final ByteBuffer wbuf = ByteBuffer.allocateDirect(IO_BUFFER).order(ByteOrder.LITTLE_ENDIAN);
        final RingBuffer[][] out;
        final RingBuffer[][] in;
        volatile boolean readPaused;
        SelectionKey key;

        Conn(int rank, SocketChannel ch) {
            this.rank = rank;
            this.ch = ch;
            int w = cfg.workers();
            int max = cfg.bufferSize() / 4 - 8;
            out = new RingBuffer[w][w];
            in = new RingBuffer[w][w];
            for (int a = 0; a < w; a++) {
                for (int b = 0; b < w; b++) {
                    out[a][b] = new RingBuffer(ByteBuffer.allocateDirect(cfg.bufferSize()), max);
                    in[a][b] = new RingBuffer(ByteBuffer.allocateDirect(cfg.bufferSize()), max);
                }
            }
            rbuf.flip();
        }
    }

    private NioShuffleTransport(ShuffleConfig cfg, Selector selector, ServerSocketChannel server) {
        this.cfg = cfg;
        this.selector = selector;
        this.server = server;
        this.conns = new Conn[cfg.processes()];
        this.waiters = new Waiter[cfg.workers()];
        for (int i = 0; i < waiters.length; i++) {
            waiters[i] = new Waiter();
        }
        this.io = new Thread(this::loop, "rdmx-nio-shuffle-r" + cfg.rank());
        this.io.setDaemon(true);
    }

    private static InetSocketAddress parse(String hostPort) {
        int i = hostPort.lastIndexOf(':');
        return new InetSocketAddress(hostPort.substring(0, i), Integer.parseInt(hostPort.substring(i + 1)));
    }

    /**
     * Joins: listens on this rank's member address, connects to every lower rank, accepts every higher one.
     *
     * @param cfg the configuration (its members are the sockets' addresses)
     * @return the transport
     * @throws RdmxException if it cannot join
     */
    public static NioShuffleTransport open(ShuffleConfig cfg) throws RdmxException {
        try {
            ServerSocketChannel server = ServerSocketChannel.open().bind(parse(cfg.address(cfg.rank())));
            NioShuffleTransport t = new NioShuffleTransport(cfg, Selector.open(), server);
            try {
                t.join();
            } catch (IOException | RuntimeException e) {
                t.close();
                throw e;
            }
            t.io.start();
            return t;
        } catch (IOException e) {
            throw new RdmxException("sockets shuffle rank " + cfg.rank() + " cannot join: " + e, e);
        }
    }

    private void join() throws IOException {
        long deadline = System.nanoTime() + cfg.connectTimeout().toNanos();
        for (int r = 0; r < cfg.rank(); r++) {
            while (true) {
                try {
                    SocketChannel ch = SocketChannel.open(parse(cfg.address(r)));
                    ByteBuffer hello = ByteBuffer.allocate(4).putInt(0, cfg.rank());
                    while (hello.hasRemaining()) {
                        ch.write(hello);
                    }
                    conns[r] = new Conn(r, ch);
                    break;
                } catch (IOException e) {
                    if (System.nanoTime() > deadline) {
                        throw new RdmxTimeoutException("rank " + cfg.rank() + " could not reach rank " + r + " at "
                            + cfg.members().get(r) + ": " + e.getMessage());
                    }
                    try {
                        Thread.sleep(50);
                    } catch (InterruptedException ie) {
                        Thread.currentThread().interrupt();
                        throw new IOException("interrupted while joining", ie);
                    }
                }
            }
        }
        for (int n = cfg.rank() + 1; n < cfg.processes(); n++) {
            SocketChannel ch = server.accept();
            ByteBuffer hello = ByteBuffer.allocate(4);
            while (hello.hasRemaining()) {
                if (ch.read(hello) < 0) {
                    throw new IOException("peer closed during the hello");
                }
            }
            int r = hello.getInt(0);
            if (r <= cfg.rank() || r >= cfg.processes() || conns[r] != null) {
                throw new IOException("unexpected hello from rank " + r);
            }
            conns[r] = new Conn(r, ch);
        }
        for (Conn c : conns) {
            if (c != null) {
                c.ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                c.ch.configureBlocking(false);
                c.key = c.ch.register(selector, SelectionKey.OP_READ, c);
            }
        }
    }

    private void loop() {
        try {
            while (running) {
                selector.select(1);
                selector.selectedKeys().clear();
                for (Conn c : conns) {
                    if (c != null && running) {
                        service(c);
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            if (running) {
                LOG.warn("sockets shuffle rank {}: {}", cfg.rank(), e.toString());
            }
        }
    }

    private void service(Conn c) throws IOException {
        try {
            fill(c);
            if (c.wbuf.position() > 0) {
                c.wbuf.flip();
                c.ch.write(c.wbuf);
                c.wbuf.compact();
            }
            c.key.interestOps(SelectionKey.OP_READ | (c.wbuf.position() > 0 ? SelectionKey.OP_WRITE : 0));
            if (!c.readPaused || parse(c)) {
                c.readPaused = false;
                c.rbuf.compact();
                int n = c.ch.read(c.rbuf);
                c.rbuf.flip();
                if (n < 0) {
                    throw new IOException("end of stream");
                }
                parse(c);
            }
        } catch (IOException e) {
            fail(c, e);
        }
    }

    /** Copies records from the outgoing buffers into the socket buffer. */
    private void fill(Conn c) {
        int w = cfg.workers();
        for (int a = 0; a < w; a++) {
            for (int b = 0; b < w; b++) {
                RingBuffer ring = c.out[a][b];
                int src = a;
                int dst = b;
                boolean drained = false;
                while (ring.size() > 0 && c.wbuf.remaining() >= HEADER + ring.maxPayload()) {
                    drained = true;
                    // as many records as surely fit (each is at most maxPayload): small records, many to a
                    // read, must not run past the socket buffer
                    int fit = Math.min(64, c.wbuf.remaining() / (HEADER + ring.maxPayload()));
                    ring.read((stream, buf, off, len) -> {
                        c.wbuf.putShort((short) src).putShort((short) dst).putShort((short) stream).putShort((short) 0)
                            .putInt(len);
                        c.wbuf.put(buf.slice(off, len));
                    }, fit);
                }
                if (drained && waiters[a].waiting) {
                    wakeup(a);
                }
            }
        }
    }

    /**
     * Checks the header of a frame a peer sent (source worker, destination worker, stream, reserved: u16 each;
     * payload length: i32; little endian); null when valid.
     *
     * @param src the sending worker
     * @param dst the receiving worker
     * @param len the payload length
     * @param workers workers per node
     * @param maxPayload the largest record payload of a ring
     * @return null, or what is wrong with {@code name=value}
     */
    static String checkFrame(int src, int dst, int len, int workers, int maxPayload) {
        if (src >= workers || dst >= workers) {
            return "frame for src=" + src + " dst=" + dst + " outside workers=" + workers;
        }
        if (len < 0 || len > maxPayload || len > IO_BUFFER - HEADER) {
            return "frame payload length=" + len + " outside [0, " + Math.min(maxPayload, IO_BUFFER - HEADER) + "]";
        }
        return null;
    }

    /** Copies received records into the incoming buffers; false (read paused) when one is full. */
    private boolean parse(Conn c) throws IOException {
        ByteBuffer r = c.rbuf;
        while (r.remaining() >= HEADER) {
            int p = r.position();
            int len = r.getInt(p + 8);
            int src = r.getShort(p) & 0xFFFF;
            int dst = r.getShort(p + 2) & 0xFFFF;
            String bad = checkFrame(src, dst, len, cfg.workers(), c.in[0][0].maxPayload());
            if (bad != null) {
                throw new IOException("bad frame from rank " + c.rank + ": " + bad);
            }
            if (r.remaining() < HEADER + len) {
                break;
            }
            int stream = r.getShort(p + 4) & 0xFFFF;
            RingBuffer ring = c.in[src][dst];
            int at = ring.tryClaim(stream, len);
            if (at < 0) {
                c.readPaused = true;
                wakeAll();
                return false;
            }
            ring.buffer().put(at, r, p + HEADER, len);
            ring.commit();
            r.position(p + HEADER + len);
            waiters[dst].sleeper.wake();
        }
        return true;
    }

    private void wakeAll() {
        for (Waiter wt : waiters) {
            wt.sleeper.wake();
        }
    }

    private void fail(Conn c, Exception e) {
        if (failure == null) {
            failure = new ConnectionClosedException(cfg.nodeName(c.rank), "sockets shuffle: rank " + c.rank + " ('"
                + cfg.nodeName(c.rank) + "' at " + cfg.members().get(c.rank) + ") is lost: " + e.getMessage(), e);
        }
        try {
            c.key.cancel();
            c.ch.close();
        } catch (IOException e2) {
            LOG.debug("close after failure: {}", e2.toString());
        }
        wakeAll();
    }

    private Conn conn(int rank) {
        return conns[rank];
    }

    @Override
    public String provider(int rank) {
        return "sockets";
    }

    @Override
    public Outbox outbox(int localWorker, int rank, int remoteWorker) {
        Conn c = conn(rank);
        RingBuffer ring = c.out[localWorker][remoteWorker];
        int threshold = cfg.batchThreshold();
        return new RingOutbox(ring) {
            @Override
            public int tryClaim(int stream, int len) throws ConnectionClosedException {
                ConnectionClosedException f = failure;
                if (f != null) {
                    throw new ConnectionClosedException(f.peer(), f.getMessage(), f);
                }
                return super.tryClaim(stream, len);
            }

            @Override
            public void commit() {
                super.commit();
                sentRecords.increment();
                if (ring.size() >= threshold) {
                    selector.wakeup();
                }
            }

            @Override
            public void flush() {
                if (ring.size() > 0) {
                    selector.wakeup();
                }
            }
        };
    }

    @Override
    public int poll(int localWorker, Receiver d, int limit) throws RdmxException {
        int n = 0;
        boolean resume = false;
        Waiter wt = waiters[localWorker];
        wt.target = d;
        for (Conn c : conns) {
            if (c == null) {
                continue;
            }
            for (int s = 0; s < cfg.workers() && n < limit; s++) {
                wt.source = c.rank * cfg.workers() + s;
                int k = c.in[s][localWorker].read(wt.adapter, limit - n);
                n += k;
                resume |= k > 0 && c.readPaused;
            }
        }
        if (resume) {
            selector.wakeup();
        }
        if (n == 0 && failure != null) {
            ConnectionClosedException f = failure;
            throw new ConnectionClosedException(f.peer(), f.getMessage(), f);
        }
        return n;
    }

    @Override
    public int read(int localWorker, Receiver d, int limit, long timeoutNanos)
        throws RdmxException, InterruptedException {
        int n = poll(localWorker, d, limit);
        if (n > 0) {
            return n;
        }
        Waiter wt = waiters[localWorker];
        long deadline = System.nanoTime() + timeoutNanos;
        wt.waiting = true;
        try {
            while (true) {
                wt.sleeper.arm();
                n = poll(localWorker, d, limit);
                if (n > 0) {
                    return n;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0 || wt.wake) {
                    wt.wake = false;
                    return 0;
                }
                wt.sleeper.sleep(left);
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
            }
        } finally {
            wt.sleeper.disarm();
            wt.waiting = false;
        }
    }

    @Override
    public void park(int localWorker, long timeoutNanos) throws InterruptedException {
        Waiter wt = waiters[localWorker];
        wt.waiting = true;
        wt.sleeper.arm();
        try {
            if (wt.wake) {
                wt.wake = false;
                return;
            }
            wt.sleeper.sleep(timeoutNanos);
            if (Thread.interrupted()) {
                throw new InterruptedException("worker " + localWorker + " interrupted while waiting");
            }
        } finally {
            wt.sleeper.disarm();
            wt.waiting = false;
        }
    }

    @Override
    public void wakeup(int localWorker) {
        Waiter wt = waiters[localWorker];
        wt.wake = true;
        wt.sleeper.wake();
    }

    @Override
    public long networkRecords() {
        return sentRecords.sum();
    }

    @Override
    public void close() {
        running = false;
        selector.wakeup();
        try {
            io.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (Conn c : conns) {
            if (c != null) {
                try {
                    c.ch.close();
                } catch (IOException e) {
                    LOG.debug("close: {}", e.toString());
                }
            }
        }
        try {
            server.close();
            selector.close();
        } catch (IOException e) {
            LOG.debug("close: {}", e.toString());
        }
    }
}
