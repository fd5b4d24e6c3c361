package io.rdmx.transport.stream;

import static io.rdmx.transport.wire.FrameDescriptor.HEADER_LENGTH;

import io.rdmx.transport.wire.FrameDescriptor;
import io.rdmx.transport.wire.FrameBuffers;
import io.rdmx.transport.wire.AuthProof;
import io.rdmx.transport.wire.RegionViews;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.ProtocolException;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Status;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.internal.RegionImpl;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import io.netty.channel.DefaultMaxMessagesRecvByteBufAllocator;
import io.rdmx.transport.RemoteRegion;
import java.security.SecureRandom;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The receive side of one stream connection, and its handshake. Runs on the channel's event loop only
 * (asserted), except {@link #recvPosted()}.
 *
 * <p>WRITE data is copied from the socket's buffers straight into the target region as it arrives, after the
 * key and bounds were checked on the header (nothing is written for a refused WRITE). A SEND waits for a posted
 * receive: while none is posted, reading from the socket stops (back pressure to the sender), and resumes when
 * the application posts one.
 *
 * <p>The handshake ({@link FrameDescriptor}) runs under limits, so that a peer that has not authenticated costs
 * little: reads through a small fixed buffer, a frame the current step does not expect refused on its header,
 * a deadline ({@link io.rdmx.transport.NodeOptions#handshakeTimeout()}), and on the accepting side a slot among
 * {@link io.rdmx.transport.NodeOptions#maxPendingHandshakes()}.
 */
final class StreamHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(StreamHandler.class);
    private static final SecureRandom RANDOM = new SecureRandom();
    /** Read buffer size while the handshake runs: larger than any frame before authentication. */
    private static final int HANDSHAKE_READ_BUFFER = 2048;
    /** Read buffer size once established: a 64 KiB batch of WRITE data in one system call. */
    private static final int ESTABLISHED_READ_BUFFER = 64 << 10;

    private static final int S_HELLO = 0;
    private static final int S_AUTH = 1;
    private static final int S_READY = 2;
    private static final int S_HEADER = 3;
    private static final int S_WRITE_DATA = 4;
    private static final int S_IMM_RECV = 5;
    private static final int S_SEND_RECV = 6;
    private static final int S_SEND_DATA = 7;
    private static final int S_DISCARD = 8;

    private final StreamNode node;
    private final boolean active;
    private final String dialedAddress;
    private final CompletableFuture<AbstractConnection> connectFuture;
    private final byte[] nonce = new byte[FrameDescriptor.NONCE_LENGTH];

    private Channel channel;
    private StreamConnection conn;
    private FrameBuffers.Hello peer;
    private boolean counted;
    private ScheduledFuture<?> handshakeDeadline;
    private ByteBuf cum;
    private int state = S_HELLO;

    private long curSeq;
    private int curFlags;
    private int curImm;
    private int curLength;
    private int curFrameLength;
    private int remaining;
    private ByteBuffer target;
    private AbstractConnection.Recv curRecv;
    private long handledSeq;
    private long ackedSeq;
    /** A frame handled since the last ACK asked for one (it lacked {@link FrameDescriptor#FLAG_UNSIGNALED}). */
    private boolean ackDue;
    private volatile boolean waitingRecv;
    private int lastKey;
    private RegionImpl lastRegion;
    private final RegionViews views = new RegionViews();
    /** Buffers Netty read from the socket (one per read system call); event loop, read racily by tests. */
    private volatile long reads;

    StreamHandler(StreamNode node, boolean active, String dialedAddress,
                  CompletableFuture<AbstractConnection> connectFuture) {
        this.node = node;
        this.active = active;
        this.dialedAddress = dialedAddress;
        this.connectFuture = connectFuture;
        RANDOM.nextBytes(nonce);
    }

    private String peerName() {
        return peer != null ? peer.name() : (active ? dialedAddress : String.valueOf(channel.remoteAddress()));
    }

    private FrameBuffers.Hello myHello() {
        return new FrameBuffers.Hello(node.options().secret() != null, nonce, node.name(), node.address());
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        channel = ctx.channel();
        if (!active) {
            if (!node.beginHandshake()) {
                int max = node.options().maxPendingHandshakes();
                LOG.warn("node '{}': refusing a connection from {}: {} handshakes pending (maxPendingHandshakes={})",
                    node.name(), channel.remoteAddress(), max, max);
                state = S_DISCARD;
                channel.writeAndFlush(FrameCodec.error(channel.alloc(), "node '" + node.name() + "' has "
                    + "too many pending handshakes (maxPendingHandshakes=" + max + "): try again later"))
                    .addListener(ChannelFutureListener.CLOSE);
                return;
            }
            counted = true;
        }
        channel.config().setRecvByteBufAllocator(new Reads());
        long ms = node.options().handshakeTimeout().toMillis();
        handshakeDeadline = ctx.executor().schedule(() -> {
            if (conn == null && state != S_DISCARD) {
                handshakeRefused("handshake not completed within handshakeTimeout=" + ms + " ms");
            }
        }, ms, TimeUnit.MILLISECONDS);
        if (active) {
            channel.writeAndFlush(FrameCodec.hello(channel.alloc(), myHello()));
        }
        super.channelActive(ctx);
    }

    /** The handshake is over (established or failed): release its slot and its timer. */
    private void handshakeOver() {
        if (counted) {
            counted = false;
            node.endHandshake();
        }
        if (handshakeDeadline != null) {
            handshakeDeadline.cancel(false);
            handshakeDeadline = null;
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        assert ctx.channel().eventLoop().inEventLoop();
        ByteBuf in = (ByteBuf) msg;
        reads++;
        if (state == S_DISCARD) {
            in.release();
            return;
        }
        cum = cum == null ? in : ByteToMessageDecoder.MERGE_CUMULATOR.cumulate(ctx.alloc(), cum, in);
        process();
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        sendAck();
    }

    /** One cumulative ACK per read batch, and none if every frame of the batch was unsignaled. */
    private void sendAck() {
        if (ackDue && handledSeq > ackedSeq && channel.isActive() && state != S_DISCARD) {
            ackDue = false;
            ackedSeq = handledSeq;
            conn.ack(handledSeq);
        }
    }

    /** A request frame was handled (placed, or delivered into a receive): it counts for the next ACK. */
    private void handled(long seq, int flags) {
        handledSeq = seq;
        if ((flags & FrameDescriptor.FLAG_UNSIGNALED) == 0) {
            ackDue = true;
        }
    }

    /** Any thread: a receive was posted on the connection. */
    void recvPosted() {
        VarHandle.fullFence();
        if (waitingRecv) {
            channel.eventLoop().execute(this::resume);
        }
    }

    private void resume() {
        if (!waitingRecv || state == S_DISCARD) {
            return;
        }
        waitingRecv = false;
        channel.config().setAutoRead(true);
        process();
        sendAck();
    }

    /** The connection is going down; stop handling input. */
    void closing() {
        if (channel.eventLoop().inEventLoop()) {
            discard();
        } else {
            channel.eventLoop().execute(this::discard);
        }
    }

    private void discard() {
        state = S_DISCARD;
        waitingRecv = false;
        if (cum != null) {
            cum.release();
            cum = null;
        }
        channel.config().setAutoRead(true);
    }

    /**
     * Copies what has arrived of the current WRITE or SEND payload into its target region.
     *
     * @param readable bytes readable in the cumulation
     * @return true once the whole payload is placed
     */
    private boolean copyIntoTarget(int readable) {
        int n = Math.min(readable, remaining);
        if (n > 0) {
            target.limit(target.position() + n);
            cum.readBytes(target);
            remaining -= n;
        }
        return remaining == 0;
    }

    /** Blocks reading until a receive is posted; returns true if one is posted now after all. */
    private boolean waitForRecv() {
        waitingRecv = true;
        VarHandle.fullFence();
        if (conn.hasRecv()) {
            waitingRecv = false;
            return true;
        }
        channel.config().setAutoRead(false);
        return false;
    }

    private void process() {
        try {
            while (state != S_DISCARD && step()) {
                // keep going while progress is made
            }
        } catch (ProtocolException e) {
            protocolError(e);
        } catch (RuntimeException e) {
            LOG.error("node '{}': unexpected error on the connection from '{}'", node.name(), peerName(), e);
            protocolError(new ProtocolException("internal error handling a frame from '" + peerName() + "': "
                + e));
        }
        if (cum != null && !cum.isReadable()) {
            cum.release();
            cum = null;
        }
    }

    /** One step of the receive state machine; false when it needs more input or a posted receive. */
    private boolean step() throws ProtocolException {
        int readable = cum == null ? 0 : cum.readableBytes();
        switch (state) {
            case S_HELLO:
            case S_AUTH:
            case S_READY:
            case S_HEADER:
                return frame(readable);
            case S_WRITE_DATA: {
                if (!copyIntoTarget(readable)) {
                    return false;
                }
                if ((curFlags & FrameDescriptor.FLAG_WITH_IMM) != 0) {
                    state = S_IMM_RECV;
                } else {
                    handled(curSeq, curFlags);
                    state = S_HEADER;
                }
                return true;
            }
            case S_IMM_RECV: {
                var r = conn.takeRecv();
                if (r == null) {
                    return waitForRecv();
                }
                handled(curSeq, curFlags);
                state = S_HEADER;
                // an inline completion handler may take the connection down (and discard the input) from here
                conn.emit(Opcode.RECV, r.wrId(), Status.SUCCESS, curLength, curImm, true, null);
                return state != S_DISCARD;
            }
            case S_SEND_RECV: {
                var r = conn.takeRecv();
                if (r == null) {
                    return waitForRecv();
                }
                if (curLength > r.length()) {
                    String why = "SEND length=" + curLength + " exceeds the receive buffer length=" + r.length()
                        + " posted by '" + node.name() + "'";
                    conn.emit(Opcode.RECV, r.wrId(), Status.LOCAL_LENGTH_ERROR, 0, 0, false, why);
                    refuse(curSeq, Status.REMOTE_INVALID_REQUEST, why);
                    return false;
                }
                curRecv = r;
                target = views.view(r.region());
                target.position(r.offset());
                remaining = curLength;
                state = S_SEND_DATA;
                return true;
            }
            case S_SEND_DATA: {
                if (!copyIntoTarget(readable)) {
                    return false;
                }
                long wrId = curRecv.wrId();
                curRecv = null;
                handled(curSeq, curFlags);
                state = S_HEADER;
                // an inline completion handler may take the connection down (and discard the input) from here
                conn.emit(Opcode.RECV, wrId, Status.SUCCESS, curLength, 0, false, null);
                return state != S_DISCARD;
            }
            default:
                return false;
        }
    }

    private boolean frame(int readable) throws ProtocolException {
        if (readable < HEADER_LENGTH) {
            return false;
        }
        int base = cum.readerIndex();
        int version = cum.getUnsignedByte(base + FrameDescriptor.VERSION_OFFSET);
        int type = cum.getUnsignedByte(base + FrameDescriptor.TYPE_OFFSET);
        int flags = cum.getUnsignedShortLE(base + FrameDescriptor.FLAGS_OFFSET);
        long length = cum.getUnsignedIntLE(base + FrameDescriptor.LENGTH_OFFSET);
        long seq = cum.getLongLE(base + FrameDescriptor.SEQ_OFFSET);
        String bad = FrameDescriptor.validate(version, type, length, node.options().maxTransferSize());
        if (bad != null) {
            throw new ProtocolException("bad frame from '" + peerName() + "': " + bad);
        }
        curFrameLength = (int) length;
        if (type == FrameDescriptor.TYPE_WRITE || type == FrameDescriptor.TYPE_SEND) {
            if (state != S_HEADER) {
                throw new ProtocolException(FrameDescriptor.typeName(type) + " frame from '" + peerName()
                    + "' before the handshake completed");
            }
            if (seq != handledSeq + 1) {
                throw new ProtocolException(FrameDescriptor.typeName(type) + " frame from '" + peerName()
                    + "' has seq=" + seq + ", expected=" + (handledSeq + 1));
            }
            return type == FrameDescriptor.TYPE_WRITE ? writeHeader(readable, flags, seq) : sendHeader(flags, seq);
        }
        if (conn == null) {
            checkHandshakeFrame(type);
        }
        if (readable < length) {
            return false;
        }
        ByteBuf f = cum.readRetainedSlice((int) length);
        try {
            control(type, flags, seq, f);
        } finally {
            f.release();
        }
        return true;
    }

    /** Before the connection is established, only the frame the handshake step expects (or ERROR, PING). */
    private void checkHandshakeFrame(int type) throws ProtocolException {
        int expected = state == S_HELLO ? FrameDescriptor.TYPE_HELLO
            : state == S_AUTH ? FrameDescriptor.TYPE_AUTH : FrameDescriptor.TYPE_READY;
        if (type != expected && type != FrameDescriptor.TYPE_ERROR && type != FrameDescriptor.TYPE_PING) {
            throw new ProtocolException(FrameDescriptor.typeName(type) + " frame from '" + peerName()
                + "' during the handshake, where " + FrameDescriptor.typeName(expected) + " was expected");
        }
    }

    private boolean writeHeader(int readable, int flags, long seq) throws ProtocolException {
        if (readable < FrameDescriptor.WRITE_HEADER_LENGTH) {
            return false;
        }
        int base = cum.readerIndex();
        int rkey = cum.getIntLE(base + FrameDescriptor.WRITE_KEY_OFFSET);
        int imm = cum.getIntLE(base + FrameDescriptor.WRITE_IMM_OFFSET);
        long offset = cum.getLongLE(base + FrameDescriptor.WRITE_REMOTE_OFFSET_OFFSET);
        int dataLength = cum.getIntLE(base + FrameDescriptor.WRITE_DATA_LENGTH_OFFSET);
        boolean placed = (flags & FrameDescriptor.FLAG_PLACED) != 0;
        String bad = FrameBuffers.checkWrite(flags, curFrameLength, dataLength, node.acceptsPlacedWrites());
        if (bad != null) {
            throw new ProtocolException("WRITE frame from '" + peerName() + "' " + bad);
        }
        cum.skipBytes(FrameDescriptor.WRITE_HEADER_LENGTH);
        curSeq = seq;
        curFlags = flags;
        curImm = imm;
        curLength = dataLength;
        if (placed) {
            state = (flags & FrameDescriptor.FLAG_WITH_IMM) != 0 ? S_IMM_RECV : S_HEADER;
            if (state == S_HEADER) {
                handled(seq, flags);
            }
            return true;
        }
        // the region of the last WRITE while it is registered (no map look-up, no boxed key), else a look-up
        RegionImpl region = rkey == lastKey && lastRegion != null && lastRegion.live() ? lastRegion
            : node.lookupRemote(rkey);
        if (region == null || offset < 0 || dataLength > region.length() || offset > region.length() - dataLength) {
            String err = node.checkRemoteWrite(rkey, offset, dataLength);
            refuse(seq, Status.REMOTE_ACCESS_ERROR, err != null ? err : "no remotely writable region with rkey=0x"
                + Integer.toHexString(rkey) + " at node '" + node.name() + "'");
            return false;
        }
        lastKey = rkey;
        lastRegion = region;
        target = views.view(region);
        target.position((int) offset);
        remaining = dataLength;
        state = S_WRITE_DATA;
        return true;
    }

    private boolean sendHeader(int flags, long seq) {
        cum.skipBytes(HEADER_LENGTH);
        curSeq = seq;
        curFlags = flags;
        curLength = curFrameLength - HEADER_LENGTH;
        state = S_SEND_RECV;
        return true;
    }

    private void control(int type, int flags, long seq, ByteBuf f) throws ProtocolException {
        switch (type) {
            case FrameDescriptor.TYPE_PING:
                return;
            case FrameDescriptor.TYPE_ERROR: {
                String msg = f.toString(HEADER_LENGTH, f.readableBytes() - HEADER_LENGTH, StandardCharsets.UTF_8);
                peerError(msg);
                return;
            }
            case FrameDescriptor.TYPE_ACK:
                requireEstablished(type);
                conn.onAck(seq);
                return;
            case FrameDescriptor.TYPE_NAK: {
                requireEstablished(type);
                int st = f.getUnsignedShortLE(HEADER_LENGTH);
                String bad = FrameBuffers.checkNakStatus(st);
                if (bad != null) {
                    throw new ProtocolException("NAK from '" + peerName() + "' " + bad);
                }
                Status[] all = Status.values();
                String msg = f.toString(HEADER_LENGTH + 2, f.readableBytes() - HEADER_LENGTH - 2,
                    StandardCharsets.UTF_8);
                conn.onNak(seq, all[st], msg);
                return;
            }
            case FrameDescriptor.TYPE_HELLO:
                hello(f);
                return;
            case FrameDescriptor.TYPE_AUTH:
                auth(f);
                return;
            case FrameDescriptor.TYPE_READY:
                ready(f);
                return;
            default:
                throw new ProtocolException("unexpected frame type=" + FrameDescriptor.typeName(type) + " from '"
                    + peerName() + "'");
        }
    }

    private void requireEstablished(int type) throws ProtocolException {
        if (conn == null) {
            throw new ProtocolException(FrameDescriptor.typeName(type) + " frame from '" + peerName()
                + "' before the handshake completed");
        }
    }

    private void hello(ByteBuf f) throws ProtocolException {
        if (state != S_HELLO) {
            throw new ProtocolException("unexpected HELLO from '" + peerName() + "'");
        }
        peer = FrameCodec.parseHello(f);
        boolean mine = node.options().secret() != null;
        if (peer.hasSecret() != mine) {
            handshakeRefused("cluster secret mismatch: node '" + node.name() + "' has a secret=" + mine
                + ", peer '" + peer.name() + "' has a secret=" + peer.hasSecret());
            return;
        }
        if (peer.name().equals(node.name())) {
            handshakeRefused("peer claims name='" + peer.name() + "', the name of node '" + node.name()
                + "' itself");
            return;
        }
        if (!active) {
            if (node.connectionTo(peer.name()) != null) {
                handshakeRefused("a connection between '" + peer.name() + "' and '" + node.name()
                    + "' already exists (one connection per pair of nodes)");
                return;
            }
            String bad = node.checkAcceptedPeer(channel, peer.address());
            if (bad != null) {
                handshakeRefused(bad);
                return;
            }
            channel.write(FrameCodec.hello(channel.alloc(), myHello()));
            if (mine) {
                // our proof first: the connecting side checks it before it proves anything or sends its regions
                channel.write(FrameCodec.auth(channel.alloc(), proof().prove(true, peer.nonce(), nonce, node.name(),
                    peer.name())));
                state = S_AUTH;
            } else {
                state = S_READY;
            }
            channel.flush();
        } else if (mine) {
            state = S_AUTH;
        } else {
            sendReady();
        }
    }

    private AuthProof proof() {
        return new AuthProof(node.options().secret());
    }

    private void auth(ByteBuf f) throws ProtocolException {
        if (state != S_AUTH) {
            throw new ProtocolException("unexpected AUTH from '" + peerName() + "'");
        }
        byte[] got = new byte[FrameDescriptor.MAC_LENGTH];
        f.getBytes(HEADER_LENGTH, got);
        // the connecting side's nonce is Nc, the accepting side's Na; each side checks against its own nonce
        byte[] nc = active ? nonce : peer.nonce();
        byte[] na = active ? peer.nonce() : nonce;
        if (!proof().check(got, active, nc, na, peer.name(), node.name())) {
            handshakeRefused("cluster secret mismatch: peer '" + peer.name() + "' failed authentication with '"
                + node.name() + "'");
            return;
        }
        if (active) {
            channel.write(FrameCodec.auth(channel.alloc(), proof().prove(false, nc, na, node.name(), peer.name())));
            sendReady();
        } else {
            state = S_READY;
        }
    }

    /** The connecting side, the peer authenticated: our regions, then wait for the peer's READY. */
    private void sendReady() {
        channel.writeAndFlush(FrameCodec.ready(channel.alloc(), node.exportedRegions()));
        state = S_READY;
    }

    private void ready(ByteBuf f) throws ProtocolException {
        if (state != S_READY) {
            throw new ProtocolException("unexpected READY from '" + peerName() + "'");
        }
        List<RemoteRegion> regions = FrameCodec.parseReady(f);
        if (active) {
            // WRITEs go to the directory that was dialed, never to one the peer names
            StreamConnection c = new StreamConnection(node, peer.name(), dialedAddress, regions, channel, this,
                node.placerFor(dialedAddress));
            if (!node.addConnection(c)) {
                handshakeRefused("node '" + node.name() + "' already has a connection to '" + peer.name() + "'");
                return;
            }
            established(c);
            directAfterHandshake(c);
            if (!connectFuture.complete(c)) {
                c.close();
            }
            return;
        }
        StreamConnection c = new StreamConnection(node, peer.name(), peer.address(), regions, channel, this,
            node.placerFor(peer.address()));
        if (!node.addConnection(c)) {
            handshakeRefused("a connection between '" + peer.name() + "' and '" + node.name() + "' already exists");
            return;
        }
        if (!node.offerAccepted(c)) {
            node.removeConnection(c);
            handshakeRefused("node '" + node.name() + "' has a full accept backlog (acceptBacklog="
                + node.options().acceptBacklog() + ")");
            return;
        }
        established(c);
        channel.writeAndFlush(FrameCodec.ready(channel.alloc(), node.exportedRegions()));
        directAfterHandshake(c);
    }

    /**
     * Posting threads may write to the socket themselves once every handshake frame queued so far is written
     * (Netty completes writes in order): until then their frames queue behind the handshake's.
     */
    private void directAfterHandshake(StreamConnection c) {
        channel.writeAndFlush(io.netty.buffer.Unpooled.EMPTY_BUFFER).addListener(f -> c.handshakeFlushed());
    }


    /** @return buffers read from the socket so far (one per read system call) */
    long reads() {
        return reads;
    }

    /** @return the established connection, or null (the close guard) */
    StreamConnection connection() {
        return conn;
    }

    private void established(StreamConnection c) {
        conn = c;
        state = S_HEADER;
        handshakeOver();
    }

    /**
     * Reads through {@link #HANDSHAKE_READ_BUFFER} until the connection is established, then through
     * {@link #ESTABLISHED_READ_BUFFER}. One allocator whose handle asks which: Netty keeps the first handle of a
     * channel for its whole life, so replacing the allocator once established would leave every later read at
     * the handshake's size (a 2 KiB read per system call).
     */
    private final class Reads extends DefaultMaxMessagesRecvByteBufAllocator {
        @Override
        @SuppressWarnings("deprecation") // the interface still declares the plain Handle; this is an ExtendedHandle
        public Handle newHandle() {
            return new MaxMessageHandle() {
                @Override
                public int guess() {
                    return conn == null ? HANDSHAKE_READ_BUFFER : ESTABLISHED_READ_BUFFER;
                }
            };
        }
    }

    private void handshakeRefused(String why) {
        LOG.warn("node '{}': connection with '{}' refused: {}", node.name(), peerName(), why);
        if (active) {
            connectFuture.completeExceptionally(new RdmxException("connect from '" + node.name() + "' to address="
                + dialedAddress + " failed: " + why));
        }
        sendErrorAndClose(why);
    }

    private void sendErrorAndClose(String why) {
        discard();
        handshakeOver();
        channel.writeAndFlush(FrameCodec.error(channel.alloc(), why), channel.voidPromise());
        // give the peer a moment to read the ERROR (closing with unread input resets the connection), but
        // close whether or not the write completes: a peer that does not read must not keep the channel
        Channel ch = channel;
        ch.eventLoop().schedule(() -> {
            ch.close();
        }, 500, TimeUnit.MILLISECONDS);
    }

    private void refuse(long seq, Status status, String why) {
        ackDue = true;
        sendAck();
        conn.sendFrame(FrameCodec.nak(channel.alloc(), seq, status.ordinal(), why));
        discard();
        conn.fail(new ConnectionClosedException(peerName(), "refused request seq=" + seq + " from peer '"
            + peerName() + "': " + why, null));
    }

    private void protocolError(ProtocolException e) {
        LOG.warn("node '{}': closing the connection with '{}': {}", node.name(), peerName(), e.getMessage());
        if (conn != null) {
            discard();
            conn.fail(e);
        } else {
            if (active) {
                connectFuture.completeExceptionally(e);
            }
            sendErrorAndClose(e.getMessage());
        }
    }

    private void peerError(String msg) {
        discard();
        if (conn != null) {
            conn.fail(new ConnectionClosedException(peerName(), "connection to peer '" + peerName()
                + "' closed by the peer: " + msg, null));
        } else if (active) {
            connectFuture.completeExceptionally(new RdmxException("connect from '" + node.name() + "' to address="
                + dialedAddress + " refused by the peer: " + msg));
        }
        channel.close();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        boolean midFrame = state == S_WRITE_DATA || state == S_SEND_DATA
            || ((state == S_HEADER || state == S_IMM_RECV || state == S_SEND_RECV) && cum != null
                && cum.isReadable());
        RdmxException cause;
        if (midFrame) {
            int got = curFrameLength - remaining;
            cause = new ProtocolException("truncated frame from '" + peerName() + "': the stream ended "
                + (state == S_WRITE_DATA || state == S_SEND_DATA ? "after " + got + " of " + curFrameLength
                    + " bytes" : "inside a frame (" + (cum == null ? 0 : cum.readableBytes()) + " bytes pending)"));
        } else {
            cause = new ConnectionClosedException(peerName(), "connection to peer '" + peerName()
                + "' lost: the peer closed it or died", null);
        }
        if (cum != null) {
            cum.release();
            cum = null;
        }
        state = S_DISCARD;
        handshakeOver();
        if (conn != null) {
            conn.fail(cause);
        } else if (active) {
            connectFuture.completeExceptionally(new RdmxException("connect from '" + node.name() + "' to address="
                + dialedAddress + " failed: " + cause.getMessage(), cause));
        }
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        RdmxException e = new ConnectionClosedException(peerName(), "connection to peer '" + peerName()
            + "' lost: " + cause.getMessage(), cause);
        if (conn != null) {
            conn.fail(e);
        } else if (active) {
            connectFuture.completeExceptionally(e);
        }
        ctx.close();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof IdleStateEvent) {
            IdleStateEvent e = (IdleStateEvent) evt;
            if (e.state() == IdleState.READER_IDLE) {
                String why = "peer '" + peerName() + "' silent for " + node.options().peerTimeout().toMillis()
                    + " ms (peerTimeout): presumed hung or dead";
                if (conn != null) {
                    conn.fail(new ConnectionClosedException(peerName(), why, null));
                } else {
                    if (active) {
                        connectFuture.completeExceptionally(new RdmxException(why));
                    }
                    ctx.close();
                }
            } else if (e.state() == IdleState.WRITER_IDLE && state != S_DISCARD) {
                if (conn != null) {
                    conn.sendControl(FrameDescriptor.TYPE_PING, 0);
                } else {
                    ctx.writeAndFlush(FrameCodec.simple(ctx.alloc(), FrameDescriptor.TYPE_PING, 0),
                        ctx.voidPromise());
                }
            }
            return;
        }
        if (evt instanceof ChannelInputShutdownEvent) {
            // half-closure is allowed (direct I/O: every close goes through the pipeline): the peer is gone
            ctx.close();
            return;
        }
        super.userEventTriggered(ctx, evt);
    }
}
