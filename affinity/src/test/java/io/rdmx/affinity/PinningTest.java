package io.rdmx.affinity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

/** Real pinning through JNA, checked in /proc; errors; the binding cache; tuned defaults. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class PinningTest {
    static String allowedList(int tid) throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/self/task/" + tid + "/status"))) {
            if (line.startsWith("Cpus_allowed_list:")) {
                return line.substring("Cpus_allowed_list:".length()).trim();
            }
        }
        throw new AssertionError("no Cpus_allowed_list for tid " + tid);
    }

    private static <T> T inNewThread(java.util.concurrent.Callable<T> c) throws Exception {
        CompletableFuture<T> f = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                f.complete(c.call());
            } catch (Throwable e) {
                f.completeExceptionally(e);
            }
        });
        t.start();
        return f.get(20, TimeUnit.SECONDS);
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    void pinsTheCallingThreadAsProcSeesIt() throws Exception {
        String seen = inNewThread(() -> {
            CpuSet before = Affinity.getCurrentThread();
            int last = before.max();
            Affinity.setCurrentThread(CpuSet.of(last));
            String s = allowedList(Affinity.tid());
            assertEquals(CpuSet.of(last), Affinity.getCurrentThread());
            Affinity.setCurrentThread(before);
            assertEquals(before.toString(), allowedList(Affinity.tid()));
            return s + "|" + last;
        });
        String[] parts = seen.split("\\|");
        assertEquals(parts[1], parts[0]);
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    void impossibleSetIsRefusedWithEinvalAndChangesNothing() throws Exception {
        String after = inNewThread(() -> {
            String before = allowedList(Affinity.tid());
            AffinityException e = assertThrows(AffinityException.class,
                () -> Affinity.setCurrentThread(CpuSet.of(4000)));
            assertEquals(Affinity.EINVAL, e.errno());
            assertTrue(e.getMessage().contains("EINVAL") && e.getMessage().contains("cpus=4000"), e.getMessage());
            assertThrows(AffinityException.class, () -> Affinity.setCurrentThread(CpuSet.of()));
            return before + "=" + allowedList(Affinity.tid());
        });
        String[] p = after.split("=");
        assertEquals(p[0], p[1]);
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    void aThreadIsPinnedOnceThenServedFromTheCache() throws Exception {
        BindingCache cache = new BindingCache();
        AtomicInteger computed = new AtomicInteger();
        String result = inNewThread(() -> {
            CpuSet mine = Affinity.getCurrentThread();
            CpuSet one = CpuSet.of(mine.toArray()[0]);
            for (int i = 0; i < 5; i++) {
                assertEquals(one, cache.bind(() -> {
                    computed.incrementAndGet();
                    return one;
                }));
            }
            return allowedList(Affinity.tid()) + "/" + one;
        });
        assertEquals(1, computed.get());
        assertEquals(1, cache.misses());
        assertEquals(4, cache.hits());
        String[] p = result.split("/");
        assertEquals(p[1], p[0]);
    }

    @Test
    void tunedDefaultsByArchitectureWithOverrides() {
        assertEquals(Tuning.Arch.X86_64, Tuning.detect("amd64"));
        assertEquals(Tuning.Arch.PPC64LE, Tuning.detect("ppc64le"));
        assertEquals(Tuning.Arch.AARCH64, Tuning.detect("aarch64"));
        assertEquals(Tuning.Arch.OTHER, Tuning.detect("riscv64"));
        Tuning power = new Tuning("ppc64le", 20, Map.of());
        assertEquals(OptionalInt.of(64 << 10), power.tunedDefault(Tuning.BATCH_THRESHOLD));
        assertEquals(OptionalInt.of(40), power.tunedDefault(Tuning.HANDLER_THREADS));
        assertEquals("ppc64le tuned default", power.effective(Tuning.RING_CAPACITY).source());
        assertEquals("RDMX_CHANNEL_BATCHTHRESHOLD", Tuning.envName(Tuning.BATCH_THRESHOLD));
        Tuning env = new Tuning("amd64", 2, Map.of("RDMX_CHANNEL_BATCHTHRESHOLD", "4096"));
        assertEquals(OptionalInt.of(4096), env.tunedDefault(Tuning.BATCH_THRESHOLD));
        assertEquals("environment $RDMX_CHANNEL_BATCHTHRESHOLD", env.effective(Tuning.BATCH_THRESHOLD).source());
        System.setProperty(Tuning.BATCH_THRESHOLD, "8192");
        try {
            assertEquals(8192, env.effective(Tuning.BATCH_THRESHOLD).value());
            assertTrue(env.effective(Tuning.BATCH_THRESHOLD).source().startsWith("system property"));
        } finally {
            System.clearProperty(Tuning.BATCH_THRESHOLD);
        }
        Tuning bad = new Tuning("amd64", 2, Map.of("RDMX_CHANNEL_RINGCAPACITY", "big"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> bad.tunedDefault(Tuning.RING_CAPACITY));
        assertTrue(e.getMessage().contains("RDMX_CHANNEL_RINGCAPACITY=big"), e.getMessage());
        assertEquals(OptionalInt.empty(), env.tunedDefault("rdmx.unknown"));
    }
}
