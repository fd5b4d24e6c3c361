// A one-way stream of WRITEs between two tcp nodes of one JVM, run as a single source file
// (java -cp bench/target/benchmarks.jar scripts/TcpStreamProbe.java SIZE MIB): what the receive side did per MiB,
// from the connections' own counters, for issue 40's "what each change removed per batch".
//   SIZE  bytes per WRITE (16 in flight, each signaled)
//   MIB   MiB per pass; two passes, the second printed alone as "pass 1" (the first warms the JIT)
// Prints per pass: GiB/s (wall), process CPU seconds per GiB, payload MiB copied through the receiver's read
// buffer ("staged") and read from the socket straight into the region ("direct"), the receiver's read and the
// sender's write system calls per MiB. Counters a build lacks print as 0.
import io.rdmx.transport.Access;
import io.rdmx.transport.Connection;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Post;
import io.rdmx.transport.Region;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.WorkRequest;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

public final class TcpStreamProbe {
    private static final int REGION = 4 << 20;
    private static final int WINDOW = 16;

    private TcpStreamProbe() {
    }

    private static long counter(Object o, String name) {
        try {
            return (long) o.getClass().getMethod(name).invoke(o);
        } catch (ReflectiveOperationException e) {
            return 0;
        }
    }

    public static void main(String[] args) throws Exception {
        int size = Integer.parseInt(args[0]);
        long total = Long.parseLong(args[1]) << 20;
        if (size <= 0 || size > REGION) {
            throw new IllegalArgumentException("SIZE=" + size + " must be 1 to " + REGION);
        }
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        Fabric f = Fabrics.get("tcp");
        try (Node server = f.open(NodeOptions.builder().name("probe-server").build());
             Node client = f.open(NodeOptions.builder().name("probe-client").build())) {
            Region inbox = server.register(REGION, Access.ALL, "inbox");
            Region data = client.register(REGION, Access.LOCAL_WRITE);
            Connection c = client.connect(server.address(), Duration.ofSeconds(5));
            Connection back = server.accept(Duration.ofSeconds(5));
            RemoteRegion target = c.remoteRegion("inbox");
            long n = Math.max(1, total / size);
            for (int pass = 0; pass < 2; pass++) {
                long staged = counter(back, "payloadBytesStaged");
                long direct = counter(back, "payloadBytesDirect");
                long reads = counter(back, "socketReads");
                long writes = counter(c, "socketWrites");
                long cpu = os.getProcessCpuTime();
                long t0 = System.nanoTime();
                long posted = 0;
                long done = 0;
                long[] got = new long[1];
                while (done < n) {
                    while (posted < n && posted - done < WINDOW) {
                        long off = (posted * size) % (REGION - size + 1);
                        if (c.post(WorkRequest.write(data, 0, size, target, off)) != Post.OK) {
                            break;
                        }
                        posted++;
                    }
                    got[0] = 0;
                    client.completionQueue().await(k -> {
                        if (!k.ok()) {
                            throw new IllegalStateException("WRITE failed: " + k);
                        }
                        got[0]++;
                    }, 64, 5, TimeUnit.SECONDS);
                    done += got[0];
                }
                double mib = (double) n * size / (1 << 20);
                System.out.printf(Locale.ROOT, "pass %d, %d B WRITEs: %.2f GiB/s, CPU %.3f s/GiB, staged %d MiB, "
                    + "direct %d MiB, reads/MiB %.2f, writes/MiB %.2f%n", pass, size,
                    mib / 1024 / ((System.nanoTime() - t0) / 1e9), (os.getProcessCpuTime() - cpu) / 1e9 / (mib / 1024),
                    (counter(back, "payloadBytesStaged") - staged) >> 20,
                    (counter(back, "payloadBytesDirect") - direct) >> 20,
                    (counter(back, "socketReads") - reads) / mib, (counter(c, "socketWrites") - writes) / mib);
            }
            data.release();
            inbox.release();
        }
    }
}
