package io.rdmx.spark;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The serving side's CPU per GiB fetched between two executors' endpoints in one JVM, by READ and by RPC fetch, on
 * one provider: what {@code bench spark --quick} cannot show (its jobs move 16 MB, less than the serving threads'
 * idle wake-ups cost over a job). Not a test: {@code java -cp ... io.rdmx.spark.ServingCpuProbe [shm|tcp] [GiB]}.
 * Prints, per mode, the CPU of the serving executor's threads ({@code blocks-serve-*}) while fetching, the same
 * threads' CPU over an idle span as long, and the difference per GiB.
 */
public final class ServingCpuProbe {
    private ServingCpuProbe() {
    }

    private static long servingCpuNanos() {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long n = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().contains("blocks-serve-")) {
                long c = mx.getThreadCpuTime(t.getId());
                n += Math.max(0, c);
            }
        }
        return n;
    }

    /**
     * @param args provider (shm), GiB to fetch (1)
     * @throws Exception if a fetch fails
     */
    public static void main(String[] args) throws Exception {
        String provider = args.length > 0 ? args[0] : "shm";
        double gib = args.length > 1 ? Double.parseDouble(args[1]) : 1;
        Path dir = Files.createTempDirectory("serving-cpu-probe");
        ReadFetchTest.FileSource source = new ReadFetchTest.FileSource(dir);
        int blocks = 64;
        int blockBytes = 1 << 20;
        int[] sizes = new int[blocks];
        java.util.Arrays.fill(sizes, blockBytes);
        source.put(0, 1, sizes);
        int rounds = (int) Math.ceil(gib * (1L << 30) / ((long) blocks * blockBytes));
        for (String mode : List.of("auto", "rpc")) {
            RdmxShuffleConf conf = RdmxShuffleConf.from(Map.of(RdmxShuffleConf.PROVIDER_KEY, provider,
                RdmxShuffleConf.FETCH_KEY, mode)::get);
            try (RdmxEndpoints a = RdmxEndpoints.start(conf, "127.0.0.1", source);
                 RdmxEndpoints b = RdmxEndpoints.start(conf, "127.0.0.1", new ReadFetchTest.FileSource(dir))) {
                String target = b.choose("127.0.0.1", "a", a.advertisement());
                List<FetchBlock> list = new ArrayList<>();
                for (int r = 0; r < blocks; r++) {
                    list.add(new FetchBlock("a", target, 0, 1, 0, r, blockBytes));
                }
                fetchAll(b, list); // warm-up (the location, connections, buffers)
                long c0 = servingCpuNanos();
                long t0 = System.nanoTime();
                long bytes = 0;
                for (int i = 0; i < rounds; i++) {
                    bytes += fetchAll(b, list);
                }
                long span = System.nanoTime() - t0;
                long busy = servingCpuNanos() - c0;
                long c1 = servingCpuNanos();
                Thread.sleep(Math.max(1, span / 1_000_000));
                long idle = servingCpuNanos() - c1;
                double g = bytes / (double) (1L << 30);
                System.out.printf(Locale.ROOT, "provider=%s fetch=%s GiB=%.2f wallMs=%d servingCpuMs=%.1f"
                    + " idleCpuMsSameSpan=%.1f servingCpuSecPerGiB=%.4f aboveIdleSecPerGiB=%.4f read=%d rpc=%d%n",
                    provider, mode, g, span / 1_000_000, busy / 1e6, idle / 1e6, busy / 1e9 / g,
                    Math.max(0, busy - idle) / 1e9 / g, b.readFetches(), b.rpcFetches());
            }
        }
    }

    private static long fetchAll(RdmxEndpoints b, List<FetchBlock> list) throws Exception {
        long n = 0;
        try (BlockFetcher f = new BlockFetcher(b::call, b::release, list, 48L << 20, 64, b.fetchChunkBytes(),
            Duration.ofSeconds(30))) {
            while (f.hasNext()) {
                FetchedBlock got = f.next();
                n += got.length();
                f.release(got);
            }
        }
        return n;
    }
}
