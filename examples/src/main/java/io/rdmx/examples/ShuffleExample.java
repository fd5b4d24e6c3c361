package io.rdmx.examples;

import io.rdmx.shuffle.Exchange;
import io.rdmx.shuffle.Routing;
import io.rdmx.shuffle.RowSerializer;
import io.rdmx.shuffle.ShuffleConfig;
import io.rdmx.shuffle.ShuffleService;
import io.rdmx.shuffle.Worker;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * README's shuffle example: the part of an SPMD plan one process runs. Every process runs the same code with
 * its own rank; each of its workers sends 1000 rows hashed over all workers and sums the rows it receives.
 */
public final class ShuffleExample {
    /** Processes of the example. */
    public static final int PROCESSES = 2;
    /** Rows each worker sends. */
    public static final int ROWS = 1000;

    private ShuffleExample() {
    }

    /**
     * One process of the plan.
     *
     * @param rank this process's rank in [0, {@link #PROCESSES})
     * @param provider {@code shm} or {@code loopback} (others need {@code members}, one {@code host:port} per rank)
     * @return the sum of the rows this process's workers received
     * @throws Exception if a step fails
     */
    public static long process(int rank, String provider) throws Exception {
        // tag::shuffle[]
        ShuffleConfig cfg = ShuffleConfig.builder(rank, PROCESSES, 2).provider(provider).job("q7").build();
        try (ShuffleService svc = ShuffleService.open(cfg)) {
            Exchange<Integer> byKey = svc.exchange(1, Routing.hash(x -> x), RowSerializer.INT);
            ExecutorService threads = Executors.newFixedThreadPool(cfg.workers());
            try {
                List<Future<Long>> sums = new ArrayList<>();
                for (int i = 0; i < cfg.workers(); i++) {
                    Worker w = svc.worker(i);                        // one thread per worker
                    sums.add(threads.submit(() -> {
                        long[] total = {0};                          // lambdas may only read locals: use arrays
                        boolean[] sent = {false};
                        w.consume(byKey, row -> total[0] += row);    // rows routed to this worker, as they arrive
                        w.run(() -> {                                // local work, when no row is waiting
                            if (sent[0]) {
                                return false;                        // no local work left
                            }
                            for (int r = 0; r < ROWS; r++) {
                                w.send(byKey, w.globalIndex() * ROWS + r);
                            }
                            w.finish(byKey);                         // end-of-stream to every consumer
                            sent[0] = true;
                            return true;                             // did something
                        }, () -> sent[0] && w.done(byKey));          // done: every producer sent end-of-stream
                        return total[0];
                    }));
                }
                long sum = 0;
                for (Future<Long> f : sums) {
                    sum += f.get(60, TimeUnit.SECONDS);
                }
                return sum;
            } finally {
                threads.shutdownNow();
            }
        }
        // end::shuffle[]
    }
}
