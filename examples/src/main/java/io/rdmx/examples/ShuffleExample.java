package io.rdmx.examples;

import io.rdmx.shuffle.Exchange;
import io.rdmx.shuffle.Routing;
import io.rdmx.shuffle.RowView;
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
 * its own rank; each of its workers sends 1000 int rows hashed over all workers and sums the rows it receives,
 * scheduling itself with the non-blocking offer/poll API.
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
            Exchange<RowView> byKey = svc.intExchange(1, Routing.byKey());  // int rows, hashed by value
            ExecutorService threads = Executors.newFixedThreadPool(cfg.workers());
            try {
                List<Future<Long>> sums = new ArrayList<>();
                for (int i = 0; i < cfg.workers(); i++) {
                    Worker w = svc.worker(i);                        // one thread per worker
                    sums.add(threads.submit(() -> {
                        long[] total = {0};
                        w.consumeInts(byKey, row -> {                // rows routed here, read in place
                            total[0] += row;
                            return true;                             // taken (false: offer it again later)
                        });
                        for (int r = 0; r < ROWS; r++) {             // packed many to a record
                            while (w.offerInt(byKey, w.globalIndex() * ROWS + r) == Worker.BACK_PRESSURED) {
                                w.poll();                            // buffer full: take rows in meanwhile
                            }
                        }
                        while (w.offerFinish(byKey) == Worker.BACK_PRESSURED) {  // end-of-stream to all
                            w.poll();
                        }
                        while (!w.done(byKey)) {                     // until every producer ended
                            if (w.poll() == 0) {                     // throws if a peer is lost
                                w.await(100, TimeUnit.MILLISECONDS); // nothing there: block
                            }
                        }
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
