package io.rdmx.transport.testsuite;

import io.rdmx.transport.Access;
import io.rdmx.transport.Connection;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.PeerNotListeningException;
import io.rdmx.transport.Post;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Region;
import io.rdmx.transport.WorkRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The two-node cases of the test suite between two hosts: the parent side of {@link TwoProcessTest}'s case
 * ({@link TwoProcessTest#exchangeThenPeerDeath}: one-sided WRITEs checked by the peer's CRC32, messages both ways,
 * then the peer's death seen by a waiting thread with an error naming it), run against a {@link PeerProcess} in
 * another host, which this side cannot kill: it is told to halt instead (a request of length -1). The Soft-RoCE
 * job runs it between its two VMs over verbs, each process with provider {@code auto}.
 *
 * <p>{@code CrossHostCheck <provider> <peer output file> <peer node name> <seconds>}: waits up to the seconds for
 * the peer's {@code ADDRESS} line in its output file (the shared directory of the two hosts), connects, runs the
 * case, prints {@code TWO-NODE OK over <provider>: ...} and exits 0; any failure is an exception (exit 1).
 */
public final class CrossHostCheck {
    private CrossHostCheck() {
    }

    /**
     * The provider to open ({@link Fabrics#forAnotherHost}); for {@code auto} the choice is printed as
     * {@code PROVIDER <name> (auto)} so that the caller can check it.
     *
     * @param provider a provider name or {@code auto}
     * @return the provider
     * @throws RdmxException when {@code auto} finds none that reaches another host
     */
    static Fabric fabric(String provider) throws RdmxException {
        Fabric f = Fabrics.forAnotherHost(provider);
        if (Fabrics.AUTO.equals(provider)) {
            System.out.println("PROVIDER " + f.name() + " (auto)");
            System.out.flush();
        }
        return f;
    }

    /**
     * Options for a node of this check: bound to {@code $RDMX_HOST_ADDR} (port 0) where that is set (a host of
     * {@code scripts/hosts.sh}: tcp binds to loopback otherwise), else the provider's default.
     *
     * @param name the node name
     * @return the options
     */
    static NodeOptions options(String name) {
        NodeOptions.Builder b = NodeOptions.builder().name(name);
        String own = System.getenv("RDMX_HOST_ADDR");
        if (own != null && !own.isBlank()) {
            b.bindAddress(own.trim() + ":0");
        }
        return b.build();
    }

    /**
     * @param args provider, the peer's output file, the peer's node name, seconds to wait for it
     * @throws Exception on any failure
     */
    public static void main(String[] args) throws Exception {
        Path peerOut = Path.of(args[1]);
        String peerName = args[2];
        Duration wait = Duration.ofSeconds(Long.parseLong(args[3]));
        Fabric f = fabric(args[0]);
        String address = awaitAddress(peerOut, wait);
        try (Node node = f.open(options("cross-host-" + ProcessHandle.current().pid()))) {
            Connection c = connectRetrying(node, address, wait);
            long t0 = System.nanoTime();
            TwoProcessTest.exchangeThenPeerDeath(node, c, peerName, () -> halt(node, c));
            System.out.printf("TWO-NODE OK over %s: 20 WRITEs checked by the peer's CRC32 and READ back at %s, then"
                + " its death seen by a waiting thread (FLUSHED, naming '%s'); %.1f s%n", f.name(), address, peerName,
                (System.nanoTime() - t0) / 1e9);
        }
    }

    /** Tells the peer to halt: a request of length -1 ({@link PeerProcess}). */
    private static void halt(Node node, Connection c) throws RdmxException {
        Region ctl = node.register(8, Access.ALL);
        ctl.buffer().putInt(0, 0).putInt(4, -1);
        if (c.post(WorkRequest.send(ctl, 0, 8).wrId(TwoProcessTest.HALT_WR_ID)) != Post.OK) {
            throw new IllegalStateException("the halt request to '" + c.peerName() + "' was refused");
        }
    }

    private static String awaitAddress(Path file, Duration wait) throws Exception {
        long deadline = System.nanoTime() + wait.toNanos();
        while (true) {
            if (Files.exists(file)) {
                List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
                for (String l : lines) {
                    if (l.startsWith("ADDRESS ")) {
                        return l.substring("ADDRESS ".length()).trim();
                    }
                }
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no ADDRESS line in " + file + " within " + wait);
            }
            Thread.sleep(200); // polling a file another host writes: no event to wait on
        }
    }

    private static Connection connectRetrying(Node node, String address, Duration wait) throws Exception {
        long deadline = System.nanoTime() + wait.toNanos();
        while (true) {
            try {
                return node.connect(address, Duration.ofSeconds(60));
            } catch (PeerNotListeningException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(500); // nothing listens there yet: any other refusal fails at once
            }
        }
    }
}
