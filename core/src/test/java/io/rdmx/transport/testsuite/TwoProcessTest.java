package io.rdmx.transport.testsuite;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Access;
import io.rdmx.transport.Completion;
import io.rdmx.transport.Connection;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.Post;
import io.rdmx.transport.Region;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.Status;
import io.rdmx.transport.WorkRequest;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Two processes on one host exchange one-sided WRITEs and messages; then one is killed mid-wait. Runs on shm here;
 * a provider's own module re-runs it with a subclass that hides {@link #providers()} (rdmx-tcp:
 * {@code TcpTwoProcessTest}).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public class TwoProcessTest {
    /** @return the providers to run on */
    static Stream<String> providers() {
        return Stream.of("shm");
    }

    private static Process start(String provider, String name) throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        ProcessBuilder pb = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
            "-Drdmx.leakDetection=disabled", PeerProcess.class.getName(), provider, name);
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        return pb.start();
    }

    private static String readAddress(Process p) throws Exception {
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
            try {
                return r.readLine();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        String l = line.get(60, TimeUnit.SECONDS);
        assertNotNull(l, "child exited before printing its address");
        assertTrue(l.startsWith("ADDRESS "), l);
        return l.substring("ADDRESS ".length());
    }

    @ParameterizedTest
    @MethodSource("providers")
    void writesAndMessagesCrossProcessesThenPeerDeathIsSeen(String provider) throws Exception {
        String childName = "child-" + provider + "-" + ProcessHandle.current().pid();
        Process child = start(provider, childName);
        try (Node node = Fabrics.get(provider).open(NodeOptions.builder().name("parent-" + provider + "-"
            + ProcessHandle.current().pid()).build())) {
            String address = readAddress(child);
            Connection c = node.connect(address, Duration.ofSeconds(30));
            exchangeThenPeerDeath(node, c, childName, child::destroyForcibly);
        } finally {
            child.destroyForcibly();
            child.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** The work-request id of {@link CrossHostCheck}'s halt request, whose completion the waiter passes over. */
    public static final long HALT_WR_ID = 4343;

    /** How the peer process dies: killed here ({@link Process#destroyForcibly}), or told to halt (another host). */
    @FunctionalInterface
    public interface Death {
        /**
         * Makes the peer die now, abruptly.
         *
         * @throws Exception if it cannot be done
         */
        void kill() throws Exception;
    }

    /**
     * The case itself, between this node and a {@link PeerProcess} it is connected to (another process of this
     * host here, a process of another host in {@link CrossHostCheck}): 20 rounds of a one-sided WRITE of random
     * data at a random offset of the peer's inbox, then a SEND asking the peer for the CRC32 of that range, which
     * must match, and a one-sided READ of the range, which must bring the data back; then, while a thread waits on a posted receive, the peer dies, and that thread must wake with
     * the receive FLUSHED and an error naming the peer.
     *
     * @param node this side's node
     * @param c its connection to the peer
     * @param childName the peer's node name
     * @param death how the peer dies
     * @throws Exception on failure (assertion errors name what differed)
     */
    public static void exchangeThenPeerDeath(Node node, Connection c, String childName, Death death)
        throws Exception {
        assertEquals(childName, c.peerName());
        RemoteRegion inbox = c.remoteRegions().stream().filter(r -> r.length() == 1 << 20).findFirst()
            .orElseThrow();
        Region src = node.register(1 << 20, Access.ALL);
        Region ctl = node.register(16, Access.ALL);
        Region replies = node.register(8 * 64, Access.ALL);
        Region back = node.register(1 << 20, Access.ALL);
        Random rnd = new Random(42);
        for (int round = 0; round < 20; round++) {
            int len = 1 + rnd.nextInt(200_000);
            int off = rnd.nextInt((1 << 20) - len);
            byte[] data = new byte[len];
            rnd.nextBytes(data);
            src.buffer().put(off, data);
            assertEquals(Post.OK, c.post(WorkRequest.recv(replies, 0, 8).wrId(-1)));
            assertEquals(Post.OK, c.post(WorkRequest.write(src, off, len, inbox, off).signaled(false)));
            ctl.buffer().putInt(0, off).putInt(4, len);
            assertEquals(Post.OK, c.post(WorkRequest.send(ctl, 0, 8).wrId(round)));
            List<Completion> cs = Completions.take(node, 2, Duration.ofSeconds(30));
            Completion reply = cs.stream().filter(k -> k.opcode() == Opcode.RECV).findFirst().orElseThrow();
            assertTrue(reply.ok(), String.valueOf(reply));
            CRC32 crc = new CRC32();
            crc.update(data);
            assertEquals(crc.getValue(), replies.buffer().getLong(0), "round " + round + " off=" + off
                + " len=" + len);
            // and read back one-sided: a READ of the same range (the peer's inbox grants REMOTE_READ)
            back.buffer().put(0, new byte[len]);
            assertEquals(Post.OK, c.post(WorkRequest.read(back, 0, len, inbox, off).wrId(1000 + round)));
            Completion r = Completions.take(node, 1, Duration.ofSeconds(30)).get(0);
            assertTrue(r.ok() && r.wrId() == 1000 + round, String.valueOf(r));
            byte[] got = new byte[len];
            back.buffer().get(0, got);
            assertArrayEquals(data, got, "READ back, round " + round + " off=" + off + " len=" + len);
        }
        // The peer dies while this thread waits on a posted receive.
        assertEquals(Post.OK, c.post(WorkRequest.recv(replies, 0, 8).wrId(4242)));
        Blocking.Call<Completion> woke = Blocking.start("waiter", () -> {
            while (true) { // the halt request's own completion (another host's death) is not the one awaited
                Completion x = Completions.take(node, 1, Duration.ofSeconds(20)).get(0);
                if (x.wrId() != HALT_WR_ID) {
                    return x;
                }
            }
        });
        Blocking.awaitBlockedIn(woke, "await", Duration.ofSeconds(30));
        death.kill();
        Completion k = woke.result().get(30, TimeUnit.SECONDS);
        assertEquals(4242, k.wrId());
        assertEquals(Status.FLUSHED, k.status());
        ConnectionClosedException e = (ConnectionClosedException) k.error();
        assertEquals(childName, e.peer());
        assertTrue(e.getMessage().contains(childName), e.getMessage());
    }
}
