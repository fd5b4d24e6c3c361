package io.rdmx.bench.rpc;

import io.rdmx.rpc.hadoop.RdmxRpcEngine;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ipc.RPC;
import org.apache.hadoop.ipc.TestRpcBase;
import org.apache.hadoop.ipc.protobuf.TestProtos.EchoRequestProto;
import org.apache.hadoop.thirdparty.protobuf.ByteString;

/**
 * The client JVM of {@code bench rpc} (JDK 17): OSU HiBD-style echo latency per payload size (the first half of
 * the calls warm-up, mean/p50/p99 of the rest) and throughput of 6 threads at 1 KiB, for a {@code bytes} payload
 * ({@link BytesEcho}, as OHB sends) and a {@code string} one (Hadoop's test protocol), after a JIT warm-up phase,
 * through an unmodified
 * {@code RPC.getProxy} with the engine named by configuration. Prints {@code MARK <phase> begin|end} around each
 * phase (the parent samples both processes' CPU time and context switches there) and result lines.
 */
public final class RpcBenchClient {
    /** System property: the server's address (default 127.0.0.1; across hosts, the server's host). */
    static final String SERVER_PROP = "rdmx.bench.rpc.server";

    private RpcBenchClient() {
    }

    /**
     * @param args engine class, provider/dispatch, server port, calls per size, sizes (comma list), throughput threads,
     *     throughput calls per thread, throughput payload, warm-up calls, rounds, payload kinds (comma list), and
     *     under Kerberos: protection, the server's principal, the caller's principal, the caller's keytab
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        String[] pd = args[1].split("/");
        Configuration conf = RpcBench.conf(args[0], pd[0], pd[1]);
        InetSocketAddress addr = new InetSocketAddress(System.getProperty(SERVER_PROP, "127.0.0.1"),
            Integer.parseInt(args[2]));
        int calls = Integer.parseInt(args[3]);
        int[] sizes = Arrays.stream(args[4].split(",")).mapToInt(Integer::parseInt).toArray();
        int threads = Integer.parseInt(args[5]);
        int perThread = Integer.parseInt(args[6]);
        int tputSize = Integer.parseInt(args[7]);
        int warmupCalls = Integer.parseInt(args[8]);
        int rounds = Integer.parseInt(args[9]);
        List<String> wanted = List.of(args[10].split(","));
        if (args.length > 11) {
            RpcKdc.login(RpcBench.kerberos(conf, args[11], args[12]), args[13], args[14]);
        }
        TestRpcBase.TestRpcService strings = RPC.getProxy(TestRpcBase.TestRpcService.class, 1, addr, conf);
        BytesEcho.Protocol bytes = RPC.getProxy(BytesEcho.Protocol.class, 1, addr, conf);
        Echo[] every = {new Echo("bytes", size -> {
            byte[] p = new byte[size];
            new java.util.Random(size).nextBytes(p);
            BytesEcho.BytesProto req = BytesEcho.BytesProto.of(ByteString.copyFrom(p));
            if (!bytes.echo(null, req).getPayload().equals(req.getPayload())) {   // once, before timing
                throw new IllegalStateException("bytes echo of " + size + " bytes came back different");
            }
            return () -> bytes.echo(null, req).getPayload().size();
        }), new Echo("string", size -> {
            EchoRequestProto req = EchoRequestProto.newBuilder().setMessage("x".repeat(size)).build();
            if (!strings.echo(null, req).getMessage().equals(req.getMessage())) {
                throw new IllegalStateException("string echo of " + size + " chars came back different");
            }
            return () -> strings.echo(null, req).getMessage().length();
        })};
        Echo[] kinds = Arrays.stream(every).filter(k -> wanted.contains(k.name)).toArray(Echo[]::new);
        // JIT warm-up before anything is measured: quick mode's 1 000 warm-up calls per size leave the call path
        // interpreted or at C1 (C2 compiles after ~10 000 invocations), which made its small-payload figures
        // swing between runs; both payload kinds, small and large, so each size's first calls find compiled code
        mark("warmup", "begin");
        for (Echo k : kinds) {
            for (int size : new int[] {1 << 10, 64 << 10}) {
                Call c = k.call(size);
                for (int i = 0; i < (size <= 1 << 10 ? warmupCalls : warmupCalls / 20); i++) {
                    c.run();
                }
            }
        }
        mark("warmup", "end");
        // rounds: every size is measured once per round, the rounds one after another, so a disturbance of a few
        // hundred ms (a GC, a JIT burst, another process on the machine) hits one round of a size, not all of it;
        // the reported mean is the median of the rounds' means (p50/p99 over all rounds' samples), with the spread
        int warm = calls / 2;
        Map<String, long[][]> samples = new LinkedHashMap<>();
        for (int round = 0; round < rounds; round++) {
            for (Echo k : kinds) {
                for (int size : sizes) {
                    Call c = k.call(size);
                    long[] lat = new long[calls - warm];
                    mark("lat-" + k.name + "-" + size, "begin");
                    for (int i = 0; i < calls; i++) {
                        long t = System.nanoTime();
                        int back = c.run();
                        long d = System.nanoTime() - t;
                        if (back != size) {
                            throw new IllegalStateException(k.name + " echo of " + size + " bytes came back with "
                                + back);
                        }
                        if (i >= warm) {
                            lat[i - warm] = d;
                        }
                    }
                    mark("lat-" + k.name + "-" + size, "end");
                    samples.computeIfAbsent(k.name + " " + size, x -> new long[rounds][])[round] = lat;
                }
            }
        }
        for (Map.Entry<String, long[][]> e : samples.entrySet()) {
            double[] means = new double[rounds];
            long[] all = new long[rounds * (calls - warm)];
            for (int r = 0; r < rounds; r++) {
                means[r] = Arrays.stream(e.getValue()[r]).average().orElse(0) / 1000.0;
                System.arraycopy(e.getValue()[r], 0, all, r * (calls - warm), calls - warm);
            }
            Arrays.sort(means);
            Arrays.sort(all);
            System.out.printf(Locale.ROOT, "LAT %s %.3f %.3f %.3f %.3f %.3f%n", e.getKey(), means[rounds / 2],
                all[all.length / 2] / 1000.0, all[(int) Math.min(all.length - 1, Math.ceil(all.length * 0.99) - 1)]
                    / 1000.0, means[0], means[rounds - 1]);
        }
        System.out.flush();
        for (Echo k : kinds) {
            throughput(k, tputSize, threads, perThread);
        }
        // which path the calls took: the parent refuses a row whose calls did not all take its engine's
        System.out.println("PATHS " + RdmxRpcEngine.clientCallsOverRdmx() + " " + RdmxRpcEngine.clientCallsOverTcp());
        System.out.flush();
        RPC.stopProxy(bytes);
        RPC.stopProxy(strings);
        System.exit(0);
    }

    /** One echo call of a fixed payload: returns the payload length that came back. */
    @FunctionalInterface
    private interface Call {
        int run() throws Exception;
    }

    /** Makes the call of one payload size (checking its echo once). */
    @FunctionalInterface
    private interface Maker {
        Call make(int size) throws Exception;
    }

    /** A payload kind: its name and how to make a call of a given size. */
    private record Echo(String name, Maker calls) {
        Call call(int size) throws Exception {
            return calls.make(size);
        }
    }

    /**
     * Calls per thread before the throughput phase, at least: the single-threaded warm-up leaves the paths of
     * several callers on one connection cold, and a quick run's 500 calls per thread did not settle them (the first
     * payload kind measured 37-40k calls/s on shm with 6 x 8 000 calls, 78-81k in a full run).
     */
    private static final int TPUT_WARMUP_MIN = 5_000;

    private static void throughput(Echo k, int tputSize, int threads, int perThread) throws Exception {
        Call call = k.call(tputSize);
        // the threads start (and warm up) before the measured phase and end after it: /proc's per-thread context
        // switch counts of threads that exit during a phase would be lost
        CountDownLatch warmed = new CountDownLatch(threads);
        CountDownLatch go = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(threads);
        CountDownLatch exit = new CountDownLatch(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        for (int t = 0; t < threads; t++) {
            new Thread(() -> {
                try {
                    for (int i = 0; i < Math.max(TPUT_WARMUP_MIN, perThread / 4); i++) {
                        call.run();
                    }
                    warmed.countDown();
                    go.await();
                    for (int i = 0; i < perThread; i++) {
                        call.run();
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                    warmed.countDown();
                } finally {
                    done.countDown();
                }
                try {
                    exit.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "bench-rpc-" + k.name + "-" + t).start();
        }
        warmed.await();
        mark("tput-" + k.name, "begin");
        long t0 = System.nanoTime();
        go.countDown();
        done.await();
        long ns = System.nanoTime() - t0;
        mark("tput-" + k.name, "end");
        exit.countDown();
        if (failure.get() != null) {
            throw new IllegalStateException("a " + k.name + " throughput thread failed", failure.get());
        }
        System.out.printf(Locale.ROOT, "TPUT %s %d %d %.1f%n", k.name, threads, tputSize,
            (double) threads * perThread / (ns / 1e9));
        System.out.flush();
    }

    private static void mark(String phase, String edge) throws InterruptedException {
        System.out.println("MARK " + phase + " " + edge);
        System.out.flush();
        // the parent answers each mark on our stdin once it sampled /proc, so the phase starts after the sample
        try {
            if (System.in.read() < 0) {
                throw new IllegalStateException("parent gone");
            }
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
