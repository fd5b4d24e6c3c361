package io.rdmx.bench.shuffle;

import java.util.Locale;

/**
 * {@code rdmx demo}: the synthetic shuffle with 4 processes x 2 workers on the embedded default (shm), verified
 * exactly-once, with progress output; then the same plan on the sockets middleware for comparison. Each run has a
 * warm-up pass and untimed passes until the JIT is quiet in the same processes before its timed passes
 * ({@link ShuffleRunner#warmUpRule()}).
 */
public final class ShuffleDemo {
    private ShuffleDemo() {
    }

    /**
     * @param args optional rows per process
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        long rows = args.length > 0 ? Long.parseLong(args[0]) : 2_000_000;
        long warm = Math.min(rows, 300_000);
        System.out.println("rdmx demo: synthetic two-stage shuffle, 4 processes x 2 workers, " + rows
            + " integers per process (after a warm-up pass of " + warm + ")");
        System.out.println("  [1/2] rdmx ring channels over shm (one-sided WRITEs into shared memory)");
        ShuffleRunner.Run shm = ShuffleRunner.run("shm", 4, 2, rows, 64 << 10, 16 << 10, warm, System.out);
        System.out.printf(Locale.ROOT, "  shm: %.2f s, %.0f rows/s, %.1f CPU ns/row, %d GCs; every row delivered "
            + "exactly once (counts and checksums of both stages verified)%n", shm.seconds(), shm.rowsPerSecond(),
            shm.cpuNanosPerRow(), shm.gcCount());
        System.out.println("  [2/2] sockets middleware baseline (java.nio, copies into incoming buffers)");
        ShuffleRunner.Run sock = ShuffleRunner.run("sockets", 4, 2, rows, 64 << 10, 16 << 10, warm, System.out);
        System.out.printf(Locale.ROOT, "  sockets: %.2f s, %.0f rows/s, %.1f CPU ns/row, %d GCs; verified%n",
            sock.seconds(), sock.rowsPerSecond(), sock.cpuNanosPerRow(), sock.gcCount());
        System.out.printf(Locale.ROOT, "OK: rdmx shm took %.2f s, sockets %.2f s: %.2fx %s%n", shm.seconds(),
            sock.seconds(), sock.seconds() / shm.seconds(), sock.seconds() >= shm.seconds() ? "faster" : "SLOWER");
        System.exit(0);
    }
}
