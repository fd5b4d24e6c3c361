package io.rdmx.examples;

import io.rdmx.channel.ChannelConfig;
import io.rdmx.channel.ChannelEngine;
import io.rdmx.channel.ChannelWriter;
import io.rdmx.channel.PeerChannel;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** README's ring-channel example: a worker serializes in place into its buffer to a remote worker. */
public final class ChannelExample {
    private ChannelExample() {
    }

    /**
     * Runs the example on a provider.
     *
     * @param provider a provider name ({@code shm}, {@code tcp}, {@code loopback})
     * @return the stream id and the two longs the remote worker read
     * @throws Exception if a step fails
     */
    public static long[] run(String provider) throws Exception {
        Fabric fabric = Fabrics.get(provider);
        try (Node nodeA = fabric.open(NodeOptions.builder().name("node-a").build());
             Node nodeB = fabric.open(NodeOptions.builder().name("node-b").build())) {
            // tag::channel[]
            try (ChannelEngine a = ChannelEngine.open(nodeA, ChannelConfig.builder(2).build());  // 2 workers here
                 ChannelEngine b = ChannelEngine.open(nodeB, ChannelConfig.builder(4).build())) { // 4 workers there
                PeerChannel toB = a.connect(nodeB.address(), Duration.ofSeconds(5));

                ChannelWriter w = toB.writer(0, 3);                  // local worker 0 -> remote worker 3
                int at = w.claim(7, 16, 1, TimeUnit.SECONDS);        // stream 7, 16 bytes; blocks while full
                w.buffer().putLong(at, 42).putLong(at + 8, 43);      // serialize in place (zero copy)
                w.commit();
                w.flush();

                long[] got = new long[3];                            // on node B, worker 3's thread:
                b.reader(3).read((stream, buf, off, len, src) -> {   // the bytes are valid during the call only
                    got[0] = stream;
                    got[1] = buf.getLong(off);
                    got[2] = buf.getLong(off + 8);
                }, 64, 5, TimeUnit.SECONDS);
                return got;
            }
            // end::channel[]
        }
    }
}
