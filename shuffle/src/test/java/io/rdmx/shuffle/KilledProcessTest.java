package io.rdmx.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.testsuite.Blocking;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** A process that dies mid-shuffle: the worker waiting on it gets an exception naming it within 5 s. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class KilledProcessTest {
    @ParameterizedTest
    @ValueSource(strings = {"shm", "tcp", "auto"})
    void workerWaitingOnAKilledProcessGetsAnExceptionNamingIt(String t) throws Exception {
        String job = "k" + ProcessHandle.current().pid() + t;
        List<String> endpoints = t.equals("shm") ? List.of() : Cluster.freePorts(2);
        String java = ProcessHandle.current().info().command().orElse("java");
        Process child = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
            "-Drdmx.leakDetection=disabled", ShuffleChild.class.getName(), t, job,
            endpoints.isEmpty() ? "-" : String.join(",", endpoints))
            .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        ShuffleConfig cfg = ShuffleConfig.builder(0, 2, 1).provider(t).job(job).members(endpoints).build();
        try (ShuffleService svc = ShuffleService.open(cfg)) {
            Exchange<Integer> ex = svc.exchange(1, Routing.hash(x -> x), RowSerializer.INT);
            Worker w = svc.worker(0);
            AtomicLong rows = new AtomicLong();
            w.consume(ex, x -> rows.incrementAndGet());
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(),
                StandardCharsets.UTF_8));
            assertEquals("SENT", out.readLine());
            Blocking.Call<Void> run = Blocking.start("worker-0", () -> {
                boolean[] fin = {false};
                w.run(() -> {
                    if (!fin[0]) {
                        fin[0] = true;
                        w.finish(ex);
                        return true;
                    }
                    return false;
                }, () -> fin[0] && w.done(ex));
                return null;
            });
            Blocking.awaitTrue("rows sent by rank 1 before its death are delivered", () -> rows.get() > 0,
                Duration.ofSeconds(10));
            // Worker.run waits for input in the transport's read; only then is it "a worker waiting on" rank 1.
            Blocking.awaitBlockedIn(run, "read", Duration.ofSeconds(10));
            child.destroyForcibly();
            Throwable e = run.failure(Duration.ofSeconds(5));
            assertInstanceOf(ConnectionClosedException.class, e, String.valueOf(e));
            assertTrue(e.getMessage().contains(cfg.nodeName(1)), e.getMessage());
            assertEquals(cfg.nodeName(1), ((ConnectionClosedException) e).peer());
        } finally {
            child.destroyForcibly();
            child.waitFor(10, TimeUnit.SECONDS);
        }
    }
}
