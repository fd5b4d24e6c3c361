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
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

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
 * {@code WritePerf <bw size> <bw n> <lat size> <lat n> [latency warm-up round trips, default 20000]}: both nodes
 * in this process. Between two hosts (the Soft-RoCE job's two VMs, each with its own device), one process each,
 * both living through several rounds (a JVM takes minutes to start in those VMs): {@code WritePerf server
 * <address file> <rounds> <bw size> <lat size> <lat n> [warm-up]} publishes its address in the file, takes the
 * WRITEs and answers the pings; {@code WritePerf client <address file> <gate directory> <rounds> <bw size> <bw n>
 * <lat size> <lat n> [warm-up]} waits for that file, connects, creates {@code connected} in the gate directory,
 * then measures round r (both figures, printed) when {@code go_r} appears there and creates {@code done_r} after
 * it: the job runs perftest between rounds. Each prints the provider and address it used
 * ({@code RDMX_WRITE_NODE verbs <address>}). The latency loop re-posts prepared requests
 * ({@link Connection#prepare}), the way a latency-sensitive user would.
 */
public final class WritePerf {
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** Between two hosts: how long one side waits for the other (to start, to reach the next round). */
    private static final Duration HOSTS_WAIT = Duration.ofSeconds(600);
    private static final int DEFAULT_WARM = 20_000;
    private static final long IDLE_NANOS = 1_000_000_000L;
    private static final long NAP_NANOS = 100_000L;
    private static final VarHandle SEQ = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

    private WritePerf() {
    }

    /**
     * @param args bandwidth size and count, latency size and count
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        if (args[0].equals("server")) {
            server(Path.of(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]), Integer.parseInt(args[4]),
                Integer.parseInt(args[5]), args.length > 6 ? Integer.parseInt(args[6]) : DEFAULT_WARM);
            System.exit(0);
        }
        if (args[0].equals("client")) {
            int[] n = Arrays.stream(args, 3, args.length).mapToInt(Integer::parseInt).toArray();
            client(Path.of(args[1]), Path.of(args[2]), n[0], n[1], n[2], n[3], n[4],
                n.length > 5 ? n[5] : DEFAULT_WARM);
            System.exit(0);
        }
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
            int warm = args.length > 4 ? Integer.parseInt(args[4]) : DEFAULT_WARM;
            latency(client, c2s, back, dst, server, s2c, target, dstBack, latSize, warm, 0);
            double lat = latency(client, c2s, back, dst, server, s2c, target, dstBack, latSize, latN, warm);
            System.out.printf("RDMX_WRITE_LAT %.2f%n", lat);
            System.out.flush();
            target.release();
            back.release();
        }
        System.exit(0);
    }

    /**
     * The passive side between two hosts: publishes its address, accepts one client, lets it WRITE, and answers
     * {@code warm + rounds * latN} pings; stays until the client closes.
     */
    private static void server(Path addressFile, int rounds, int bwSize, int latSize, int latN, int warm)
        throws Exception {
        try (Node server = Fabrics.get("verbs").open(NodeOptions.builder().name("perf-server").build())) {
            System.out.println("RDMX_WRITE_NODE " + server.fabric().name() + " " + server.address());
            Region target = server.register(Math.max(bwSize, latSize) * 2, Access.ALL);
            Path tmp = addressFile.resolveSibling(addressFile.getFileName() + ".tmp");
            Files.writeString(tmp, server.address());
            Files.move(tmp, addressFile);
            Connection s2c = server.accept(HOSTS_WAIT);
            RemoteRegion toClient = only(s2c, target.length());
            pong(server, s2c, target, toClient, latSize, 0, warm + rounds * latN, HOSTS_WAIT);
            long deadline = System.nanoTime() + HOSTS_WAIT.toNanos();
            while (s2c.isOpen() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            target.release();
        }
    }

    /**
     * The measuring side between two hosts: connects to the server whose address the file holds, then measures a
     * round whenever the gate directory says so.
     */
    private static void client(Path addressFile, Path gate, int rounds, int bwSize, int bwN, int latSize, int latN,
                               int warm) throws Exception {
        awaitFile(addressFile);
        String address = Files.readString(addressFile).trim();
        try (Node client = Fabrics.get("verbs").open(NodeOptions.builder().name("perf-client").build())) {
            System.out.println("RDMX_WRITE_NODE " + client.fabric().name() + " " + client.address() + " to "
                + address);
            Region back = client.register(Math.max(bwSize, latSize) * 2, Access.ALL);
            Connection c2s = client.connect(address, HOSTS_WAIT);
            RemoteRegion dst = only(c2s, back.length());
            Files.createFile(gate.resolve("connected"));
            for (int r = 1; r <= rounds; r++) {
                awaitFile(gate.resolve("go_" + r));
                System.out.printf("RDMX_WRITE_BW %.2f%n", bandwidth(client, c2s, back, dst, bwSize, bwN, 128));
                if (r == 1) {
                    ping(client, c2s, back, dst, latSize, warm, 0);
                }
                System.out.printf("RDMX_WRITE_LAT %.2f%n", ping(client, c2s, back, dst, latSize, latN,
                    warm + (r - 1) * latN));
                System.out.flush();
                Files.createFile(gate.resolve("done_" + r));
            }
            c2s.close();
            back.release();
        }
    }

    private static void awaitFile(Path file) throws InterruptedException {
        long deadline = System.nanoTime() + HOSTS_WAIT.toNanos();
        while (!Files.exists(file)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(file + " did not appear within " + HOSTS_WAIT);
            }
            Thread.sleep(100);
        }
    }

    /** The peer's one region, which has this length (each side registers one, of the same length). */
    private static RemoteRegion only(Connection c, long length) {
        List<RemoteRegion> all = c.remoteRegions();
        if (all.size() != 1 || all.get(0).length() != length) {
            throw new IllegalStateException("peer " + c.peerName() + " exchanged " + all + ", expected one region of "
                + length + " bytes");
        }
        return all.get(0);
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
        return stream(client, c, WorkRequest.write(src, 0, size, dst, 0), size, n, depth);
    }

    /**
     * Posts {@code n} copies of one request (after a warm-up of a tenth), at most {@code depth} outstanding, every
     * 64th signaled, and measures the bandwidth: WritePerf's WRITE stream and ReadPerf's READ stream.
     *
     * @param client the posting node
     * @param c its connection
     * @param wr the request (WRITE or READ of {@code size} bytes); its id and signaling are set per post
     * @param size bytes per request
     * @param n requests measured
     * @param depth requests outstanding at most
     * @return MiB/s
     * @throws Exception on a failed post or completion
     */
    static double stream(Node client, Connection c, WorkRequest wr, int size, int n, int depth) throws Exception {
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
            int rc = c.post(wr.wrId(i).signaled(signal));
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
        Thread pong = new Thread(() -> {
            try {
                pong(server, s2c, serverMem, toClient, size, base, n, WAIT);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, "pong");
        pong.setDaemon(true);
        pong.start();
        double lat = ping(client, c2s, clientMem, toServer, size, n, base);
        pong.join(WAIT.toMillis());
        return lat;
    }

    /**
     * Answers pings {@code base + 1 .. base + n}: waits for each sequence number in the last word of its own
     * region's first {@code size} bytes, then WRITEs it back from the region's second half. A wait that spins a
     * second without a ping (between two rounds) goes on in naps of 100 us, so an idle server leaves the CPU to
     * what runs meanwhile; each wait ends after {@code wait}.
     */
    static void pong(Node server, Connection s2c, Region serverMem, RemoteRegion toClient, int size, int base,
                     int n, Duration wait) throws Exception {
        int seqAt = size - 4;
        PreparedRequest[] pongReq = {s2c.prepare(WorkRequest.write(serverMem, 0, 0, toClient, 0).signaled(false)),
            s2c.prepare(WorkRequest.write(serverMem, 0, 0, toClient, 0))};
        ByteBuffer mine = serverMem.buffer();
        for (int i = base + 1; i <= base + n; i++) {
            long start = System.nanoTime();
            for (int spins = 0; (int) SEQ.getVolatile(mine, seqAt) != i; spins++) {
                Thread.onSpinWait();
                if ((spins & 1023) != 0) {
                    continue;
                }
                long waited = System.nanoTime() - start;
                if (waited > wait.toNanos()) {
                    throw new IllegalStateException("no ping " + i + " from " + s2c.peerName() + " within " + wait);
                }
                if (waited > IDLE_NANOS) {
                    LockSupport.parkNanos(NAP_NANOS);
                }
            }
            mine.putInt(size + seqAt, i);
            post(pongReq, size, size, i, server);
        }
    }

    /** Sends pings {@code base + 1 .. base + n}; returns the median of half the round trips, in microseconds. */
    static double ping(Node client, Connection c2s, Region clientMem, RemoteRegion toServer, int size, int n,
                       int base) throws Exception {
        int seqAt = size - 4;
        PreparedRequest[] pingReq = {c2s.prepare(WorkRequest.write(clientMem, 0, 0, toServer, 0).signaled(false)),
            c2s.prepare(WorkRequest.write(clientMem, 0, 0, toServer, 0))};
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
