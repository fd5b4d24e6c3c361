package io.rdmx.transport.stream;

import io.rdmx.transport.wire.Placer;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.handler.timeout.IdleStateHandler;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.PeerNotListeningException;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.internal.AbstractNode;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A node of a stream provider: a Netty server channel, one event loop group for all its connections, and
 * the handshake of {@link StreamHandler}. Subclasses choose the channel types and the address format.
 */
public abstract class StreamNode extends AbstractNode {
    private final EventLoopGroup group;
    private volatile Channel server;
    private volatile String address;

    /**
     * @param fabric the provider
     * @param options validated options
     * @param group the event loops (owned by the node from now on)
     */
    protected StreamNode(Fabric fabric, NodeOptions options, EventLoopGroup group) {
        super(fabric, options);
        this.group = group;
    }

    /** @return the client channel class */
    protected abstract Class<? extends Channel> channelClass();

    /** @return the server channel class */
    protected abstract Class<? extends ServerChannel> serverChannelClass();

    /**
     * @param address an address in this provider's format
     * @return the socket address
     * @throws RdmxException if malformed
     */
    protected abstract SocketAddress parseAddress(String address) throws RdmxException;

    /**
     * @param bound the bound server address
     * @return the address to advertise
     */
    protected abstract String formatAddress(SocketAddress bound);

    /**
     * @param peerAddress the peer's advertised address
     * @return how WRITE data reaches the peer's memory directly, or null to send it in frames
     */
    protected abstract Placer placerFor(String peerAddress);

    /** @return true if peers place WRITE data themselves (shared memory) */
    protected abstract boolean acceptsPlacedWrites();

    /**
     * Whether posting threads write their frames to the socket themselves (see {@link StreamConnection}) and
     * completions go to an installed {@link io.rdmx.transport.InlineCompletionHandler} on the event loop. Needs a
     * channel with a file descriptor ({@link io.netty.channel.unix.UnixChannel}); the default is no.
     *
     * @return true for direct I/O
     */
    protected boolean directIo() {
        return false;
    }

    /**
     * Checks an accepted peer after its HELLO, before anything is sent back to it. The default accepts; shm
     * checks who is at the other end of the socket and what directory it claims.
     *
     * @param channel the accepted channel
     * @param peerAddress the address the peer advertises
     * @return null to go on, else why the peer is refused
     */
    protected String checkAcceptedPeer(Channel channel, String peerAddress) {
        return null;
    }


    /**
     * Adds provider-specific options to a bootstrap.
     *
     * @param b the client bootstrap
     */
    protected void configure(Bootstrap b) {
    }

    /**
     * Binds the server channel. Called once, right after construction.
     *
     * @param bind where to listen
     * @throws RdmxException if binding fails
     */
    protected final void bind(SocketAddress bind) throws RdmxException {
        address = formatAddress(bind);
        ServerBootstrap sb = new ServerBootstrap().group(group).channel(serverChannelClass())
            .childHandler(initializer(false, null, null));
        ChannelFuture f = sb.bind(bind).awaitUninterruptibly();
        if (!f.isSuccess()) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            throw new RdmxException(fabric().name() + " node '" + name() + "' cannot listen on " + bind + ": "
                + f.cause().getMessage(), f.cause());
        }
        server = f.channel();
        address = formatAddress(server.localAddress());
    }

    private ChannelInitializer<Channel> initializer(boolean active, String dialed,
                                                    CompletableFuture<AbstractConnection> future) {
        long timeout = options().peerTimeout().toMillis();
        return new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel ch) {
                StreamHandler h = new StreamHandler(StreamNode.this, active, dialed, future);
                if (directIo()) {
                    // posting threads write to this socket: Netty must not close it behind their back, so every
                    // close goes through the pipeline (the guard), none from inside Netty's read or write paths
                    ch.config().setOption(ChannelOption.ALLOW_HALF_CLOSURE, true);
                    ch.config().setAutoClose(false);
                    ch.pipeline().addLast(new CloseGuard(h));
                }
                ch.pipeline().addLast(new FlushConsolidationHandler(256, true),
                    new IdleStateHandler(timeout, Math.max(50, timeout / 4), 0, TimeUnit.MILLISECONDS), h);
            }
        };
    }

    /** Stops direct writes to a socket before it is closed (they hold the send lock while they write). */
    private static final class CloseGuard extends ChannelOutboundHandlerAdapter {
        private final StreamHandler handler;

        CloseGuard(StreamHandler handler) {
            this.handler = handler;
        }

        @Override
        public void close(ChannelHandlerContext ctx, ChannelPromise promise) throws Exception {
            StreamConnection c = handler.connection();
            if (c != null) {
                c.socketClosing();
            }
            ctx.close(promise);
        }
    }

    @Override
    public String address() {
        return address;
    }

    @Override
    public AbstractConnection connect(String peerAddress, Duration timeout) throws RdmxException {
        SocketAddress sa = parseAddress(peerAddress);
        return dialOnce(peerAddress, timeout, (future, deadline) -> {
            Bootstrap b = new Bootstrap().group(group).channel(channelClass())
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE,
                    Math.max(1, timeout.toMillis())))
                .handler(initializer(true, peerAddress, future));
            configure(b);
            ChannelFuture cf = b.connect(sa);
            cf.addListener(done -> {
                if (!done.isSuccess()) {
                    String why = "connect from '" + name() + "' to address=" + peerAddress + " failed: "
                        + done.cause().getMessage();
                    future.completeExceptionally(notListening(done.cause())
                        ? new PeerNotListeningException(why, done.cause()) : new RdmxException(why, done.cause()));
                }
            });
            return () -> cf.channel().close();
        });
    }

    /**
     * Whether a failed connect means that nothing listens at the address (yet): refused, or a socket file
     * that is absent.
     *
     * @param cause what the connect failed with
     * @return true for "not listening"
     */
    static boolean notListening(Throwable cause) {
        return cause instanceof java.net.ConnectException
            || cause instanceof java.nio.file.NoSuchFileException
            || cause instanceof java.io.FileNotFoundException;
    }

    @Override
    protected void closeTransport() {
        failDialing("node '" + name() + "' closed while connecting");
        Channel s = server;
        if (s != null) {
            s.close().awaitUninterruptibly(2, TimeUnit.SECONDS);
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
}
