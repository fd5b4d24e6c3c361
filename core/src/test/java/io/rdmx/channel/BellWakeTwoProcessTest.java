package io.rdmx.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.internal.Sleeper;
import io.rdmx.transport.shm.ShmConnection;
import java.nio.ByteBuffer;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Java 17 wake-ups without the network thread: a child process without futexes ({@code -Drdmx.futex=false}, the
 * Java 17 path on any JDK) sleeps on bells, and this process wakes its parked reader and its parked writer by
 * ringing them (a byte on the bell socket, read by the sleeping thread itself). Counted: bell wakes here, and no
 * doorbell message and no notification received by the child (its I/O and network threads took no part). A peer
 * that goes away while the other sleeps fails the sleeper at once, whichever side sleeps.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class BellWakeTwoProcessTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int STREAM = 64;
    private static final int RECORD = 248;

    private static ChannelConfig config() {
        return ChannelConfig.builder(1).idle(ChannelConfig.Idle.PARK).ringCapacity(4096).batchThreshold(256)
            .readNotifyThreshold(1024).build();
    }

    private static Process child(String mode, String parentAddress, String name) throws Exception {
        return new ProcessBuilder(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
            "-Drdmx.futex=false", "-Drdmx.leakDetection=disabled", "-cp", System.getProperty("java.class.path"),
            Child.class.getName(), mode, parentAddress, name)
            .redirectError(ProcessBuilder.Redirect.INHERIT).redirectOutput(ProcessBuilder.Redirect.INHERIT).start();
    }

    /** A test's body, with this process's engine, the child process and the accepted peer channel. */
    @FunctionalInterface
    private interface WithChild {
        void run(String name, ChannelEngine engine, Process child, PeerChannel peer) throws Exception;
    }

    /**
     * Opens a shm node and engine named {@code prefix-<pid>}, starts a child in {@code mode} that dials it, accepts
     * the child's peer channel and runs the body; the child is destroyed afterwards whatever happened.
     */
    private static void withChild(String prefix, String mode, WithChild body) throws Exception {
        String name = prefix + "-" + ProcessHandle.current().pid();
        try (Node node = Fabrics.get("shm").open(NodeOptions.builder().name(name).build());
             ChannelEngine engine = ChannelEngine.open(node, config())) {
            Process child = child(mode, node.address(), name + "-child");
            try {
                body.run(name, engine, child, engine.accept(Duration.ofSeconds(60)));
            } finally {
                child.destroyForcibly();
                child.waitFor(30, TimeUnit.SECONDS);
            }
        }
    }

    /** Waits (bounded) until a shared parked word says its sleeper sleeps on a bell. */
    private static void awaitBellParked(String what, LongSupplier word) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        long v;
        while (SharedRing.kind(v = word.getAsLong()) != SharedRing.PARKED_BELL) {
            assertTrue(System.nanoTime() - deadline < 0, what + " not parked on a bell within " + WAIT + "; word=0x"
                + Long.toHexString(v));
            Thread.sleep(1);
        }
    }

    @Test
    void theChildsParkedReaderAndParkedWriterAreWokenByTheirBells() throws Exception {
        withChild("bell", "stream", (name, engine, child, peer) -> {
            assertTrue(peer.mapped(), "shm channels are mapped");
            ChannelWriter w = peer.writer(0, 0);
            long sent0 = engine.metrics().notificationsSent();
            long doorbells0 = engine.metrics().doorbellWakes();
            long bells0 = engine.metrics().bellWakes();
            // the child's reader sleeps on its bell: one record wakes it
            awaitBellParked("the child's reader", () -> w.shared().readerParked());
            assertTrue(((ShmConnection) peer.connection()).bells() >= 1, "the child opened a bell here");
            assertTrue(w.offer(1, ByteBuffer.allocate(8)));
            w.flush();
            IncomingRing in = peer.incoming(0, 0);
            // the child's writer fills the 4 KiB ring and sleeps for space on its bell
            awaitBellParked("the child's writer", () -> in.shared().writerParked());
            long readerWoken = engine.metrics().bellWakes() - bells0;
            assertEquals(1, readerWoken, "the parked reader was woken by one byte on its bell");
            AtomicInteger records = new AtomicInteger();
            AtomicInteger ends = new AtomicInteger();
            RecordHandler h = new RecordHandler() {
                @Override
                public void onRecord(int streamId, ByteBuffer buffer, int offset, int length, RecordSource src) {
                    records.incrementAndGet();
                }

                @Override
                public void onEndOfStream(RecordSource src) {
                    ends.incrementAndGet();
                }
            };
            while (ends.get() == 0) {
                assertTrue(engine.reader(0).read(h, 16, 30, TimeUnit.SECONDS) > 0 || ends.get() > 0,
                    "the child's stream stalled after " + records.get() + " records (a lost wake-up)");
            }
            assertEquals(STREAM, records.get());
            assertTrue(engine.metrics().bellWakes() - bells0 > readerWoken,
                "the parked writer was woken by its bell too");
            assertEquals(doorbells0, engine.metrics().doorbellWakes(), "no doorbell: every sleeper had a bell");
            assertEquals(sent0, engine.metrics().notificationsSent(), "no notification message sent");
            assertTrue(child.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS), "the child ends");
            assertEquals(0, child.exitValue(), "the child read its record and received no notification");
        });
    }

    @Test
    void aPeerGoneWhileTheChildSleepsOnItsBellFailsTheChildAtOnce() throws Exception {
        withChild("bellgone", "sleep", (name, engine, child, peer) -> {
            awaitBellParked("the child's reader", () -> peer.writer(0, 0).shared().readerParked());
            // as a dying process would: the socket closes, no goodbye
            ((AbstractConnection) peer.connection()).abort();
            // the child reads with a 120 s timeout: it exits 0 only if the read failed naming this peer
            assertTrue(child.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS), "the sleeping child did not fail");
            assertEquals(0, child.exitValue(), "the child's read failed with the peer's loss");
        });
    }

    @Test
    void aChildKilledWhileThisReaderSleepsFailsItAtOnce() throws Exception {
        withChild("bellkill", "idle", (name, engine, child, peer) -> {
            IncomingRing in = peer.incoming(0, 0);
            int parked = Sleeper.futexes() ? SharedRing.PARKED_FUTEX : SharedRing.PARKED_BELL;
            Thread killer = new Thread(() -> {
                long deadline = System.nanoTime() + WAIT.toNanos();
                while (SharedRing.kind(in.shared().readerParked()) != parked && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                }
                child.destroyForcibly();
            }, "killer");
            killer.start();
            // a read that ran into its 100 s timeout would not throw this: the peer's loss ended the sleep
            ConnectionClosedException e = assertThrows(ConnectionClosedException.class,
                () -> engine.reader(0).read((s, b, o, l, src) -> { }, 1, 100, TimeUnit.SECONDS));
            assertTrue(e.getMessage().contains(name + "-child"), e.getMessage());
            killer.join();
        });
    }

    /** The other process, without futexes: {@code stream}, {@code sleep} or {@code idle}. */
    public static final class Child {
        private Child() {
        }

        /**
         * @param args the mode, the parent's address and this node's name
         * @throws Exception on failure
         */
        public static void main(String[] args) throws Exception {
            try (Node node = Fabrics.get("shm").open(NodeOptions.builder().name(args[2]).build());
                 ChannelEngine engine = ChannelEngine.open(node, config())) {
                PeerChannel peer = engine.connect(args[1], Duration.ofSeconds(30));
                switch (args[0]) {
                    case "stream": {
                        long received = engine.metrics().notificationsReceived();
                        int n = engine.reader(0).read((s, b, o, l, src) -> { }, 1, 60, TimeUnit.SECONDS);
                        if (n != 1) {
                            System.err.println("child: no record within 60 s");
                            System.exit(3);
                        }
                        ChannelWriter w = peer.writer(0, 0);
                        for (int i = 0; i < STREAM; i++) {
                            w.write(1, ByteBuffer.allocate(RECORD), 60, TimeUnit.SECONDS);
                        }
                        w.finish(60, TimeUnit.SECONDS);
                        long got = engine.metrics().notificationsReceived() - received;
                        if (got != 0) {
                            System.err.println("child: woken through " + got + " notifications, not its bells");
                            System.exit(4);
                        }
                        break; // the records wait in the parent's memory; closing delivers the rest
                    }
                    case "sleep":
                        try {
                            engine.reader(0).read((s, b, o, l, src) -> { }, 1, 120, TimeUnit.SECONDS);
                            System.err.println("child: the read returned instead of failing");
                            System.exit(5);
                        } catch (ConnectionClosedException e) {
                            if (!e.getMessage().contains(peer.name())) {
                                System.err.println("child: the failure does not name the peer: " + e);
                                System.exit(6);
                            }
                        }
                        break;
                    default:
                        Thread.sleep(TimeUnit.SECONDS.toMillis(110));
                        break;
                }
            }
            System.exit(0);
        }
    }
}
