package io.rdmx.transport.stream;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.Post;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.Status;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.internal.RegionImpl;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A connection of a stream provider. The send side: requests get consecutive sequence numbers and wait in
 * {@link #outstanding} (bounded by the send-queue depth) until a cumulative ACK completes them in order.
 * Data is sent straight from the registered region (no copy in user space); with a {@link Placer} (shm), WRITE
 * data is copied into the peer's mapped memory by the posting thread instead, and only WRITE_WITH_IMM sends a
 * (data-less) frame. The receive side lives in {@link StreamHandler}.
 */
public final class StreamConnection extends AbstractConnection {
    private record Pending(long seq, Opcode op, long wrId, int length, boolean signaled) {
    }

    private final Channel channel;
    private final StreamHandler handler;
    private final Placer placer;
    private final Object sendLock = new Object();
    private final ArrayDeque<Pending> outstanding = new ArrayDeque<>();
    private long nextSeq;

    StreamConnection(StreamNode node, String peerName, String peerAddress, List<RemoteRegion> regions,
                     Channel channel, StreamHandler handler, Placer placer) {
        super(node, peerName, peerAddress, regions);
        this.channel = channel;
        this.handler = handler;
        this.placer = placer;
    }

    /** @return the Netty channel (tests, diagnostics) */
    public Channel channel() {
        return channel;
    }

    @Override
    public boolean canMapRemote() {
        return placer != null;
    }

    /**
     * With a {@link Placer} (shm): the peer's region file, mapped after the same checks as a placed WRITE (only
     * under the directory that was dialed, owner and mode checked, symbolic links refused).
     */
    @Override
    public ByteBuffer mapRemote(RemoteRegion region) throws RdmxException {
        if (placer == null) {
            return null;
        }
        checkOpen();
        synchronized (sendLock) {
            try {
                return placer.map(region.remoteKey(), region.length());
            } catch (RdmxException e) {
                throw new RdmxException("peer '" + peerName() + "': " + e.getMessage(), e);
            }
        }
    }

    @Override
    protected int postSendQueue(Opcode op, long wrId, RegionImpl local, int localOffset, int length,
                                RemoteRegion remote, long remoteOffset, int imm, boolean signaled)
        throws ConnectionClosedException {
        Throwable failure = null;
        synchronized (sendLock) {
            checkOpen();
            if (outstanding.size() >= node.options().sendQueueDepth()) {
                return Post.SEND_QUEUE_FULL;
            }
            boolean write = op != Opcode.SEND;
            if (write && placer != null) {
                String err = placer.place(remote.remoteKey(), remoteOffset, local, localOffset, length);
                if (err != null) {
                    emit(op, wrId, Status.REMOTE_ACCESS_ERROR, 0, 0, false, err);
                    failure = new ConnectionClosedException(peerName(), "remote access error: " + err, null);
                } else if (op == Opcode.WRITE) {
                    // Placed already; completes in order behind whatever is still outstanding.
                    if (outstanding.isEmpty()) {
                        if (signaled) {
                            emit(op, wrId, Status.SUCCESS, length, 0, false, null);
                        }
                    } else {
                        outstanding.addLast(new Pending(nextSeq, op, wrId, length, signaled));
                    }
                    return Post.OK;
                }
            }
            if (failure == null) {
                long seq = ++nextSeq;
                outstanding.addLast(new Pending(seq, op, wrId, length, signaled));
                // Header and payload go out as ONE write: the event loop writes ACKs directly, and must not
                // slip one between the two halves of a frame.
                io.netty.buffer.ByteBuf frame;
                if (write) {
                    int flags = (op == Opcode.WRITE_WITH_IMM ? FrameDescriptor.FLAG_WITH_IMM : 0)
                        | (placer != null ? FrameDescriptor.FLAG_PLACED : 0);
                    frame = FrameCodec.writeHeader(channel.alloc(), flags, seq, remote.remoteKey(), imm,
                        remoteOffset, length);
                    if (placer == null && length > 0) {
                        frame = withPayload(frame, local, localOffset, length);
                    }
                } else {
                    frame = FrameCodec.sendHeader(channel.alloc(), seq, length);
                    if (length > 0) {
                        frame = withPayload(frame, local, localOffset, length);
                    }
                }
                channel.write(frame, channel.voidPromise());
                channel.flush();
            }
        }
        if (failure != null) {
            fail(failure);
        }
        return Post.OK;
    }

    private io.netty.buffer.ByteBuf withPayload(io.netty.buffer.ByteBuf header, RegionImpl local, int offset,
                                                int length) {
        return channel.alloc().compositeDirectBuffer(2).addComponents(true, header,
            Unpooled.wrappedBuffer(local.memory().slice(offset, length)));
    }

    /**
     * Completes every request up to a sequence number (cumulative ACK). Event loop.
     *
     * @param acked the highest sequence number the peer has handled
     */
    void onAck(long acked) {
        synchronized (sendLock) {
            Pending p;
            while ((p = outstanding.peekFirst()) != null && p.seq() <= acked) {
                outstanding.pollFirst();
                if (p.signaled()) {
                    emit(p.op(), p.wrId(), Status.SUCCESS, p.length(), 0, false, null);
                }
            }
        }
    }

    /**
     * Fails one request (NAK): earlier ones completed, this one with the status; the connection goes down.
     * Event loop.
     *
     * @param seq the failed request
     * @param status its status
     * @param message the peer's explanation
     */
    void onNak(long seq, Status status, String message) {
        onAck(seq - 1);
        synchronized (sendLock) {
            Pending p = outstanding.peekFirst();
            if (p != null && p.seq() == seq) {
                outstanding.pollFirst();
                emit(p.op(), p.wrId(), status, 0, 0, false, message);
            }
        }
        fail(new ConnectionClosedException(peerName(), "peer '" + peerName() + "' refused request seq=" + seq
            + ": status=" + status + ": " + message, null));
    }

    @Override
    protected void onRecvPosted() {
        handler.recvPosted();
    }

    @Override
    protected void flushSendQueue() {
        String detail = flushDetail();
        synchronized (sendLock) {
            Pending p;
            while ((p = outstanding.pollFirst()) != null) {
                emit(p.op(), p.wrId(), Status.FLUSHED, 0, 0, false, detail);
            }
        }
    }

    @Override
    protected void closeTransport(Throwable cause) {
        if (placer != null) {
            placer.close();
        }
        handler.closing();
        if (channel.isActive()) {
            String why = cause == null ? "closed" : cause.getMessage();
            channel.writeAndFlush(FrameCodec.error(channel.alloc(), why)).addListener(
                (ChannelFutureListener) f -> f.channel().eventLoop().schedule(() -> {
                    f.channel().close();
                }, 500, TimeUnit.MILLISECONDS));
        } else {
            channel.close();
        }
    }
}
