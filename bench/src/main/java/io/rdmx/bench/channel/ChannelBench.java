package io.rdmx.bench.channel;

import io.rdmx.bench.report.ChildJvm;
import io.rdmx.bench.report.Report;
import io.rdmx.channel.ChannelConfig;
import io.rdmx.channel.ChannelEngine;
import io.rdmx.channel.ChannelReader;
import io.rdmx.channel.ChannelWriter;
import io.rdmx.channel.PeerChannel;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code rdmx bench channel}: ring-channel streaming throughput and round-trip latency between two processes,
 * per provider and record size; a batching-threshold sweep; SEND against WRITE_WITH_IMM notifications; and in
 * the same run a plain NIO socket stream between two processes and a single-thread off-heap memory copy.
 */
public final class ChannelBench {
    static final int[] SIZES = {32, 1024, 16 << 10, 64 << 10};
    static final int RING = 1 << 20;

    private final boolean quick;
    private final long measureNanos;
    private final Report report;
    private final Map<String, Double> values = new LinkedHashMap<>();

    private ChannelBench(boolean quick) {
        this.quick = quick;
        this.measureNanos = TimeUnit.MILLISECONDS.toNanos(quick ? 700 : 2000);
        this.report = new Report("channel", quick).context("ringCapacity", RING)
            .context("batchThresholdDefault", ChannelConfig.BATCH_THRESHOLD_DEFAULT)
            .context("measureMillis", TimeUnit.NANOSECONDS.toMillis(measureNanos))
            .context("processes", 2);
    }

    /**
     * Runs the benchmark and writes {@code channel.json} and {@code channel.svg}.
     *
     * @param quick shorter measurements and a shorter sweep
     * @param results the results directory
     * @throws Exception on failure
     */
    public static void run(boolean quick, Path results) throws Exception {
        new ChannelBench(quick).runAll(results);
    }

    private void runAll(Path results) throws Exception {
        System.out.println("rdmx bench channel" + (quick ? " --quick" : "") + ": two processes per run; sizes "
            + Arrays.toString(SIZES));
        memcpy();
        nio();
        for (String provider : List.of("shm", "tcp")) {
            for (ChannelConfig.Notification mode : ChannelConfig.Notification.values()) {
                ringSession(provider, mode, ChannelConfig.BATCH_THRESHOLD_DEFAULT, true);
            }
        }
        int[] sweep = quick ? new int[] {1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10}
            : new int[] {1 << 10, 2 << 10, 4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10};
        for (int t : sweep) {
            ringSession("shm", ChannelConfig.Notification.SEND, t, false);
        }
        compare(sweep);
        report.finish(System.out, results);
    }

    private void put(String key, String name, String variant, double value, String unit) {
        values.put(key, value);
        report.add(new Report.Result(name, variant, value, 0, unit));
        System.out.printf(Locale.ROOT, "  %-40s %-26s %12.2f %s%n", name, variant, value, unit);
    }

    private void memcpy() {
        System.out.println("memcpy baseline (single thread, off-heap, 64 MiB working set)");
        int total = 64 << 20;
        ByteBuffer src = ByteBuffer.allocateDirect(total);
        ByteBuffer dst = ByteBuffer.allocateDirect(total);
        for (int size : SIZES) {
            long bytes = 0;
            long end = System.nanoTime() + measureNanos / 2;
            int off = 0;
            for (int warm = 0; warm < 2; warm++) {
                bytes = 0;
                long start = System.nanoTime();
                end = start + measureNanos / 2;
                while (System.nanoTime() < end) {
                    for (int i = 0; i < 64; i++) {
                        dst.put(off, src, off, size);
                        off += size;
                        if (off + size > total) {
                            off = 0;
                        }
                    }
                    bytes += 64L * size;
                }
                if (warm == 1) {
                    double s = (System.nanoTime() - start) / 1e9;
                    put("memcpy/" + size, "memcpy " + label(size), "-", bytes / s / (1 << 20), "MiB/s");
                }
            }
        }
    }

    private static String label(int size) {
        return size >= 1024 ? (size >> 10) + " KiB" : size + " B";
    }

    private static Process spawn(String main, String... args) throws IOException {
        return new ProcessBuilder(ChildJvm.command(main, List.of(), args))
            .redirectError(ProcessBuilder.Redirect.INHERIT).start();
    }

    private static String address(Process p) throws IOException {
        String line = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))
            .readLine();
        if (line == null || !line.startsWith("ADDRESS ")) {
            throw new IOException("benchmark peer failed to start: " + line);
        }
        return line.substring(8);
    }

    // ------------------------------------------------------------------ ring channels

    private void ringSession(String provider, ChannelConfig.Notification mode, int threshold, boolean full)
        throws Exception {
        String variant = provider + "/" + mode + (full ? "" : "/t=" + label(threshold));
        System.out.println("ring channel " + variant);
        String peerName = "bench-peer-" + ProcessHandle.current().pid() + "-" + System.nanoTime() % 100000;
        Process child = spawn(ChannelPeer.class.getName(), provider, mode.name(), Integer.toString(RING),
            Integer.toString(threshold), peerName);
        ChannelConfig cfg = ChannelPeer.config(mode.name(), RING, threshold);
        try (Node node = Fabrics.get(provider).open(NodeOptions.builder().name("bench-" + ProcessHandle.current()
            .pid() + "-" + System.nanoTime() % 100000).build());
             ChannelEngine engine = ChannelEngine.open(node, cfg)) {
            PeerChannel peer = engine.connect(address(child), Duration.ofSeconds(60));
            ChannelWriter w = peer.writer(0, 0);
            ChannelReader r = engine.reader(0);
            int[] sizes = full ? SIZES : new int[] {1024};
            for (int size : sizes) {
                double mibs = ringStream(w, r, size);
                String key = full ? "ring/" + provider + "/" + mode + "/" + size : "sweep/" + threshold;
                put(key, "stream " + label(size), variant, mibs, "MiB/s");
            }
            if (full && mode == ChannelConfig.Notification.SEND) {
                for (int size : SIZES) {
                    put("rtt/" + provider + "/" + size, "round trip " + label(size), variant, ringRtt(w, r, size),
                        "us");
                }
            }
            w.write(ChannelPeer.BYE, ByteBuffer.allocate(0), 10, TimeUnit.SECONDS);
            w.flush();
            child.waitFor(10, TimeUnit.SECONDS);
        } finally {
            child.destroyForcibly();
        }
    }

    private long ringMark(ChannelWriter w, ChannelReader r) throws Exception {
        w.write(ChannelPeer.MARK, ByteBuffer.allocate(0), 10, TimeUnit.SECONDS);
        w.flush();
        long[] got = {-1};
        while (got[0] < 0) {
            if (r.read((s, b, o, l, src) -> got[0] = b.getLong(o), 1, 30, TimeUnit.SECONDS) == 0) {
                throw new IllegalStateException("no MARK reply");
            }
        }
        return got[0];
    }

    /** Sends one record of the stream being measured. */
    private interface Send {
        void record() throws Exception;
    }

    /** Asks the peer how many records it counted since the last mark. */
    private interface Mark {
        long count() throws Exception;
    }

    /**
     * Streams records for the measuring time (after a warm-up round of half of it) and checks that the peer
     * counted every one.
     *
     * @return MiB/s of the measured round
     */
    private double stream(int size, String peer, Send send, Mark mark) throws Exception {
        double result = 0;
        for (int round = 0; round < 2; round++) {
            long sent = 0;
            long start = System.nanoTime();
            long end = start + (round == 0 ? measureNanos / 2 : measureNanos);
            while (System.nanoTime() < end) {
                for (int i = 0; i < 32; i++) {
                    send.record();
                }
                sent += 32;
            }
            long received = mark.count();
            double s = (System.nanoTime() - start) / 1e9;
            if (received != sent) {
                throw new IllegalStateException("sent " + sent + " records, " + peer + " counted " + received);
            }
            result = received * (double) size / s / (1 << 20);
        }
        return result;
    }

    private double ringStream(ChannelWriter w, ChannelReader r, int size) throws Exception {
        ByteBuffer payload = ByteBuffer.allocateDirect(size);
        return stream(size, "the peer", () -> {
            int at = w.claim(ChannelPeer.DATA, size, 10, TimeUnit.SECONDS);
            w.buffer().put(at, payload, 0, size);
            w.commit();
        }, () -> ringMark(w, r));
    }

    private double ringRtt(ChannelWriter w, ChannelReader r, int size) throws Exception {
        ByteBuffer payload = ByteBuffer.allocateDirect(size);
        int iterations = quick ? 300 : 2000;
        long[] t = new long[iterations];
        boolean[] got = new boolean[1];
        for (int i = -iterations / 4; i < iterations; i++) {
            long t0 = System.nanoTime();
            int at = w.claim(ChannelPeer.PING, size, 10, TimeUnit.SECONDS);
            w.buffer().put(at, payload, 0, size);
            w.commit();
            w.flush();
            got[0] = false;
            while (!got[0]) {
                if (r.read((s, b, o, l, src) -> got[0] = true, 1, 10, TimeUnit.SECONDS) == 0) {
                    throw new IllegalStateException("no echo");
                }
            }
            if (i >= 0) {
                t[i] = System.nanoTime() - t0;
            }
        }
        Arrays.sort(t);
        return t[iterations / 2] / 1e3;
    }

    // ------------------------------------------------------------------ NIO baseline

    private void nio() throws Exception {
        System.out.println("NIO socket stream baseline (blocking, TCP loopback, 64 KiB buffers)");
        Process child = spawn(NioPeer.class.getName());
        try (SocketChannel ch = SocketChannel.open()) {
            String[] hp = address(child).split(":");
            ch.connect(new InetSocketAddress(hp[0], Integer.parseInt(hp[1])));
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            ByteBuffer out = ByteBuffer.allocateDirect(64 << 10).order(ByteOrder.LITTLE_ENDIAN);
            ByteBuffer in = ByteBuffer.allocateDirect(1 << 20).order(ByteOrder.LITTLE_ENDIAN);
            in.limit(0);
            for (int size : SIZES) {
                put("nio/" + size, "stream " + label(size), "nio-socket", nioStream(ch, out, in, size), "MiB/s");
            }
            for (int size : SIZES) {
                put("niortt/" + size, "round trip " + label(size), "nio-socket", nioRtt(ch, out, in, size), "us");
            }
            out.clear();
            out.putInt(0).putInt(ChannelPeer.BYE).flip();
            ch.write(out);
            child.waitFor(10, TimeUnit.SECONDS);
        } finally {
            child.destroyForcibly();
        }
    }

    private static void send(SocketChannel ch, ByteBuffer out) throws IOException {
        out.flip();
        while (out.hasRemaining()) {
            ch.write(out);
        }
        out.clear();
    }

    private static void record(SocketChannel ch, ByteBuffer out, int stream, ByteBuffer payload, int size)
        throws IOException {
        if (out.remaining() < 8 + size) {
            send(ch, out);
        }
        if (out.remaining() < 8 + size) {
            ByteBuffer big = ByteBuffer.allocate(8 + size).order(ByteOrder.LITTLE_ENDIAN);
            big.putInt(size).putInt(stream).put(payload.duplicate().limit(size)).flip();
            while (big.hasRemaining()) {
                ch.write(big);
            }
            return;
        }
        out.putInt(size).putInt(stream);
        out.put(payload.duplicate().position(0).limit(size));
    }

    private long nioMark(SocketChannel ch, ByteBuffer out, ByteBuffer in) throws IOException {
        record(ch, out, ChannelPeer.MARK, ByteBuffer.allocate(0), 0);
        send(ch, out);
        NioPeer.fill(ch, in, 16);
        long n = in.getLong(in.position() + 8);
        in.position(in.position() + 16);
        return n;
    }

    private double nioStream(SocketChannel ch, ByteBuffer out, ByteBuffer in, int size) throws Exception {
        ByteBuffer payload = ByteBuffer.allocateDirect(size);
        return stream(size, "the NIO peer", () -> record(ch, out, ChannelPeer.DATA, payload, size),
            () -> nioMark(ch, out, in));
    }

    private double nioRtt(SocketChannel ch, ByteBuffer out, ByteBuffer in, int size) throws IOException {
        ByteBuffer payload = ByteBuffer.allocateDirect(size);
        int iterations = quick ? 300 : 2000;
        long[] t = new long[iterations];
        for (int i = -iterations / 4; i < iterations; i++) {
            long t0 = System.nanoTime();
            record(ch, out, ChannelPeer.PING, payload, size);
            send(ch, out);
            NioPeer.fill(ch, in, 8 + size);
            in.position(in.position() + 8 + size);
            if (i >= 0) {
                t[i] = System.nanoTime() - t0;
            }
        }
        Arrays.sort(t);
        return t[iterations / 2] / 1e3;
    }

    // ------------------------------------------------------------------ comparisons and chart

    private void compare(int[] sweep) {
        for (int size : SIZES) {
            for (String provider : List.of("shm", "tcp")) {
                report.higherIsBetter(provider + " ring " + label(size) + " stream vs NIO socket",
                    values.get("ring/" + provider + "/SEND/" + size), values.get("nio/" + size), "MiB/s",
                    provider.equals("shm") && size == (64 << 10) ? ">= 2x" : null);
            }
        }
        report.higherIsBetter("shm ring 64 KiB stream vs memcpy", values.get("ring/shm/SEND/" + (64 << 10)),
            values.get("memcpy/" + (64 << 10)), "MiB/s", ">= 0.5x");
        for (int size : SIZES) {
            for (String provider : List.of("shm", "tcp")) {
                report.lowerIsBetter(provider + " ring " + label(size) + " round trip vs NIO socket",
                    values.get("rtt/" + provider + "/" + size), values.get("niortt/" + size), "us", null);
            }
        }
        for (String provider : List.of("shm", "tcp")) {
            report.higherIsBetter(provider + " 1 KiB stream: WRITE_WITH_IMM vs SEND notifications",
                values.get("ring/" + provider + "/WRITE_WITH_IMM/1024"), values.get("ring/" + provider + "/SEND/1024"),
                "MiB/s", null);
        }
        List<Report.Bar> big = new ArrayList<>();
        big.add(new Report.Bar("shm", values.get("ring/shm/SEND/" + (64 << 10)), false));
        big.add(new Report.Bar("shm imm", values.get("ring/shm/WRITE_WITH_IMM/" + (64 << 10)), false));
        big.add(new Report.Bar("tcp", values.get("ring/tcp/SEND/" + (64 << 10)), false));
        big.add(new Report.Bar("NIO socket", values.get("nio/" + (64 << 10)), true));
        big.add(new Report.Bar("memcpy", values.get("memcpy/" + (64 << 10)), true));
        report.panel(new Report.Panel("stream, 64 KiB records", "MiB/s", big));
        List<Report.Bar> small = new ArrayList<>();
        small.add(new Report.Bar("shm", values.get("ring/shm/SEND/1024"), false));
        small.add(new Report.Bar("shm imm", values.get("ring/shm/WRITE_WITH_IMM/1024"), false));
        small.add(new Report.Bar("tcp", values.get("ring/tcp/SEND/1024"), false));
        small.add(new Report.Bar("NIO socket", values.get("nio/1024"), true));
        report.panel(new Report.Panel("stream, 1 KiB records", "MiB/s", small));
        List<Report.Bar> rtt = new ArrayList<>();
        rtt.add(new Report.Bar("shm", values.get("rtt/shm/32"), false));
        rtt.add(new Report.Bar("tcp", values.get("rtt/tcp/32"), false));
        rtt.add(new Report.Bar("NIO socket", values.get("niortt/32"), true));
        report.panel(new Report.Panel("round trip, 32 B, p50", "us, lower is better", rtt));
        List<Report.Bar> sw = new ArrayList<>();
        for (int t : sweep) {
            sw.add(new Report.Bar(label(t), values.get("sweep/" + t), false));
        }
        report.panel(new Report.Panel("shm 1 KiB stream by batch threshold", "MiB/s", sw));
    }
}
