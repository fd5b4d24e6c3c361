package io.rdmx.bench.rpc;

import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ipc.RPC;
import org.apache.hadoop.ipc.TestRpcBase;
import org.apache.hadoop.ipc.protobuf.TestProtos.EchoRequestProto;

/**
 * The client JVM of {@code bench rpc} (JDK 17): OSU HiBD-style echo latency per payload size (the first half of
 * the calls warm-up, mean/p50/p99 of the rest) and throughput of 6 threads at 1 KiB, through an unmodified
 * {@code RPC.getProxy} with the engine named by configuration. Prints {@code MARK <phase> begin|end} around each
 * phase (the parent samples both processes' CPU time and context switches there) and result lines.
 */
public final class RpcBenchClient {
    private RpcBenchClient() {
    }

    /**
     * @param args engine class, provider/dispatch, server port, calls per size, sizes (comma list), throughput threads,
     *     throughput calls per thread, throughput payload
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        String[] pd = args[1].split("/");
        Configuration conf = RpcBench.conf(args[0], pd[0], pd[1]);
        InetSocketAddress addr = new InetSocketAddress("127.0.0.1", Integer.parseInt(args[2]));
        int calls = Integer.parseInt(args[3]);
        int[] sizes = Arrays.stream(args[4].split(",")).mapToInt(Integer::parseInt).toArray();
        int threads = Integer.parseInt(args[5]);
        int perThread = Integer.parseInt(args[6]);
        int tputSize = Integer.parseInt(args[7]);
        TestRpcBase.TestRpcService proxy = RPC.getProxy(TestRpcBase.TestRpcService.class, 1, addr, conf);
        proxy.echo(null, EchoRequestProto.newBuilder().setMessage("hello").build());  // ping needs JUnit
        for (int size : sizes) {
            EchoRequestProto req = EchoRequestProto.newBuilder().setMessage("x".repeat(size)).build();
            int warm = calls / 2;
            long[] lat = new long[calls - warm];
            mark("lat-" + size, "begin");
            for (int i = 0; i < calls; i++) {
                long t = System.nanoTime();
                String back = proxy.echo(null, req).getMessage();
                long d = System.nanoTime() - t;
                if (back.length() != size) {
                    throw new IllegalStateException("echo of " + size + " bytes came back with " + back.length());
                }
                if (i >= warm) {
                    lat[i - warm] = d;
                }
            }
            mark("lat-" + size, "end");
            Arrays.sort(lat);
            double mean = Arrays.stream(lat).average().orElse(0) / 1000.0;
            System.out.printf(Locale.ROOT, "LAT %d %.3f %.3f %.3f%n", size, mean, lat[lat.length / 2] / 1000.0,
                lat[(int) Math.min(lat.length - 1, Math.ceil(lat.length * 0.99) - 1)] / 1000.0);
            System.out.flush();
        }
        EchoRequestProto req = EchoRequestProto.newBuilder().setMessage("x".repeat(tputSize)).build();
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
                    for (int i = 0; i < Math.max(1, perThread / 4); i++) {
                        proxy.echo(null, req);
                    }
                    warmed.countDown();
                    go.await();
                    for (int i = 0; i < perThread; i++) {
                        proxy.echo(null, req);
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
            }, "bench-rpc-" + t).start();
        }
        warmed.await();
        mark("tput", "begin");
        long t0 = System.nanoTime();
        go.countDown();
        done.await();
        long ns = System.nanoTime() - t0;
        mark("tput", "end");
        exit.countDown();
        if (failure.get() != null) {
            throw new IllegalStateException("a throughput thread failed", failure.get());
        }
        System.out.printf(Locale.ROOT, "TPUT %d %d %.1f%n", threads, tputSize,
            (double) threads * perThread / (ns / 1e9));
        System.out.flush();
        RPC.stopProxy(proxy);
        System.exit(0);
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
