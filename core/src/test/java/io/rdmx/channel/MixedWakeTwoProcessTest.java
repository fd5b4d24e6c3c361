package io.rdmx.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.internal.Sleeper;
import java.nio.ByteBuffer;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Two processes ping-pong 32-byte records over a mapped shm channel, both parked between records (the default
 * idle strategy), the other process with futexes on or off: whichever mechanism each side sleeps with, the other
 * wakes it (a {@code FUTEX_WAKE} on the shared word; without futexes a byte on the sleeper's bell; a doorbell
 * message its engine turns into a local wake where neither works), and no round trip waits for a timeout. Where this JVM has futexes the counters show which one was used.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MixedWakeTwoProcessTest {
    private static final int ROUNDS = 2000;

    @ParameterizedTest(name = "other process with rdmx.futex={0}")
    @ValueSource(booleans = {true, false})
    void parkedPeersWakeEachOtherWhateverTheirMechanism(boolean childFutex) throws Exception {
        String name = "mixed-" + ProcessHandle.current().pid() + "-" + childFutex;
        try (Node node = Fabrics.get("shm").open(NodeOptions.builder().name(name).build());
             ChannelEngine engine = ChannelEngine.open(node, ChannelConfig.builder(1).idle(ChannelConfig.Idle.PARK)
                 .build())) {
            Process child = new ProcessBuilder(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-Drdmx.futex=" + childFutex, "-Drdmx.leakDetection=disabled",
                "-cp", System.getProperty("java.class.path"), Echo.class.getName(), node.address(), name + "-echo")
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
            try {
                PeerChannel peer = engine.accept(Duration.ofSeconds(60));
                ChannelWriter w = peer.writer(0, 0);
                ChannelReader r = engine.reader(0);
                ByteBuffer out = ByteBuffer.allocate(32).order(java.nio.ByteOrder.LITTLE_ENDIAN);
                AtomicLong echoed = new AtomicLong(-1);
                long sent0 = engine.metrics().notificationsSent();
                long wakes0 = engine.metrics().futexWakes();
                long bells0 = engine.metrics().bellWakes();
                for (long i = 0; i < ROUNDS; i++) {
                    out.clear();
                    out.putLong(0, i);
                    w.write(1, out, 10, TimeUnit.SECONDS);
                    w.flush();
                    int n = r.read((s, buf, o, l, src) -> echoed.set(buf.getLong(o)), 1, 10, TimeUnit.SECONDS);
                    assertEquals(1, n, "round " + i + ": no echo within 10 s (a lost wake-up)");
                    assertEquals(i, echoed.get());
                }
                long sent = engine.metrics().notificationsSent() - sent0;
                long wakes = engine.metrics().futexWakes() - wakes0;
                if (Sleeper.futexes() && childFutex) {
                    assertTrue(wakes > 0, "both sides on futexes: the child was woken by FUTEX_WAKE; wakes=" + wakes);
                    assertEquals(0, sent, "both sides on futexes: no doorbell message");
                } else {
                    long bells = engine.metrics().bellWakes() - bells0;
                    assertEquals(0, wakes, "the child parks without futexes: no FUTEX_WAKE for it");
                    assertTrue(bells > 0, "the child parks without futexes: its bell woke it; bells=" + bells);
                    assertEquals(0, sent, "the child sleeps on its bell: no doorbell message");
                }
            } finally {
                child.destroy();
                child.waitFor(30, TimeUnit.SECONDS);
            }
        }
    }

    /** The other process: echoes every record back to its sender. */
    public static final class Echo {
        private Echo() {
        }

        /**
         * @param args the parent's address and this node's name
         * @throws Exception on failure
         */
        public static void main(String[] args) throws Exception {
            try (Node node = Fabrics.get("shm").open(NodeOptions.builder().name(args[1]).build());
                 ChannelEngine engine = ChannelEngine.open(node, ChannelConfig.builder(1)
                     .idle(ChannelConfig.Idle.PARK).build())) {
                PeerChannel peer = engine.connect(args[0], Duration.ofSeconds(30));
                ChannelWriter w = peer.writer(0, 0);
                ByteBuffer copy = ByteBuffer.allocate(32);
                for (int i = 0; i < ROUNDS; i++) {
                    int n = engine.reader(0).read((s, buf, o, l, src) -> {
                        copy.clear();
                        copy.put(0, buf, o, l);
                    }, 1, 30, TimeUnit.SECONDS);
                    if (n != 1) {
                        System.err.println("echo: nothing to echo within 30 s at round " + i);
                        System.exit(3);
                    }
                    w.write(1, copy, 10, TimeUnit.SECONDS);
                    w.flush();
                }
            }
        }
    }
}
