package io.rdmx.transport.selector;

import io.rdmx.transport.ProtocolException;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.Status;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.internal.RegionImpl;
import io.rdmx.transport.wire.FrameBuffers;
import io.rdmx.transport.wire.FrameDescriptor;
import io.rdmx.transport.wire.FrameReceiver;
import io.rdmx.transport.wire.RegionViews;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ReadableByteChannel;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The receive side of one stream-socket connection (shm or tcp), and its handshake: the stream protocol of
 * {@link FrameReceiver} decoded from a {@link ByteBuffer} that the node's I/O thread (or a follower) fills from
 * the socket. Runs on that thread only (asserted), except {@link #recvPosted()} and {@link #closing()}.
 *
 * <p>WRITE data that is not placed through shared memory is copied from the read buffer into the target region
 * after the key and bounds were checked on the header. A SEND waits for a posted receive: while none is posted,
 * input is read only until the read buffer is full, then reading from the socket stops (back pressure to the
 * sender), and resumes when the application posts one.
 *
 * <p>The handshake runs under limits, so that a peer that has not authenticated costs little: reads through a
 * small buffer ({@value #HANDSHAKE_READ_BUFFER} bytes), a frame the current step does not expect refused on its
 * header, a deadline ({@link io.rdmx.transport.NodeOptions#handshakeTimeout()}), and on the accepting side a
 * slot among {@link io.rdmx.transport.NodeOptions#maxPendingHandshakes()}.
 */
public final class SocketHandler extends FrameReceiver<SocketConnection> {
    private static final Logger LOG = LoggerFactory.getLogger(SocketHandler.class);
    /** Read buffer size while the handshake runs: larger than any frame before authentication but READY. */
    static final int HANDSHAKE_READ_BUFFER = 2048;
    /** Read buffer size once established: a 64 KiB batch in one system call. */
    static final int ESTABLISHED_READ_BUFFER = 64 << 10;

    private final SelectorNode selectorNode;
    private final SocketIo io;

    private long handshakeDeadline;
    private boolean inactive;
    /** Unread input, from its position to its limit (read mode between calls). */
    private ByteBuffer buf = ByteBuffer.allocateDirect(HANDSHAKE_READ_BUFFER).order(ByteOrder.LITTLE_ENDIAN)
        .flip();

    // keep-alive, I/O thread
    /**
     * Whether the socket is connected and {@link #start} ran. Before that (a dial whose TCP connect is pending)
     * the timers have nothing to time: the dialer's own timeout bounds the connect.
     */
    private boolean started;
    private long lastReadAt;
    private long lastWriteAt;
    private long lastFramesOut = -1;
    private long handshakeFramesOut;
    /** Views of the regions READ answers land in (the thread running this handler). */
    private final RegionViews answerViews = new RegionViews();
    /** Read system calls so far; I/O thread, read racily by tests. */
    private volatile long reads;

    /**
     * @param node the node
     * @param io the socket
     * @param active true on the dialing side
     * @param dialedAddress the address dialed (active side), else null
     * @param connectFuture completed with the connection (active side), else null
     */
    public SocketHandler(SelectorNode node, SocketIo io, boolean active, String dialedAddress,
                         CompletableFuture<AbstractConnection> connectFuture) {
        super(LOG, node, active, dialedAddress, connectFuture);
        this.selectorNode = node;
        this.io = io;
    }

    /**
     * The socket is connected: the accepting side takes a handshake slot (or refuses), the dialing side sends
     * HELLO. I/O thread.
     *
     * @param now {@code System.nanoTime()}
     */
    public void start(long now) {
        assert io.inIoThread();
        started = true;
        lastReadAt = now;
        lastWriteAt = now;
        if (!start()) {
            return;
        }
        handshakeDeadline = now + node.options().handshakeTimeout().toNanos();
        sendHello();
    }

    /**
     * Reads once from the socket and handles what arrived, then sends the ACK it calls for. I/O thread.
     *
     * @param ch the socket (or, fuzzing, any source of bytes)
     * @param now {@code System.nanoTime()}
     * @return bytes read, or -1 if the stream ended (then the connection is down)
     * @throws IOException if the read fails (the caller reports it through {@link #ioFailed})
     */
    public int readFrom(ReadableByteChannel ch, long now) throws IOException {
        assert io.inIoThread();
        reads++;
        buf.compact();
        if (connection() == null) {
            // before authentication, small reads (a READY larger than the buffer grows it, see awaitFrame())
            buf.limit(Math.min(buf.capacity(), buf.position() + HANDSHAKE_READ_BUFFER));
        }
        int n;
        try {
            n = ch.read(buf);
        } finally {
            buf.flip();
        }
        if (n < 0) {
            inactive();
            return -1;
        }
        if (n > 0) {
            lastReadAt = now;
        }
        if (discarding()) {
            buf.position(buf.limit());
            return n;
        }
        SocketConnection c = connection();
        if (c == null) {
            process();
            sendAck();
            return n;
        }
        // corked: the frames that this batch's completions post on this thread (a notification SEND whose slot an
        // ACK freed, a WRITE whose window opened) and the batch's ACK leave in one gathering write, not one each
        c.cork();
        try {
            process();
            sendAck();
        } finally {
            c.uncork();
        }
        return n;
    }

    // ---- the input: the read buffer, from its position ----

    @Override
    protected int readable() {
        return buf.remaining();
    }

    @Override
    protected int byteAt(int at) {
        return Byte.toUnsignedInt(buf.get(buf.position() + at));
    }

    @Override
    protected int unsignedShortAt(int at) {
        return Short.toUnsignedInt(buf.getShort(buf.position() + at));
    }

    @Override
    protected int intAt(int at) {
        return buf.getInt(buf.position() + at);
    }

    @Override
    protected long longAt(int at) {
        return buf.getLong(buf.position() + at);
    }

    @Override
    protected void skip(int n) {
        buf.position(buf.position() + n);
    }

    @Override
    protected void copyTo(ByteBuffer target, int n) {
        int at = target.position();
        target.put(at, buf, buf.position(), n);
        target.position(at + n);
        buf.position(buf.position() + n);
    }

    @Override
    protected ByteBuffer frameView(int length) {
        return buf.slice(buf.position(), length).order(ByteOrder.LITTLE_ENDIAN);
    }

    @Override
    protected void awaitFrame(int length) {
        if (length > buf.capacity()) {
            grow(length); // a READY larger than the buffer (validated against MAX_READY_FRAME)
        }
    }

    private void grow(int capacity) {
        ByteBuffer b = ByteBuffer.allocateDirect(capacity).order(ByteOrder.LITTLE_ENDIAN);
        b.put(buf).flip();
        buf = b;
    }

    @Override
    protected void dropInput() {
        buf.position(buf.limit());
    }

    @Override
    protected void resumeReading() {
        io.reading(true);
    }

    /** Reading goes on while the read buffer has room (so the end of the stream, a dead peer, is still seen). */
    @Override
    protected void pauseReading() {
        if (buf.remaining() == buf.capacity()) {
            io.reading(false);
        }
    }

    @Override
    protected boolean inIoThread() {
        return io.inIoThread();
    }

    @Override
    protected void execute(Runnable task) {
        io.execute(task);
    }

    // ---- output ----

    @Override
    protected void writeAck(SocketConnection c, long seq) {
        if (io.onIoThread()) {
            c.sendControl(FrameDescriptor.TYPE_ACK, seq);
        } else {
            c.oweAck(seq); // a thread reading the socket itself: the ACK rides on its reply (or goes when it returns)
        }
    }

    /** Sends the ACK a thread that read the socket itself still owes, if any. Any thread. */
    void payOwedAck() {
        SocketConnection c = connection();
        if (c != null) {
            c.payAck();
        }
    }

    @Override
    protected void writeNak(SocketConnection c, long seq, Status status, String why) {
        c.sendFrame(FrameBuffers.nak(seq, status.ordinal(), why));
    }

    @Override
    protected void writeHandshake(ByteBuffer frame, boolean flush) {
        handshakeFramesOut++;
        io.write(frame, null);
    }

    @Override
    protected void writeErrorAndClose(ByteBuffer frame, boolean early) {
        if (io.write(frame, null)) {
            io.closeAfterFlush();
        } else if (!early) {
            io.close();
        }
    }

    @Override
    protected void closeIo() {
        io.close();
    }

    @Override
    protected void stopHandshakeTimer() {
        handshakeDeadline = 0;
    }

    // ---- the node and the connection ----

    @Override
    protected String describeRemote() {
        return io.describePeer();
    }

    @Override
    protected String sourceAddress() {
        return io.sourceAddress();
    }

    @Override
    protected String checkAcceptedPeer(String peerAddress) {
        return selectorNode.checkAcceptedPeer(io, peerAddress);
    }

    @Override
    protected boolean acceptsPlacedWrites() {
        return selectorNode.acceptsPlacedWrites();
    }

    @Override
    protected SocketConnection newConnection(String peerName, String peerAddress, List<RemoteRegion> regions) {
        String scope = selectorNode.acceptsPlacedWrites() ? scopeToken() : null; // tcp grants no files
        return selectorNode.newConnection(peerName, peerAddress, regions, io, this, scope);
    }

    @Override
    protected boolean offerAndReady(SocketConnection c, ByteBuffer ready) {
        // under the send lock: a frame the accepting application posts once it has the connection cannot
        // overtake READY (the dialing side is established only by READY)
        synchronized (c.sendLock()) {
            if (!node.offerAccepted(c)) {
                return false;
            }
            writeHandshake(ready, true);
        }
        return true;
    }

    @Override
    protected void onEstablished(SocketConnection c) {
        if (buf.capacity() < ESTABLISHED_READ_BUFFER) {
            grow(ESTABLISHED_READ_BUFFER);
        }
    }

    @Override
    protected void onAck(SocketConnection c, long seq) {
        c.onAck(seq);
    }

    @Override
    protected void onNak(SocketConnection c, long seq, Status status, String message) {
        c.onNak(seq, status, message);
    }

    @Override
    protected boolean answerRead(SocketConnection c, long seq, RegionImpl region, int offset, int length,
                                 String refusal) {
        return c.answerRead(seq, region, offset, length, refusal);
    }

    @Override
    protected void whenOutputDrained(Runnable task) {
        io.whenDrained(task);
    }

    /**
     * The bytes of a READ's answer are copied from the read buffer into the READ's region ({@link #copyTo}), as
     * WRITE data is: one copy, no buffer of the READ's size.
     */
    @Override
    protected ByteBuffer readTarget(SocketConnection c, long seq, int length) throws ProtocolException {
        return c.readTarget(seq, length, answerViews);
    }

    @Override
    protected void readRefused(SocketConnection c, long seq, Status status, String message)
        throws ProtocolException {
        c.readRefused(seq, status, message);
    }

    /** @return read system calls on this socket so far (tests, diagnostics) */
    long reads() {
        return reads;
    }

    /**
     * The socket is closed (the stream ended, or it was closed here): the connection goes down with a cause that
     * names the peer. I/O thread; idempotent.
     */
    public void inactive() {
        if (inactive) {
            return;
        }
        inactive = true;
        streamEnded();
    }

    /**
     * A read or write on the socket failed. I/O thread.
     *
     * @param e the error
     */
    void ioFailed(IOException e) {
        socketFailed(e);
        io.close();
    }

    /**
     * Timers: the handshake deadline, the peer timeout (nothing read for {@code peerTimeout}) and the keep-alive
     * (a PING when nothing was written for a quarter of it, at least 50 ms). I/O thread.
     *
     * @param now {@code System.nanoTime()}
     */
    public void tick(long now) {
        if (!started || discarding() || inactive) {
            return;
        }
        SocketConnection conn = connection();
        if (conn == null && handshakeDeadline != 0 && now - handshakeDeadline >= 0) {
            handshakeTimedOut();
            return;
        }
        long timeout = node.options().peerTimeout().toNanos();
        if (now - lastReadAt >= timeout) {
            if (!peerSilent(true)) {
                discard();
                handshakeOver();
                io.close();
            }
            return;
        }
        long out = conn != null ? conn.framesOut() : handshakeFramesOut;
        if (out != lastFramesOut) {
            lastFramesOut = out;
            lastWriteAt = now;
        } else if (now - lastWriteAt >= pingInterval(node.options())) {
            if (conn != null) {
                conn.sendControl(FrameDescriptor.TYPE_PING, 0);
            } else {
                writeHandshake(FrameBuffers.simple(FrameDescriptor.TYPE_PING, 0), true);
            }
        }
    }

    /**
     * @param options a node's options
     * @return how long a connection may write nothing before it sends a PING, in nanoseconds
     */
    static long pingInterval(io.rdmx.transport.NodeOptions options) {
        return Math.max(50_000_000L, options.peerTimeout().toNanos() / 4);
    }
}
