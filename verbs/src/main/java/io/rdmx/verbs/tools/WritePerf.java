package io.rdmx.verbs.tools;

import io.rdmx.transport.Access;
import io.rdmx.transport.Connection;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Post;
import io.rdmx.transport.PreparedRequest;
import io.rdmx.transport.Region;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.WorkRequest;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * rdmx WRITE bandwidth and latency on the {@code verbs} provider, measured the way perftest's
 * {@code ib_write_bw} and {@code ib_write_lat} measure them, so the two compare on the same device:
 * <ul>
 *   <li>bandwidth: {@code n} WRITEs of {@code size} bytes with up to {@code depth} outstanding, one completion
 *       every 64 requests (perftest's cq moderation); MB/s with MB = 2^20 bytes, as perftest prints;</li>
 *   <li>latency: a ping-pong of {@code size}-byte WRITEs in which each side polls the last byte of its own
 *       region for the peer's sequence number (no completion on the critical path, as {@code ib_write_lat});
 *       the typical (median) of half the round trips, in microseconds.</li>
 * </ul>
 * Prints {@code RDMX_WRITE_BW <MB/s>} and {@code RDMX_WRITE_LAT <us>}. Usage:
 * {@code WritePerf <bw size> <bw n> <lat size> <lat n> [latency warm-up round trips, default 20000]}. The
 * latency loop re-posts prepared requests ({@link Connection#prepare}), the way a latency-sensitive user would.
 */
public final class WritePerf {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final VarHandle SEQ = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

    private WritePerf() {
    }

    /**
     * @param args bandwidth size and count, latency size and count
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        int bwSize = Integer.parseInt(args[0]);
        int bwN = Integer.parseInt(args[1]);
        int latSize = Integer.parseInt(args[2]);
        int latN = Integer.parseInt(args[3]);
        try (Node server = Fabrics.get("verbs").open(NodeOptions.builder().name("perf-server").build());
             Node client = Fabrics.get("verbs").open(NodeOptions.builder().name("perf-client").build())) {
            Region target = server.register(Math.max(bwSize, latSize) * 2, Access.ALL);
            Region back = client.register(Math.max(bwSize, latSize) * 2, Access.ALL);
            Connection c2s = client.connect(server.address(), WAIT);
            Connection s2c = server.accept(WAIT);
            RemoteRegion dst = find(c2s, target);
            RemoteRegion dstBack = find(s2c, back);
            double bw = bandwidth(client, c2s, back, dst, bwSize, bwN, 128);
            System.out.printf("RDMX_WRITE_BW %.2f%n", bw);
            // a first round lets the JIT compile the data path (C2 needs some 10^4 calls), as perftest, being C,
            // starts compiled
            int warm = args.length > 4 ? Integer.parseInt(args[4]) : 20_000;
            latency(client, c2s, back, dst, server, s2c, target, dstBack, latSize, warm, 0);
            double lat = latency(client, c2s, back, dst, server, s2c, target, dstBack, latSize, latN, warm);
            System.out.printf("RDMX_WRITE_LAT %.2f%n", lat);
            System.out.flush();
            target.release();
            back.release();
        }
        System.exit(0);
    }

    private static RemoteRegion find(Connection c, Region r) {
        for (RemoteRegion rr : c.remoteRegions()) {
            if (rr.address() == r.address()) { // the key differs per connection (a protection domain each)
                return rr;
            }
        }
        throw new IllegalStateException("region " + r + " not exchanged");
    }

    static double bandwidth(Node client, Connection c, Region src, RemoteRegion dst, int size, int n, int depth)
        throws Exception {
        int warm = Math.max(64, n / 10);
        int total = warm + n;
        long[] retired = {0};
        long start = 0;
        for (int i = 0; i < total; i++) {
            if (i == warm) {
                while (retired[0] < warm) {
                    retire(client, retired);
                }
                start = System.nanoTime();
            }
            while (i - retired[0] >= depth) {
                retire(client, retired);
            }
            boolean signal = (i + 1) % 64 == 0 || i == warm - 1 || i == total - 1;
            int rc = c.post(WorkRequest.write(src, 0, size, dst, 0).wrId(i).signaled(signal));
            if (rc != Post.OK) {
                throw new IllegalStateException("post: " + Post.name(rc));
            }
        }
        while (retired[0] < total) {
            retire(client, retired);
        }
        long ns = System.nanoTime() - start;
        return (double) size * n / (1 << 20) / (ns / 1e9);
    }

    private static void retire(Node node, long[] retired) throws Exception {
        int k = node.completionQueue().await(x -> {
            if (!x.ok()) {
                throw new IllegalStateException(String.valueOf(x));
            }
            retired[0] = x.wrId() + 1;
        }, 16, WAIT.toSeconds(), TimeUnit.SECONDS);
        if (k == 0) {
            throw new IllegalStateException("no completion within " + WAIT);
        }
    }

    static double latency(Node client, Connection c2s, Region clientMem, RemoteRegion toServer, Node server,
                          Connection s2c, Region serverMem, RemoteRegion toClient, int size, int n, int base)
        throws Exception {
        int seqAt = size - 4;
        PreparedRequest[] pingReq = {c2s.prepare(WorkRequest.write(clientMem, 0, 0, toServer, 0).signaled(false)),
            c2s.prepare(WorkRequest.write(clientMem, 0, 0, toServer, 0))};
        PreparedRequest[] pongReq = {s2c.prepare(WorkRequest.write(serverMem, 0, 0, toClient, 0).signaled(false)),
            s2c.prepare(WorkRequest.write(serverMem, 0, 0, toClient, 0))};
        Thread pong = new Thread(() -> {
            try {
                ByteBuffer mine = serverMem.buffer();
                for (int i = base + 1; i <= base + n; i++) {
                    while ((int) SEQ.getVolatile(mine, seqAt) != i) {
                        Thread.onSpinWait();
                    }
                    mine.putInt(size + seqAt, i);
                    post(pongReq, size, size, i, server);
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, "pong");
        pong.setDaemon(true);
        pong.start();
        ByteBuffer mine = clientMem.buffer();
        long[] rtt = new long[n];
        long[] posts = new long[n];
        for (int i = base + 1; i <= base + n; i++) {
            mine.putInt(size + seqAt, i);
            long t0 = System.nanoTime();
            post(pingReq, size, size, i, client);
            posts[i - base - 1] = System.nanoTime() - t0;
            long deadline = t0 + WAIT.toNanos();
            while ((int) SEQ.getVolatile(mine, seqAt) != i) {
                Thread.onSpinWait();
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("no pong for ping " + i);
                }
            }
            rtt[i - base - 1] = System.nanoTime() - t0;
        }
        pong.join(WAIT.toMillis());
        if (base > 0) {
            Arrays.sort(posts);
            System.out.printf("RDMX_POST_US %.2f%n", posts[n / 2] / 1000.0);
        }
        long[] sorted = rtt.clone();
        Arrays.sort(sorted);
        return sorted[n / 2] / 2.0 / 1000.0;
    }

    /** Posts one WRITE from {@code [from, from+size)} to offset 0, signaled every 64th to retire the queue. */
    private static void post(PreparedRequest[] p, int from, int size, int i, Node node) throws Exception {
        boolean signal = i % 64 == 0;
        int rc = p[signal ? 1 : 0].post(i, from, size, 0);
        if (rc != Post.OK) {
            throw new IllegalStateException("post: " + Post.name(rc));
        }
        if (signal) {
            node.completionQueue().await(x -> {
                if (!x.ok()) {
                    throw new IllegalStateException(String.valueOf(x));
                }
            }, 1, WAIT.toSeconds(), TimeUnit.SECONDS);
        }
    }
}
