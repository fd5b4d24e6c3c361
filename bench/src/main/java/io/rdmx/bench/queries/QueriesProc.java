package io.rdmx.bench.queries;

import io.rdmx.shuffle.ShuffleService;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * One process of a query run: joins the shuffle, generates the TPC-C rows its workers own, prints
 * {@code READY rows}, then for every {@code RUN query run} line on stdin runs that query's plan on all its workers
 * and prints {@code DONE query run nanos [answer-digest]} (the digest from the process of worker 0), until
 * {@code EXIT}. The runner starts each query in every process at once and waits for all, so queries never overlap.
 */
public final class QueriesProc {
    private QueriesProc() {
    }

    /**
     * @param args provider rank processes workers warehouses members(or -) job
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        String provider = args[0];
        int rank = Integer.parseInt(args[1]);
        int processes = Integer.parseInt(args[2]);
        int workers = Integer.parseInt(args[3]);
        int warehouses = Integer.parseInt(args[4]);
        List<String> members = args[5].equals("-") ? null : List.of(args[5].split(","));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        ExecutorService pool = Executors.newFixedThreadPool(workers, r -> new Thread(r, "query-worker"));
        try (ShuffleService svc = Shuffles.open(provider, rank, processes, workers, members, args[6])) {
            Tpcc.Tables[] mine = new Tpcc.Tables[workers];
            long rows = 0;
            for (int i = 0; i < workers; i++) {
                mine[i] = Tpcc.generate(warehouses, rank * workers + i, processes * workers);
                rows += mine[i].rows();
            }
            System.out.println("READY " + rows);
            System.out.flush();
            String line;
            while ((line = in.readLine()) != null && line.startsWith("RUN ")) {
                String[] f = line.split(" ");
                int query = Integer.parseInt(f[1]);
                int run = Integer.parseInt(f[2]);
                QueryPlans plan = new QueryPlans(svc, query, run);
                long t0 = System.nanoTime();
                List<Future<String>> parts = new ArrayList<>();
                for (int i = 0; i < workers; i++) {
                    int local = i;
                    parts.add(pool.submit(() -> plan.run(svc.worker(local), mine[local])));
                }
                String answer = null;
                for (Future<String> p : parts) {
                    String a = p.get(10, TimeUnit.MINUTES);
                    answer = a != null ? a : answer;
                }
                long nanos = System.nanoTime() - t0;
                plan.release(svc);
                System.out.println("DONE " + query + " " + run + " " + nanos
                    + (answer != null ? " " + TpccQueries.digest(answer) : ""));
                System.out.flush();
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
