package io.rdmx.bench.shuffle;

import io.rdmx.shuffle.Exchange;
import io.rdmx.shuffle.Routing;
import io.rdmx.shuffle.RowView;
import io.rdmx.shuffle.ShuffleConfig;
import io.rdmx.shuffle.ShuffleService;
import io.rdmx.shuffle.Worker;
import io.rdmx.transport.RdmxException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The shuffle's row path in steady state, for {@code -prof gc}: one thread offers int rows ({@link Worker#offerInt},
 * packed many to a record), another polls them into an int handler. {@code local}: two workers of one process
 * (the in-memory rings); {@code shm}: two processes' services in this JVM over the shm provider. An op is one
 * offer (at most a bounded number of retries while back-pressured) or one poll; {@code gc.alloc.rate.norm}
 * near 0 shows that neither allocates per row.
 *
 * <pre>{@code java -cp bench/target/benchmarks.jar org.openjdk.jmh.Main ShuffleRowsBenchmark -prof gc}</pre>
 */
@State(Scope.Group)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class ShuffleRowsBenchmark {
    /** Which path rows take. */
    @Param({"local", "shm"})
    public String path;

    private ShuffleService a;
    private ShuffleService b;
    private Worker sender;
    private Worker receiver;
    private Exchange<RowView> out;
    private int next;
    private long sum;

    /**
     * Opens the services and registers the receiver's handler.
     *
     * @throws Exception on failure
     */
    @Setup(Level.Trial)
    public void open() throws Exception {
        String job = "jmh" + ProcessHandle.current().pid();
        if (path.equals("local")) {
            a = ShuffleService.open(ShuffleConfig.builder(0, 1, 2).job(job).build());
            out = a.intExchange(1, Routing.gather(0));
            sender = a.worker(1);
            receiver = a.worker(0);
            receiver.consumeInts(out, this::take);
        } else {
            CompletableFuture<ShuffleService> r1 = CompletableFuture.supplyAsync(() -> {
                try {
                    return ShuffleService.open(ShuffleConfig.builder(1, 2, 1).job(job).build());
                } catch (RdmxException e) {
                    throw new IllegalStateException(e);
                }
            });
            a = ShuffleService.open(ShuffleConfig.builder(0, 2, 1).job(job).build());
            b = r1.get(60, TimeUnit.SECONDS);
            out = a.intExchange(1, Routing.gather(1));
            Exchange<RowView> in = b.intExchange(1, Routing.gather(1));
            sender = a.worker(0);
            receiver = b.worker(0);
            receiver.consumeInts(in, this::take);
        }
    }

    private boolean take(int v) {
        sum += v;
        return true;
    }

    /** Closes the services. */
    @TearDown(Level.Trial)
    public void close() {
        a.close();
        if (b != null) {
            b.close();
        }
    }

    /**
     * @return the offer's code
     * @throws RdmxException if a peer is lost
     */
    @Benchmark
    @Group("rows")
    @GroupThreads(1)
    public int offer() throws RdmxException {
        int rc = sender.offerInt(out, next);
        for (int i = 0; rc == Worker.BACK_PRESSURED && i < 1000; i++) {
            sender.poll(); // nothing arrives for the sender: emits its packs and flushes
            rc = sender.offerInt(out, next);
        }
        if (rc == Worker.OK) {
            next++;
        }
        return rc;
    }

    /**
     * @return records delivered
     * @throws RdmxException if a peer is lost
     */
    @Benchmark
    @Group("rows")
    @GroupThreads(1)
    public int poll() throws RdmxException {
        return receiver.poll();
    }
}
