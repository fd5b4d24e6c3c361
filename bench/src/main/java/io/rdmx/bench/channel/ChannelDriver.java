package io.rdmx.bench.channel;

import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The sending process of one case of {@code rdmx bench channel}: opens a {@link Link} to the peer process, streams
 * records of each size and times round trips, and prints one line per measurement for {@link ChannelBench}:
 *
 * <pre>
 * STREAM size records nanos cpuNanos contextSwitches   (cpu and switches: this process plus the peer, {@link ProcStat})
 *        warmUpNanos warmUpCompilerNanos                 (the warm-up before it, and both JIT's CPU in it)
 * RTT size samples p50Nanos p99Nanos contextSwitches cpuNanos   (both processes, over the measured samples)
 * DONE
 * </pre>
 *
 * Both processes are fresh JVMs per case, started with the same flags, so a case's idle strategy (a system
 * property read once, like {@code rdmx.channel.spinsBeforePark}) applies to both and nothing of an earlier case
 * (JIT, heap, threads) runs beside it.
 */
public final class ChannelDriver {
    private final Link link;
    private final long peerPid;
    private final long measureNanos;
    private final long rttNanos;
    private final long rttWarmNanos;

    private ChannelDriver(Link link, long peerPid, long measureNanos, long rttNanos, long rttWarmNanos) {
        this.link = link;
        this.peerPid = peerPid;
        this.measureNanos = measureNanos;
        this.rttNanos = rttNanos;
        this.rttWarmNanos = rttWarmNanos;
    }

    /**
     * @param args {@code kind address peerPid measureMillis rttMillis rttWarmMillis streamSizes rttSizes
     *     kind-args...}, sizes
     *     comma-separated (possibly {@code -} for none); kind {@code ring provider notification ringCapacity
     *     batchThreshold}, {@code nio blocking|busy-poll} or {@code aeron spin-shared|spin-invoker|backoff}
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        String address = args[1];
        long peerPid = Long.parseLong(args[2]);
        long measure = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(args[3]));
        long rtt = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(args[4]));
        long rttWarm = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(args[5]));
        int[] streamSizes = sizes(args[6]);
        int[] rttSizes = sizes(args[7]);
        String[] rest = Arrays.copyOfRange(args, 8, args.length);
        try (Link link = open(args[0], address, rest)) {
            ChannelDriver d = new ChannelDriver(link, peerPid, measure, rtt, rttWarm);
            for (int size : streamSizes) {
                d.stream(size);
            }
            for (int size : rttSizes) {
                d.roundTrip(size);
            }
            link.bye();
        }
        System.out.println("DONE");
        System.out.flush();
    }

    private static int[] sizes(String s) {
        return s.equals("-") ? new int[0] : Arrays.stream(s.split(",")).mapToInt(Integer::parseInt).toArray();
    }

    private static Link open(String kind, String address, String[] a) throws Exception {
        switch (kind) {
            case "ring":
                return new RingLink(a[0], address, ChannelPeer.config(a[1], Integer.parseInt(a[2]),
                    Integer.parseInt(a[3])));
            case "nio":
                return new NioLink(address, a[0].equals("busy-poll"));
            case "aeron":
                return new AeronLink(address, a[0]);
            default:
                throw new IllegalArgumentException("kind=" + kind + " is not ring, nio or aeron");
        }
    }

    private ProcStat both() {
        return ProcStat.of(ProcessHandle.current().pid()).plus(ProcStat.of(peerPid));
    }

    /** The longest warm-up, quiet or not. */
    static final long MAX_WARM_UP_NANOS = TimeUnit.SECONDS.toNanos(20);

    /** @return both processes' JIT compiler threads' CPU, nanoseconds, or -1 if it cannot be observed */
    private long compilers() {
        long mine = ProcStat.compilerNanos(ProcessHandle.current().pid());
        long peer = ProcStat.compilerNanos(peerPid);
        return mine < 0 || peer < 0 ? -1 : mine + peer;
    }

    /**
     * Streams records in warm-up slices of half the measuring time until two slices in a row in which both
     * processes' JIT compiler threads took at most {@link ProcStat#JIT_QUIET_SHARE} of their CPU (at most
     * {@link #MAX_WARM_UP_NANOS}): a fixed half second measured the compiler on the longer paths (2026-11-29:
     * the rdmx processes' compiler threads took a third to a half of their CPU samples in 2 s runs, the NIO
     * processes' 7%). One slice where the JIT cannot be observed ({@link ProcStat#compilerNanos} -1; the STREAM
     * line's compiler time is then -1). Then for the measuring time between two samples of both processes'
     * counters; each slice ends with a MARK, which checks that the peer counted every record.
     */
    private void stream(int size) throws Exception {
        // records between two clock reads: a clock read costs about as much as a few small records, so the small
        // records take 256 per read (the same for every link), the large ones 32
        int batch = size < 1024 ? 256 : 32;
        long warmStart = System.nanoTime();
        long warmCompile = 0;
        boolean observable = true;
        int quiet = 0;
        for (boolean warming = true; ; ) {
            long compileBefore = warming ? compilers() : 0; // not read around the measured slice
            ProcStat before = both();
            long sent = 0;
            long start = System.nanoTime();
            long end = warming ? Math.min(start + measureNanos / 2, warmStart + MAX_WARM_UP_NANOS)
                : start + measureNanos;
            while (System.nanoTime() < end) {
                for (int i = 0; i < batch; i++) {
                    link.data(size);
                }
                sent += batch;
            }
            long received = link.mark();
            long nanos = System.nanoTime() - start;
            if (received != sent) {
                throw new IllegalStateException("size=" + size + ": sent " + sent + " records, the peer counted "
                    + received);
            }
            ProcStat used = both().minus(before);
            if (!warming) {
                System.out.printf(Locale.ROOT, "STREAM %d %d %d %d %d %d %d%n", size, sent, nanos, used.cpuNanos(),
                    used.contextSwitches(), start - warmStart, observable ? warmCompile : -1);
                System.out.flush();
                return;
            }
            long compileAfter = compilers();
            if (compileBefore < 0 || compileAfter < 0) {
                observable = false; // one slice, as before the JIT was watched
            } else if (compileAfter < compileBefore) {
                quiet = 0; // a compiler thread went away: unknown, not quiet
            } else {
                warmCompile += compileAfter - compileBefore;
                quiet = ProcStat.jitQuiet(compileAfter - compileBefore, used.cpuNanos()) ? quiet + 1 : 0;
            }
            warming = observable && quiet < 2 && System.nanoTime() - warmStart < MAX_WARM_UP_NANOS;
        }
    }

    /**
     * Pings for the warm-up time (the JIT compiles the waiting paths of both processes: on this kind of machine a
     * round trip of the ring takes seconds of pinging to settle, the NIO one less), then records each round trip,
     * at most a million.
     */
    private void roundTrip(int size) throws Exception {
        long warmEnd = System.nanoTime() + rttWarmNanos;
        while (System.nanoTime() < warmEnd) {
            link.ping(size);
        }
        long[] t = new long[1 << 20];
        int n = 0;
        ProcStat before = both();
        long end = System.nanoTime() + rttNanos;
        for (long now = System.nanoTime(); now < end && n < t.length; n++) {
            link.ping(size);
            long after = System.nanoTime();
            t[n] = after - now;
            now = after;
        }
        ProcStat used = both().minus(before);
        Arrays.sort(t, 0, n);
        long p99 = t[(int) Math.min(n - 1, n * 99L / 100)];
        System.out.printf(Locale.ROOT, "RTT %d %d %d %d %d %d%n", size, n, t[n / 2], p99, used.contextSwitches(),
            used.cpuNanos());
        System.out.flush();
    }
}
