package io.rdmx.verbs.tools;

import io.rdmx.transport.Access;
import io.rdmx.transport.Connection;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Post;
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
 * {@code WritePerf <bw size> <bw n> <lat size> <lat n>}.
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
            double lat = latency(client, c2s, back, dst, server, s2c, target, dstBack, latSize, latN);
            System.out.printf("RDMX_WRITE_LAT %.2f%n", lat);
            System.out.flush();
        }
        System.exit(0);
    }

    private static RemoteRegion find(Connection c, Region r) {
        for (RemoteRegion rr : c.remoteRegions()) {
            if (rr.remoteKey() == r.remoteKey()) {
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
                          Connection s2c, Region serverMem, RemoteRegion toClient, int size, int n) throws Exception {
        int seqAt = size - 4;
        Thread pong = new Thread(() -> {
            try {
                ByteBuffer mine = serverMem.buffer();
                for (int i = 1; i <= n; i++) {
                    while ((int) SEQ.getVolatile(mine, seqAt) != i) {
                        Thread.onSpinWait();
                    }
                    mine.putInt(size + seqAt, i);
                    post(s2c, serverMem, size, toClient, size, i, server);
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, "pong");
        pong.setDaemon(true);
        pong.start();
        ByteBuffer mine = clientMem.buffer();
        long[] rtt = new long[n];
        for (int i = 1; i <= n; i++) {
            mine.putInt(size + seqAt, i);
            long t0 = System.nanoTime();
            post(c2s, clientMem, size, toServer, size, i, client);
            long deadline = t0 + WAIT.toNanos();
            while ((int) SEQ.getVolatile(mine, seqAt) != i) {
                Thread.onSpinWait();
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("no pong for ping " + i);
                }
            }
            rtt[i - 1] = System.nanoTime() - t0;
        }
        pong.join(WAIT.toMillis());
        long[] sorted = rtt.clone();
        Arrays.sort(sorted);
        return sorted[n / 2] / 2.0 / 1000.0;
    }

    /** Posts one WRITE from {@code [from, from+size)} to offset 0, signaled every 64th to retire the queue. */
    private static void post(Connection c, Region src, int from, RemoteRegion dst, int size, int i, Node node)
        throws Exception {
        boolean signal = i % 64 == 0;
        int rc = c.post(WorkRequest.write(src, from, size, dst, 0).wrId(i).signaled(signal));
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
