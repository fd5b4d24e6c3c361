package io.rdmx.transport.stream;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.DefaultMaxMessagesRecvByteBufAllocator;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.Status;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.wire.FrameDescriptor;
import io.rdmx.transport.wire.FrameReceiver;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The receive side of one stream connection, and its handshake: the stream protocol of {@link FrameReceiver}
 * (shared with shm) driven from Netty's reads. Runs on the channel's event loop only (asserted), except
 * {@link #recvPosted()}.
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
    /** Read buffer size while the handshake runs: larger than any frame before authentication. */
    private static final int HANDSHAKE_READ_BUFFER = 2048;
    /** Read buffer size once established: a 64 KiB batch of WRITE data in one system call. */
    private static final int ESTABLISHED_READ_BUFFER = 64 << 10;

    private final StreamNode node;
    private final Receiver rx;
    private Channel channel;
    private ScheduledFuture<?> handshakeDeadline;
    /** Unread input (Netty's buffers, merged), or null. */
    private ByteBuf cum;
    /** Buffers Netty read from the socket (one per read system call); event loop, read racily by tests. */
    private volatile long reads;

    StreamHandler(StreamNode node, boolean active, String dialedAddress,
                  CompletableFuture<AbstractConnection> connectFuture) {
        this.node = node;
        this.rx = new Receiver(node, active, dialedAddress, connectFuture);
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        channel = ctx.channel();
        if (!rx.begin()) {
            return;
        }
        channel.config().setRecvByteBufAllocator(new Reads());
        long ms = node.options().handshakeTimeout().toMillis();
        handshakeDeadline = ctx.executor().schedule(rx::deadline, ms, TimeUnit.MILLISECONDS);
        rx.hello();
        super.channelActive(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        assert ctx.channel().eventLoop().inEventLoop();
        ByteBuf in = (ByteBuf) msg;
        reads++;
        if (rx.isDiscarding()) {
            in.release();
            return;
        }
        cum = cum == null ? in : ByteToMessageDecoder.MERGE_CUMULATOR.cumulate(ctx.alloc(), cum, in);
        rx.run();
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        rx.ack();
    }

    /** Any thread: a receive was posted on the connection. */
    void recvPosted() {
        rx.recvPosted();
    }

    /** The connection is going down; stop handling input. */
    void closing() {
        rx.closing();
    }

    /** @return buffers read from the socket so far (one per read system call) */
    long reads() {
        return reads;
    }

    /** @return the established connection, or null (the close guard) */
    StreamConnection connection() {
        return rx.connection();
    }

    /**
     * Posting threads may write to the socket themselves once every handshake frame queued so far is written
     * (Netty completes writes in order): until then their frames queue behind the handshake's.
     */
    private void directAfterHandshake(StreamConnection c) {
        channel.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(f -> c.handshakeFlushed());
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
                    return rx.connection() == null ? HANDSHAKE_READ_BUFFER : ESTABLISHED_READ_BUFFER;
                }
            };
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        rx.ended();
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        rx.failed(cause);
        ctx.close();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof IdleStateEvent) {
            IdleStateEvent e = (IdleStateEvent) evt;
            if (e.state() == IdleState.READER_IDLE) {
                if (!rx.silent()) {
                    ctx.close();
                }
            } else if (e.state() == IdleState.WRITER_IDLE && !rx.isDiscarding()) {
                StreamConnection conn = rx.connection();
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

    /** The protocol on this channel: input from {@link #cum}, output through the channel and its connection. */
    private final class Receiver extends FrameReceiver<StreamConnection> {
        Receiver(StreamNode node, boolean active, String dialedAddress,
                 CompletableFuture<AbstractConnection> connectFuture) {
            super(LOG, node, active, dialedAddress, connectFuture);
        }

        // entry points for the handler (the base's are protected)

        boolean begin() {
            return start();
        }

        void hello() {
            sendHello();
        }

        void deadline() {
            if (connection() == null && !discarding()) {
                handshakeTimedOut();
            }
        }

        boolean isDiscarding() {
            return discarding();
        }

        void run() {
            process();
        }

        void ack() {
            sendAck();
        }

        void ended() {
            streamEnded();
        }

        void failed(Throwable cause) {
            socketFailed(cause);
        }

        boolean silent() {
            return peerSilent(false);
        }

        // ---- the input: the cumulation, from its reader index ----

        @Override
        protected int readable() {
            return cum == null ? 0 : cum.readableBytes();
        }

        @Override
        protected int byteAt(int at) {
            return cum.getUnsignedByte(cum.readerIndex() + at);
        }

        @Override
        protected int unsignedShortAt(int at) {
            return cum.getUnsignedShortLE(cum.readerIndex() + at);
        }

        @Override
        protected int intAt(int at) {
            return cum.getIntLE(cum.readerIndex() + at);
        }

        @Override
        protected long longAt(int at) {
            return cum.getLongLE(cum.readerIndex() + at);
        }

        @Override
        protected void skip(int n) {
            cum.skipBytes(n);
        }

        @Override
        protected void copyTo(ByteBuffer target, int n) {
            target.limit(target.position() + n);
            cum.readBytes(target);
        }

        @Override
        protected ByteBuffer frameView(int length) {
            return cum.nioBuffer(cum.readerIndex(), length).order(ByteOrder.LITTLE_ENDIAN);
        }

        @Override
        protected void dropInput() {
            if (cum != null) {
                cum.release();
                cum = null;
            }
        }

        @Override
        protected void resumeReading() {
            channel.config().setAutoRead(true);
        }

        @Override
        protected void pauseReading() {
            channel.config().setAutoRead(false);
        }

        @Override
        protected void processed() {
            if (cum != null && !cum.isReadable()) {
                cum.release();
                cum = null;
            }
        }

        @Override
        protected boolean inIoThread() {
            return channel.eventLoop().inEventLoop();
        }

        @Override
        protected void execute(Runnable task) {
            channel.eventLoop().execute(task);
        }

        // ---- output ----

        @Override
        protected boolean canAck() {
            return channel.isActive();
        }

        @Override
        protected void writeAck(StreamConnection c, long seq) {
            c.ack(seq);
        }

        @Override
        protected void writeNak(StreamConnection c, long seq, Status status, String why) {
            c.sendFrame(FrameCodec.nak(channel.alloc(), seq, status.ordinal(), why));
        }

        @Override
        protected void writeHandshake(ByteBuffer frame, boolean flush) {
            ByteBuf b = FrameCodec.copy(channel.alloc(), frame);
            if (flush) {
                channel.writeAndFlush(b);
            } else {
                channel.write(b);
            }
        }

        @Override
        protected void writeErrorAndClose(ByteBuffer frame, boolean early) {
            ByteBuf b = FrameCodec.copy(channel.alloc(), frame);
            if (early) {
                channel.writeAndFlush(b).addListener(ChannelFutureListener.CLOSE);
                return;
            }
            channel.writeAndFlush(b, channel.voidPromise());
            // give the peer a moment to read the ERROR (closing with unread input resets the connection), but
            // close whether or not the write completes: a peer that does not read must not keep the channel
            Channel ch = channel;
            ch.eventLoop().schedule(() -> {
                ch.close();
            }, 500, TimeUnit.MILLISECONDS);
        }

        @Override
        protected void closeIo() {
            channel.close();
        }

        @Override
        protected void stopHandshakeTimer() {
            if (handshakeDeadline != null) {
                handshakeDeadline.cancel(false);
                handshakeDeadline = null;
            }
        }

        // ---- the node and the connection ----

        @Override
        protected String describeRemote() {
            return String.valueOf(channel.remoteAddress());
        }

        @Override
        protected String sourceAddress() {
            java.net.SocketAddress a = channel.remoteAddress();
            return a instanceof java.net.InetSocketAddress i ? i.getAddress().getHostAddress() : String.valueOf(a);
        }

        @Override
        protected String checkAcceptedPeer(String peerAddress) {
            return node().checkAcceptedPeer(channel, peerAddress);
        }

        @Override
        protected boolean acceptsPlacedWrites() {
            return node().acceptsPlacedWrites();
        }

        private StreamNode node() {
            return StreamHandler.this.node;
        }

        @Override
        protected StreamConnection newConnection(String peerName, String peerAddress, List<RemoteRegion> regions) {
            return new StreamConnection(node(), peerName, peerAddress, regions, channel, StreamHandler.this,
                node().placerFor(peerAddress));
        }

        @Override
        protected boolean offerAndReady(StreamConnection c, ByteBuffer ready) {
            // READY goes out before any frame the application posts: posting threads queue behind the
            // handshake's frames until directAfterHandshake
            if (!node.offerAccepted(c)) {
                return false;
            }
            writeHandshake(ready, true);
            return true;
        }

        @Override
        protected void onEstablished(StreamConnection c) {
            directAfterHandshake(c);
        }

        @Override
        protected void onAck(StreamConnection c, long seq) {
            c.onAck(seq);
        }

        @Override
        protected void onNak(StreamConnection c, long seq, Status status, String message) {
            c.onNak(seq, status, message);
        }
    }
}
