package io.rdmx.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An engine without a network thread ({@code rdmx.channel.engineThread=false}): the application's threads run
 * its duty cycle ({@link ChannelEngine#doWork()}), blocked readers, writers and handshakes among them. Runs on
 * shm and loopback here; a provider's own module re-runs it with a subclass that hides {@link #providers()} and
 * {@link #socketProviders()} (rdmx-tcp: {@code TcpAgentEngineTest}).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public class AgentEngineTest {
    /** @return the providers every test runs on */
    static Stream<String> providers() {
        return Stream.of("shm", "loopback");
    }

    /** @return the providers with an I/O thread of their own (the flush-scan test) */
    static Stream<String> socketProviders() {
        return Stream.of("shm");
    }

    private static final AtomicInteger SEQ = new AtomicInteger();
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    private ChannelEngine engine(String provider, String role) throws Exception {
        Node n = Fabrics.get(provider).open(NodeOptions.builder().name("agent-" + role + "-"
            + ProcessHandle.current().pid() + "-" + SEQ.incrementAndGet()).build());
        closeables.add(n);
        ChannelEngine e = ChannelEngine.open(n, ChannelConfig.builder(1).engineThread(false).build());
        closeables.add(e);
        return e;
    }

    private static boolean networkThreadOf(ChannelEngine e) {
        String name = "rdmx-channel-" + e.node().name();
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().equals(name));
    }

    @ParameterizedTest
    @MethodSource("providers")
    void blockedApplicationThreadsRunTheDutyCycle(String provider) throws Exception {
        ChannelEngine a = engine(provider, "a");
        ChannelEngine b = engine(provider, "b");
        assertFalse(networkThreadOf(a) || networkThreadOf(b), "no network thread");
        // the handshake completes although nobody but the connecting and accepting threads runs the engines
        java.util.concurrent.CompletableFuture<PeerChannel> accepted = java.util.concurrent.CompletableFuture
            .supplyAsync(() -> {
                try {
                    return b.accept(Duration.ofSeconds(30));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
        PeerChannel ab = a.connect(b.node().address(), Duration.ofSeconds(30));
        PeerChannel ba = accepted.get(30, TimeUnit.SECONDS);
        int records = 20_000;
        AtomicLong next = new AtomicLong();
        AtomicInteger ends = new AtomicInteger();
        Thread reader = new Thread(() -> {
            try {
                while (ends.get() == 0) {
                    b.reader(0).read(new RecordHandler() {
                        @Override
                        public void onRecord(int s, ByteBuffer buf, int o, int l, RecordSource src) {
                            assertEquals(next.getAndIncrement(), buf.getLong(o));
                        }

                        @Override
                        public void onEndOfStream(RecordSource src) {
                            ends.incrementAndGet();
                        }
                    }, 256, 10, TimeUnit.SECONDS);
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, "agent-reader");
        reader.start();
        ChannelWriter w = ab.writer(0, 0);
        ByteBuffer rec = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
        for (long i = 0; i < records; i++) {
            rec.putLong(0, i);
            w.write(1, rec, 10, TimeUnit.SECONDS); // blocks for credits: runs a's duty cycle meanwhile
        }
        w.finish(10, TimeUnit.SECONDS);
        // the writer's engine needs its duty cycle too until the reader has everything (completions, credits)
        while (reader.isAlive()) {
            a.doWork();
            reader.join(1);
        }
        assertEquals(records, next.get(), "every record, in order");
        assertEquals(1, ends.get());
        assertTrue(ba.isOpen());
        assertFalse(networkThreadOf(a) || networkThreadOf(b), "still no network thread");
    }

    @ParameterizedTest
    @MethodSource("socketProviders")
    void theFlushScanRunsInTheApplicationsDutyCycle(String provider) throws Exception {
        ChannelEngine a = engine(provider, "a");
        ChannelEngine b = engine(provider, "b");
        java.util.concurrent.CompletableFuture<PeerChannel> accepted = java.util.concurrent.CompletableFuture
            .supplyAsync(() -> {
                try {
                    return b.accept(Duration.ofSeconds(30));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
        PeerChannel ab = a.connect(b.node().address(), Duration.ofSeconds(30));
        accepted.get(30, TimeUnit.SECONDS);
        // one small record, below the batching threshold and never flushed by the application
        assertTrue(ab.writer(0, 0).offer(7, ByteBuffer.allocate(16)));
        AtomicInteger got = new AtomicInteger();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        int work = 0;
        while (got.get() == 0 && System.nanoTime() < deadline) {
            work += a.doWork(); // the writer's engine: its scan flushes what waited a flush interval
            b.doWork();
            b.reader(0).poll((s, buf, o, l, src) -> got.set(s), 1);
        }
        assertEquals(7, got.get(), "the scan of the application-driven duty cycle flushed the record");
        assertTrue(work > 0, "doWork reported the scan it ran");
    }
}
