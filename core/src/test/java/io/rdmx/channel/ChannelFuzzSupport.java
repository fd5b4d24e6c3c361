package io.rdmx.channel;

import io.rdmx.transport.Connection;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.Post;
import io.rdmx.transport.PreparedRequest;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.WorkRequest;
import io.rdmx.transport.internal.AbstractNode;
import io.rdmx.transport.internal.RegionImpl;
import io.rdmx.transport.loopback.LoopbackFabric;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;

/** What the channel fuzz targets share: engines on loopback nodes, a scripted connection, the input's config. */
final class ChannelFuzzSupport {
    /** Ring capacity of the fuzzed engines (the smallest allowed, so a peer's region stays small). */
    static final int RING_CAPACITY = 1024;
    /** Name of the fuzzed node: sorts after {@link #LOW_PEER} and before {@link #HIGH_PEER}. */
    static final String NODE_NAME = "fuzz-m";
    /** A peer whose name sorts first: this node is the "high" one of the pair layout. */
    static final String LOW_PEER = "fuzz-a";
    /** A peer whose name sorts last: this node is the "low" one. */
    static final String HIGH_PEER = "fuzz-z";

    private static final ChannelEngine[] ENGINES = new ChannelEngine[2];

    private ChannelFuzzSupport() {
    }

    /**
     * How one input runs, from its first byte.
     *
     * @param imm bit 0: notifications by WRITE_WITH_IMM (else by SEND)
     * @param peerName bit 1: the peer's name, which decides the pair layout
     */
    record Config(boolean imm, String peerName) {
        /** @return the configuration byte that decodes to this */
        byte encode() {
            return (byte) ((imm ? 1 : 0) | (HIGH_PEER.equals(peerName) ? 2 : 0));
        }
    }

    static Config config(byte b) {
        return new Config((b & 1) != 0, (b & 2) != 0 ? HIGH_PEER : LOW_PEER);
    }

    /** Turns the channel layer's per-failure logging off: millions of failing peers would otherwise be logged. */
    static void quietLogs() {
        if (System.getProperty("org.slf4j.simpleLogger.log.io.rdmx.channel") == null) {
            System.setProperty("org.slf4j.simpleLogger.log.io.rdmx.channel", "off");
        }
    }

    /**
     * The engine for a notification mode: one per JVM, on its own loopback node, one local worker. Its network
     * thread finds nothing on the node's completion queue: the fuzz targets hand completions to the channel
     * themselves, on the test thread.
     *
     * @param imm WRITE_WITH_IMM notifications
     * @return the engine
     */
    static synchronized ChannelEngine engine(boolean imm) {
        int i = imm ? 1 : 0;
        if (ENGINES[i] == null) {
            try {
                Node node = new LoopbackFabric().open(NodeOptions.builder().name(NODE_NAME + (imm ? "-imm" : ""))
                    .sendQueueDepth(1 << 12).recvQueueDepth(1 << 12).build());
                ENGINES[i] = ChannelEngine.open(node, ChannelConfig.builder(1).ringCapacity(RING_CAPACITY)
                    .notification(imm ? ChannelConfig.Notification.WRITE_WITH_IMM : ChannelConfig.Notification.SEND)
                    .flushInterval(Duration.ZERO).build());
            } catch (RdmxException e) {
                throw new IllegalStateException("cannot open the fuzz engine: " + e.getMessage(), e);
            }
        }
        return ENGINES[i];
    }

    /**
     * A record handed out by a reader: it must lie inside the ring's memory; reading its last byte proves it.
     *
     * @param streamId the stream
     * @param buffer the ring memory
     * @param offset payload start
     * @param length payload length
     * @param source the ring
     */
    static void checkRecord(int streamId, ByteBuffer buffer, int offset, int length, RecordSource source) {
        if (offset < 0 || length < 0 || (long) offset + length > buffer.capacity()) {
            throw new AssertionError("record outside the ring: offset=" + offset + " length=" + length
                + " capacity=" + buffer.capacity() + " from peer '" + source.peerName() + "'");
        }
        if (length > 0) {
            buffer.get(offset + length - 1);
        }
    }

    /** A receive the channel posted. */
    record PostedRecv(long wrId, RegionImpl region, int offset, int length) {
    }

    /**
     * A connection that does nothing but record: the channel's posted receives (in order, as a queue pair
     * consumes them) and, from the REGION handshake message it sends, which of our regions the peer may WRITE.
     */
    static final class FakeConnection implements Connection {
        private final Node node;
        private final String peerName;
        private final ArrayDeque<PostedRecv> recvs = new ArrayDeque<>();
        private RegionImpl ourPair;
        private boolean open = true;

        FakeConnection(Node node, String peerName) {
            this.node = node;
            this.peerName = peerName;
        }

        PostedRecv takeRecv() {
            return recvs.pollFirst();
        }

        RegionImpl ourPairRegion() {
            return ourPair;
        }

        @Override
        public Node node() {
            return node;
        }

        @Override
        public String peerName() {
            return peerName;
        }

        @Override
        public String peerAddress() {
            return peerName + ":1";
        }

        @Override
        public List<RemoteRegion> remoteRegions() {
            return List.of();
        }

        @Override
        public io.rdmx.transport.Region register(int length, int access) throws io.rdmx.transport.RdmxException {
            return node.register(length, access); // the fake has one peer: node-wide is the same scope
        }

        @Override
        public int post(WorkRequest wr) throws ConnectionClosedException {
            if (!open) {
                throw new ConnectionClosedException(peerName, "fuzz connection to '" + peerName + "' closed", null);
            }
            if (wr.opcode() == Opcode.RECV) {
                recvs.addLast(new PostedRecv(wr.wrId(), (RegionImpl) wr.local(), wr.localOffset(), wr.length()));
            } else if (wr.opcode() == Opcode.SEND && wr.length() == NotificationDescriptor.REGION_LENGTH) {
                ByteBuffer b = wr.local().buffer();
                int at = wr.localOffset();
                if (b.get(at + NotificationDescriptor.TYPE_OFFSET) == NotificationDescriptor.TYPE_REGION) {
                    RemoteRegion mine = RemoteRegion.decode(b, at + NotificationDescriptor.REGION_OFFSET);
                    ourPair = ((AbstractNode) node).lookupRemote(mine.remoteKey(), this);
                }
            }
            return Post.OK;
        }

        @Override
        public PreparedRequest prepare(WorkRequest template) {
            throw new UnsupportedOperationException("not used by the channel layer");
        }

        @Override
        public boolean isOpen() {
            return open;
        }

        @Override
        public Throwable closeCause() {
            return null;
        }

        @Override
        public void close() {
            open = false;
        }
    }
}
