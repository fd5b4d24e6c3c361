package io.rdmx.bench.channel;

import io.rdmx.channel.ChannelConfig;
import io.rdmx.channel.ChannelEngine;
import io.rdmx.channel.ChannelWriter;
import io.rdmx.channel.PeerChannel;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The receiving process of the channel benchmark: counts DATA records, echoes PING records, answers MARK with
 * the count since the last MARK, exits on BYE (the kinds of {@link Link}, as stream ids). Its idle strategy is
 * the engine's configuration: {@code -Drdmx.channel.spinsBeforePark} on its command line.
 */
public final class ChannelPeer {
    private ChannelPeer() {
    }

    /**
     * @param args provider, notification mode, ring capacity, batch threshold, node name
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        ChannelConfig cfg = config(args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3]));
        try (Node node = Fabrics.get(args[0]).open(io.rdmx.bench.report.Hosts.bind(NodeOptions.builder()
                .name(args[4]), args[0]).build());
             ChannelEngine engine = ChannelEngine.open(node, cfg)) {
            System.out.println("ADDRESS " + node.address());
            System.out.flush();
            PeerChannel peer = engine.accept(Duration.ofSeconds(60));
            ChannelWriter back = peer.writer(0, 0);
            long[] count = new long[1];
            boolean[] done = new boolean[1];
            ByteBuffer reply = ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            while (!done[0]) {
                int n = engine.reader(0).read((stream, buf, off, len, src) -> {
                    try {
                        switch (stream) {
                            case Link.DATA:
                                count[0]++;
                                break;
                            case Link.PING: {
                                int at = back.claim(Link.PING, len, 10, TimeUnit.SECONDS);
                                back.buffer().put(at, buf, off, len);
                                back.commit();
                                back.flush();
                                break;
                            }
                            case Link.MARK:
                                reply.putLong(0, count[0]);
                                count[0] = 0;
                                back.write(Link.MARK, reply, 10, TimeUnit.SECONDS);
                                back.flush();
                                break;
                            default:
                                done[0] = true;
                        }
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }, 256, 60, TimeUnit.SECONDS);
                if (n == 0) {
                    throw new IllegalStateException("benchmark driver went quiet");
                }
            }
        }
    }

    static ChannelConfig config(String mode, int capacity, int threshold) {
        return ChannelConfig.builder(1).notification(ChannelConfig.Notification.valueOf(mode))
            .ringCapacity(capacity).batchThreshold(threshold).build();
    }
}
