package io.rdmx.bench.transport;

import io.rdmx.transport.Access;
import io.rdmx.transport.Connection;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Post;
import io.rdmx.transport.PreparedRequest;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Region;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * One-sided WRITE bandwidth per provider: a window of {@value #WINDOW} WRITEs of {@code size} bytes in flight,
 * re-posted through a prepared request, then drained. Score: WRITEs per second.
 */
@State(Scope.Benchmark)
public class TransportWriteBandwidth {
    /** WRITEs in flight per invocation. */
    public static final int WINDOW = 16;

    /** Provider under test. */
    @Param({"loopback", "shm", "tcp"})
    public String provider;

    /** Bytes per WRITE. */
    @Param({"65536"})
    public int size;

    private Node server;
    private Node client;
    private PreparedRequest write;
    private int drained;

    /**
     * Opens two nodes and prepares the WRITE.
     *
     * @throws Exception on failure
     */
    @Setup
    public void setUp() throws Exception {
        String id = Long.toString(ProcessHandle.current().pid());
        server = Fabrics.get(provider).open(NodeOptions.builder().name("bw-server-" + id).build());
        client = Fabrics.get(provider).open(NodeOptions.builder().name("bw-client-" + id).build());
        Region target = server.register(size * WINDOW, Access.ALL);
        Region src = client.register(size * WINDOW, Access.ALL);
        Connection c = client.connect(server.address(), Duration.ofSeconds(10));
        Connection back = server.accept(Duration.ofSeconds(10));
        write = c.prepare(io.rdmx.transport.WorkRequest.write(src, 0, size, target.descriptor(back), 0));
    }

    /** Closes the nodes. */
    @TearDown
    public void tearDown() {
        client.close();
        server.close();
    }

    /**
     * Posts a window of WRITEs and waits for their completions.
     *
     * @return completions drained (consumed by JMH)
     * @throws Exception on failure
     */
    @Benchmark
    @OperationsPerInvocation(WINDOW)
    public int writeWindow() throws Exception {
        for (int i = 0; i < WINDOW; i++) {
            if (write.post(i, i * size, size, (long) i * size) != Post.OK) {
                throw new RdmxException("send queue full");
            }
        }
        int got = 0;
        while (got < WINDOW) {
            int n = client.completionQueue().await(c -> {
                if (!c.ok()) {
                    throw new IllegalStateException(String.valueOf(c));
                }
            }, WINDOW, 10, TimeUnit.SECONDS);
            if (n == 0) {
                throw new RdmxException("no completion within 10 s");
            }
            got += n;
        }
        drained += got;
        return drained;
    }
}
