package io.rdmx.verbs.tools;

import io.rdmx.transport.Access;
import io.rdmx.transport.Completion;
import io.rdmx.transport.Connection;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.Post;
import io.rdmx.transport.PreparedRequest;
import io.rdmx.transport.Region;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.WorkRequest;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * rdmx READ bandwidth and latency on the {@code verbs} provider, measured the way perftest's {@code ib_read_bw}
 * and {@code ib_read_lat} measure them, so the two compare on the same device:
 * <ul>
 *   <li>bandwidth: {@code n} READs of {@code size} bytes with up to {@code depth} outstanding, one completion
 *       every 64 requests; MB/s with MB = 2^20 bytes, as perftest prints;</li>
 *   <li>latency: one READ of {@code size} bytes at a time, from its post to its completion (the waiter polls the
 *       connection itself: it is the node's only one); the typical (median), in microseconds, not halved (a READ
 *       is one request and its response, as {@code ib_read_lat} reports it).</li>
 * </ul>
 * The serving side's threads do nothing: its NIC answers. Prints {@code RDMX_READ_BW <MB/s>} and
 * {@code RDMX_READ_LAT <us>}. Usage: {@code ReadPerf <bw size> <bw n> <lat size> <lat n> [latency warm-up reads,
 * default 20000]}.
 */
public final class ReadPerf {
    private static final Duration WAIT = Duration.ofSeconds(60);

    private ReadPerf() {
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
        int warm = args.length > 4 ? Integer.parseInt(args[4]) : 20_000;
        int len = Math.max(bwSize, latSize);
        try (Node server = Fabrics.get("verbs").open(NodeOptions.builder().name("readperf-server").build());
             Node client = Fabrics.get("verbs").open(NodeOptions.builder().name("readperf-client").build())) {
            Region source = server.register(len, Access.REMOTE_READ);
            Region into = client.register(len, Access.LOCAL_WRITE);
            Connection c2s = client.connect(server.address(), WAIT);
            Connection s2c = server.accept(WAIT);
            RemoteRegion src = source.descriptor(s2c);
            double bw = bandwidth(client, c2s, into, src, bwSize, bwN, 128);
            System.out.printf("RDMX_READ_BW %.2f%n", bw);
            latency(client, c2s, into, src, latSize, warm); // lets the JIT compile the path, as perftest is C
            double lat = latency(client, c2s, into, src, latSize, latN);
            System.out.printf("RDMX_READ_LAT %.2f%n", lat);
            System.out.flush();
            source.release();
            into.release();
        }
        System.exit(0);
    }

    private static double bandwidth(Node client, Connection c, Region into, RemoteRegion src, int size, int n,
                                    int depth) throws Exception {
        return WritePerf.stream(client, c, WorkRequest.read(into, 0, size, src, 0), size, n, depth);
    }

    private static void check(Completion x) {
        if (!x.ok() || x.opcode() != Opcode.READ) {
            throw new IllegalStateException(String.valueOf(x));
        }
    }

    private static double latency(Node client, Connection c, Region into, RemoteRegion src, int size, int n)
        throws Exception {
        PreparedRequest read = c.prepare(WorkRequest.read(into, 0, size, src, 0));
        long[] t = new long[n];
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime();
            int rc = read.post(i, 0, size, 0);
            if (rc != Post.OK) {
                throw new IllegalStateException("post: " + Post.name(rc));
            }
            if (client.completionQueue().await(ReadPerf::check, 1, WAIT.toSeconds(), TimeUnit.SECONDS) != 1) {
                throw new IllegalStateException("no completion of READ " + i + " within " + WAIT);
            }
            t[i] = System.nanoTime() - t0;
        }
        Arrays.sort(t);
        return t[n / 2] / 1000.0;
    }
}
