package io.rdmx.transport.tcp;

import io.rdmx.channel.ChannelConfig;
import io.rdmx.channel.ChannelEngine;
import io.rdmx.channel.PeerChannel;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RdmxTimeoutException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The victim process of {@link DirectMemoryExhaustionTest}: a tcp node and a channel engine whose limits let one
 * peer ask for more ring memory than the JVM's direct memory holds. Prints its address, then one line per peer
 * ({@code accepted <name>} or {@code refused <message>}) until its standard input closes.
 */
public final class DirectMemoryVictim {
    private DirectMemoryVictim() {
    }

    /**
     * @param args none
     * @throws Exception on failure (exit code 1)
     */
    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        try (Node node = new TcpFabric().open(NodeOptions.builder().name("victim-" + ProcessHandle.current().pid())
                 .sendQueueDepth(1 << 16).recvQueueDepth(1 << 12).build());
             ChannelEngine engine = ChannelEngine.open(node, ChannelConfig.builder(2).ringCapacity(256 << 10)
                 .maxPeerMemory(1L << 30).maxRingMemory(2L << 30).build())) {
            out.println("address " + node.address());
            Thread watcher = new Thread(() -> {
                try (InputStream in = System.in) {
                    while (in.read() >= 0) {
                        // until the parent closes our input
                    }
                } catch (java.io.IOException e) {
                    // the parent is gone
                }
                System.exit(node.isOpen() ? 0 : 3);
            });
            watcher.setDaemon(true);
            watcher.start();
            while (true) {
                try {
                    PeerChannel p = engine.accept(Duration.ofSeconds(1));
                    out.println("accepted " + p.name());
                } catch (RdmxTimeoutException e) {
                    continue;
                } catch (RdmxException e) {
                    out.println("refused " + e.getMessage().replace('\n', ' '));
                }
            }
        }
    }
}
