package io.rdmx.shuffle;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

/** P shuffle services in one JVM, joined concurrently, for tests. */
final class Cluster implements AutoCloseable {
    private static final AtomicInteger JOBS = new AtomicInteger();
    final List<ShuffleService> services = new ArrayList<>();
    final String job;

    Cluster(String t, int processes, int workers, UnaryOperator<ShuffleConfig.Builder> tweak)
        throws Exception {
        job = "t" + ProcessHandle.current().pid() + "-" + JOBS.incrementAndGet();
        List<String> members = t.equals("shm") || t.equals("loopback") ? List.of() : freePorts(processes);
        ExecutorService ex = Executors.newFixedThreadPool(processes);
        try {
            List<CompletableFuture<ShuffleService>> fs = new ArrayList<>();
            for (int r = 0; r < processes; r++) {
                ShuffleConfig cfg = tweak.apply(ShuffleConfig.builder(r, processes, workers).provider(t).job(job)
                    .members(members)).build();
                fs.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        return ShuffleService.open(cfg);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }, ex));
            }
            for (CompletableFuture<ShuffleService> f : fs) {
                services.add(f.get(60, TimeUnit.SECONDS));
            }
        } finally {
            ex.shutdown();
        }
    }

    static List<String> freePorts(int n) throws IOException {
        return Endpoints.freeLocal(n);
    }

    /** Runs one SPMD body per process concurrently and returns their results in rank order. */
    <R> List<R> spmd(Body<R> body) throws Exception {
        ExecutorService ex = Executors.newFixedThreadPool(services.size());
        try {
            List<CompletableFuture<R>> fs = new ArrayList<>();
            for (ShuffleService s : services) {
                fs.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        return body.run(s);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }, ex));
            }
            List<R> out = new ArrayList<>();
            for (CompletableFuture<R> f : fs) {
                out.add(f.get(120, TimeUnit.SECONDS));
            }
            return out;
        } finally {
            ex.shutdownNow();
        }
    }

    interface Body<R> {
        R run(ShuffleService s) throws Exception;
    }

    @Override
    public void close() {
        for (ShuffleService s : services) {
            s.close();
        }
    }
}
