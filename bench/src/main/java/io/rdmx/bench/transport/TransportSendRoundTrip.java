package io.rdmx.bench.transport;

import io.rdmx.transport.Access;
import io.rdmx.transport.Completion;
import io.rdmx.transport.Connection;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Region;
import io.rdmx.transport.WorkRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * SEND round trip per provider: the client SENDs {@code size} bytes, an echo thread on the server node SENDs
 * them back, the client waits for its RECV completion (sleeping on the completion channel).
 */
@State(Scope.Benchmark)
public class TransportSendRoundTrip {
    /** Provider under test. */
    @Param({"loopback", "shm", "tcp"})
    public String provider;

    /** Message size. */
    @Param({"64"})
    public int size;

    private Node server;
    private Node client;
    private Connection c2s;
    private Region buf;
    private WorkRequest send;
    private WorkRequest recv;
    private Thread echo;
    private volatile boolean running;
    private final List<Completion> got = new ArrayList<>();

    /**
     * Opens the nodes and starts the echo thread.
     *
     * @throws Exception on failure
     */
    @Setup
    public void setUp() throws Exception {
        String id = Long.toString(ProcessHandle.current().pid());
        server = Fabrics.get(provider).open(NodeOptions.builder().name("rtt-server-" + id).build());
        client = Fabrics.get(provider).open(NodeOptions.builder().name("rtt-client-" + id).build());
        c2s = client.connect(server.address(), Duration.ofSeconds(10));
        Connection s2c = server.accept(Duration.ofSeconds(10));
        Region sbuf = server.register(size * 64, Access.ALL);
        for (int i = 0; i < 32; i++) {
            s2c.post(WorkRequest.recv(sbuf, i * size, size).wrId(i));
        }
        buf = client.register(size * 2, Access.ALL);
        send = WorkRequest.send(buf, 0, size);
        recv = WorkRequest.recv(buf, size, size);
        running = true;
        echo = new Thread(() -> {
            List<Completion> cs = new ArrayList<>();
            try {
                while (running) {
                    cs.clear();
                    server.completionQueue().await(cs::add, 32, 100, TimeUnit.MILLISECONDS);
                    for (Completion k : cs) {
                        if (k.opcode() == Opcode.RECV && k.ok()) {
                            int slot = (int) k.wrId();
                            s2c.post(WorkRequest.send(sbuf, slot * size, size).wrId(-1));
                            s2c.post(WorkRequest.recv(sbuf, slot * size, size).wrId(slot));
                        }
                    }
                }
            } catch (Exception e) {
                if (running) {
                    throw new IllegalStateException(e);
                }
            }
        }, "rtt-echo");
        echo.setDaemon(true);
        echo.start();
    }

    /**
     * Stops the echo thread and closes the nodes.
     *
     * @throws InterruptedException if interrupted
     */
    @TearDown
    public void tearDown() throws InterruptedException {
        running = false;
        echo.join(5000);
        client.close();
        server.close();
    }

    /**
     * One round trip.
     *
     * @param switches the process's context switches and CPU time, and the round trips counted here
     * @return the RECV's length (consumed by JMH)
     * @throws Exception on failure
     */
    @Benchmark
    public int roundTrip(Switches switches) throws Exception {
        switches.roundTrips++;
        c2s.post(recv);
        c2s.post(send);
        while (true) {
            got.clear();
            if (client.completionQueue().await(got::add, 4, 10, TimeUnit.SECONDS) == 0) {
                throw new RdmxException("no echo within 10 s");
            }
            for (Completion k : got) {
                if (k.opcode() == Opcode.RECV) {
                    return k.byteLength();
                }
            }
        }
    }
}
