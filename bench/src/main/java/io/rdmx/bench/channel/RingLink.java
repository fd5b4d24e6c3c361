package io.rdmx.bench.channel;

import io.rdmx.channel.ChannelConfig;
import io.rdmx.channel.ChannelEngine;
import io.rdmx.channel.ChannelReader;
import io.rdmx.channel.ChannelWriter;
import io.rdmx.channel.PeerChannel;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * An rdmx ring channel to a {@link ChannelPeer}, through the public channel API only (claim, commit, flush, read),
 * so that it measures whatever the provider's data path is. The idle strategy is the engine's configuration
 * ({@code rdmx.channel.spinsBeforePark}, set on the command line of both processes).
 */
final class RingLink implements Link {
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    private final Node node;
    private final ChannelEngine engine;
    private final ChannelWriter w;
    private final ChannelReader r;
    private final ByteBuffer payload = ByteBuffer.allocateDirect(64 << 10);
    private long marked;
    private boolean echoed;

    /**
     * @param provider the fabric (shm, tcp, ...)
     * @param address the peer's node address
     * @param cfg the engine's configuration (the peer's must match)
     * @throws Exception when the peer cannot be reached
     */
    RingLink(String provider, String address, ChannelConfig cfg) throws Exception {
        node = Fabrics.get(provider).open(io.rdmx.bench.report.Hosts.bind(NodeOptions.builder()
            .name("bench-driver-" + ProcessHandle.current().pid()), provider).build());
        try {
            engine = ChannelEngine.open(node, cfg);
            PeerChannel peer = engine.connect(address, Duration.ofSeconds(60));
            w = peer.writer(0, 0);
            r = engine.reader(0);
        } catch (Exception e) {
            node.close();
            throw e;
        }
    }

    @Override
    public void data(int size) throws Exception {
        int at = w.claim(DATA, size, 10, TimeUnit.SECONDS);
        w.buffer().put(at, payload, 0, size);
        w.commit();
    }

    @Override
    public long mark() throws Exception {
        w.write(MARK, EMPTY, 10, TimeUnit.SECONDS);
        w.flush();
        marked = -1;
        while (marked < 0) {
            if (r.read((s, b, o, l, src) -> marked = b.getLong(o), 1, 30, TimeUnit.SECONDS) == 0) {
                throw new IllegalStateException("no MARK answer within 30 s");
            }
        }
        return marked;
    }

    @Override
    public void ping(int size) throws Exception {
        int at = w.claim(PING, size, 10, TimeUnit.SECONDS);
        w.buffer().put(at, payload, 0, size);
        w.commit();
        w.flush();
        echoed = false;
        while (!echoed) {
            if (r.read((s, b, o, l, src) -> echoed = true, 1, 10, TimeUnit.SECONDS) == 0) {
                throw new IllegalStateException("no echo within 10 s");
            }
        }
    }

    @Override
    public void bye() throws Exception {
        w.write(BYE, EMPTY, 10, TimeUnit.SECONDS);
        w.flush();
    }

    @Override
    public void close() {
        try {
            engine.close();
        } finally {
            node.close();
        }
    }
}
