package io.rdmx.transport.stream;

import io.rdmx.transport.wire.Placer;
import io.netty.channel.Channel;
import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.rdmx.transport.Availability;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Region;
import io.rdmx.transport.internal.RegionImpl;
import java.net.SocketAddress;
import java.nio.ByteBuffer;

/** What the stream fuzz targets share: a node that never binds, the input's configuration byte, log silencing. */
final class StreamFuzzSupport {
    /** The address the active side dialed. */
    static final String DIALED = "fuzz-peer:1";
    /** The key a fuzz input uses to WRITE into the node's target region (real keys are random). */
    static final int FUZZ_RKEY = 0x0000_0F22;
    /** The length of the region fuzz WRITEs target. */
    static final int TARGET_LENGTH = 256;
    /** The largest WRITE/SEND data length the fuzzed node accepts. */
    static final int MAX_TRANSFER = 1024;
    private static final EventLoopGroup UNUSED_GROUP = new DefaultEventLoopGroup(1);
    private static final NodeOptions PLAIN = NodeOptions.builder().name("fuzz-node").maxTransferSize(MAX_TRANSFER)
        .recvQueueDepth(8).build();
    private static final NodeOptions SECRET = NodeOptions.builder().name("fuzz-node").maxTransferSize(MAX_TRANSFER)
        .recvQueueDepth(8).secret("fuzz-secret").build();
    private static final Fabric FABRIC = new Fabric() {
        @Override
        public String name() {
            return "fuzz";
        }

        @Override
        public Availability availability() {
            return Availability.usable("in-process fuzz harness");
        }

        @Override
        public Node open(NodeOptions options) throws RdmxException {
            throw new RdmxException("the fuzz fabric opens no nodes");
        }
    };

    private StreamFuzzSupport() {
    }

    /**
     * How one input runs, from its first byte.
     *
     * @param active bit 0: this node dialed (it sends HELLO first and expects READY)
     * @param secret bit 1: this node has a cluster secret
     * @param placed bit 2: this node accepts PLACED writes (as the shm provider does)
     * @param recvs bits 3-4: receives posted once the connection exists (0-3)
     * @param chunk bits 5-7: bytes handed to the handler per read (0 = the whole rest at once, else 7 * n)
     */
    record Config(boolean active, boolean secret, boolean placed, int recvs, int chunk) {
        /** @return the configuration byte that decodes to this */
        byte encode() {
            return (byte) ((active ? 1 : 0) | (secret ? 2 : 0) | (placed ? 4 : 0) | recvs << 3 | (chunk / 7) << 5);
        }
    }

    static Config config(byte b) {
        return new Config((b & 1) != 0, (b & 2) != 0, (b & 4) != 0, (b >> 3) & 3, ((b >> 5) & 7) * 7);
    }

    /** Turns the per-frame warnings of the handler off: millions of bad frames would otherwise be logged. */
    static void quietLogs() {
        if (System.getProperty("org.slf4j.simpleLogger.log.io.rdmx.transport.stream") == null) {
            System.setProperty("org.slf4j.simpleLogger.log.io.rdmx.transport.stream", "off");
        }
    }

    /**
     * A stream node without a socket: the handler under test is put on an EmbeddedChannel by hand. Regions are
     * heap memory; the key {@link #FUZZ_RKEY} names the target region, so inputs can reach the WRITE data path
     * although real keys are random.
     */
    static final class FuzzStreamNode extends StreamNode {
        private final boolean placed;
        private final RegionImpl target;

        FuzzStreamNode(Config cfg) throws RdmxException {
            super(FABRIC, cfg.secret() ? SECRET : PLAIN, UNUSED_GROUP);
            this.placed = cfg.placed();
            Region r = register(TARGET_LENGTH, io.rdmx.transport.Access.ALL);
            this.target = (RegionImpl) r;
        }

        @Override
        public RegionImpl lookupRemote(int remoteKey, io.rdmx.transport.Connection via) {
            return super.lookupRemote(remoteKey == FUZZ_RKEY ? target.remoteKey() : remoteKey, via);
        }

        @Override
        public String address() {
            return "fuzz-node:1";
        }

        @Override
        protected Class<? extends Channel> channelClass() {
            throw new UnsupportedOperationException("the fuzz node does not dial");
        }

        @Override
        protected Class<? extends ServerChannel> serverChannelClass() {
            throw new UnsupportedOperationException("the fuzz node does not listen");
        }

        @Override
        protected SocketAddress parseAddress(String address) throws RdmxException {
            throw new RdmxException("the fuzz node does not dial address=" + address);
        }

        @Override
        protected String formatAddress(SocketAddress bound) {
            return String.valueOf(bound);
        }

        @Override
        protected Placer placerFor(String peerAddress) {
            return null;
        }

        @Override
        protected boolean acceptsPlacedWrites() {
            return placed;
        }

        @Override
        protected Allocation allocate(int length, int access, int remoteKey) {
            return new Allocation(ByteBuffer.allocate(length), () -> { });
        }

        @Override
        protected void closeTransport() {
            // nothing bound, nothing dialed; the event loop group is shared by all inputs
        }
    }
}
