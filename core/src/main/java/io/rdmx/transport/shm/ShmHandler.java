package io.rdmx.transport.shm;

import static io.rdmx.transport.wire.FrameDescriptor.HEADER_LENGTH;

import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.ProtocolException;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.Status;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.internal.RegionImpl;
import io.rdmx.transport.wire.AuthProof;
import io.rdmx.transport.wire.FrameBuffers;
import io.rdmx.transport.wire.FrameDescriptor;
import io.rdmx.transport.wire.RegionViews;
import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ReadableByteChannel;
import java.security.SecureRandom;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The receive side of one shm connection, and its handshake: the stream protocol of {@link FrameDescriptor}
 * decoded from a {@link ByteBuffer} that the node's I/O thread fills from the Unix-domain socket. Runs on that
 * thread only (asserted), except {@link #recvPosted()} and {@link #closing()}.
 *
 * <p>Peer input is checked as on the Netty path of tcp, by the same code where it is not the state machine
 * itself: headers by {@link FrameDescriptor#validate}, HELLO and READY by {@link FrameBuffers}, WRITE headers
 * and NAK statuses by {@link FrameBuffers#checkWrite} and {@link FrameBuffers#checkNakStatus}. WRITE data that
 * is not placed through shared memory is copied from the read buffer into the target region after the key and
 * bounds were checked on the header. A SEND waits for a posted receive: while none is posted, input is read
 * only until the read buffer is full, then reading from the socket stops (back pressure to the sender), and
 * resumes when the application posts one.
 *
 * <p>The handshake runs under limits, so that a peer that has not authenticated costs little: reads through a
 * small buffer ({@value #HANDSHAKE_READ_BUFFER} bytes), a frame the current step does not expect refused on its
 * header, a deadline ({@link io.rdmx.transport.NodeOptions#handshakeTimeout()}), and on the accepting side a
 * slot among {@link io.rdmx.transport.NodeOptions#maxPendingHandshakes()}.
 */
final class ShmHandler {
    private static final Logger LOG = LoggerFactory.getLogger(ShmHandler.class);
    private static final SecureRandom RANDOM = new SecureRandom();
    /** Read buffer size while the handshake runs: larger than any frame before authentication but READY. */
    static final int HANDSHAKE_READ_BUFFER = 2048;
    /** Read buffer size once established: a 64 KiB batch in one system call. */
    static final int ESTABLISHED_READ_BUFFER = 64 << 10;

    private static final int S_HELLO = 0;
    private static final int S_AUTH = 1;
    private static final int S_READY = 2;
    private static final int S_HEADER = 3;
    private static final int S_WRITE_DATA = 4;
    private static final int S_IMM_RECV = 5;
    private static final int S_SEND_RECV = 6;
    private static final int S_SEND_DATA = 7;
    private static final int S_DISCARD = 8;

    private final ShmNode node;
    private final ShmIo io;
    private final boolean active;
    private final String dialedAddress;
    private final CompletableFuture<AbstractConnection> connectFuture;
    private final byte[] nonce = new byte[FrameDescriptor.NONCE_LENGTH];

    private ShmConnection conn;
    private FrameBuffers.Hello peer;
    private boolean counted;
    private long handshakeDeadline;
    private boolean inactive;
    /** Unread input, from its position to its limit (read mode between calls). */
    private ByteBuffer buf = ByteBuffer.allocateDirect(HANDSHAKE_READ_BUFFER).order(ByteOrder.LITTLE_ENDIAN)
        .flip();
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

    // keep-alive, I/O thread
    private long lastReadAt;
    private long lastWriteAt;
    private long lastFramesOut = -1;
    private long handshakeFramesOut;
    /** Read system calls so far; I/O thread, read racily by tests. */
    private volatile long reads;

    /**
     * @param node the node
     * @param io the socket
     * @param active true on the dialing side
     * @param dialedAddress the address dialed (active side), else null
     * @param connectFuture completed with the connection (active side), else null
     */
    ShmHandler(ShmNode node, ShmIo io, boolean active, String dialedAddress,
               CompletableFuture<AbstractConnection> connectFuture) {
        this.node = node;
        this.io = io;
        this.active = active;
        this.dialedAddress = dialedAddress;
        this.connectFuture = connectFuture;
        RANDOM.nextBytes(nonce);
    }

    private String peerName() {
        return peer != null ? peer.name() : (active ? dialedAddress : io.describePeer());
    }

    private FrameBuffers.Hello myHello() {
        return new FrameBuffers.Hello(node.options().secret() != null, nonce, node.name(), node.address());
    }

    /**
     * The socket is connected: the accepting side takes a handshake slot (or refuses), the dialing side sends
     * HELLO. I/O thread.
     *
     * @param now {@code System.nanoTime()}
     */
    void start(long now) {
        assert io.inIoThread();
        lastReadAt = now;
        lastWriteAt = now;
        if (!active) {
            if (!node.beginHandshake()) {
                int max = node.options().maxPendingHandshakes();
                LOG.warn("node '{}': refusing a connection from {}: {} handshakes pending (maxPendingHandshakes={})",
                    node.name(), io.describePeer(), max, max);
                state = S_DISCARD;
                if (io.write(FrameBuffers.error("node '" + node.name() + "' has too many pending handshakes "
                    + "(maxPendingHandshakes=" + max + "): try again later"), null)) {
                    io.closeAfterFlush();
                }
                return;
            }
            counted = true;
        }
        handshakeDeadline = now + node.options().handshakeTimeout().toNanos();
        if (active) {
            handshakeWrite(FrameBuffers.hello(myHello()));
        }
    }

    private void handshakeWrite(ByteBuffer frame) {
        handshakeFramesOut++;
        io.write(frame, null);
    }

    /** The handshake is over (established or failed): release its slot and its timer. */
    private void handshakeOver() {
        if (counted) {
            counted = false;
            node.endHandshake();
        }
        handshakeDeadline = 0;
    }

    /**
     * Reads once from the socket and handles what arrived, then sends the ACK it calls for. I/O thread.
     *
     * @param ch the socket (or, fuzzing, any source of bytes)
     * @param now {@code System.nanoTime()}
     * @return bytes read, or -1 if the stream ended (then the connection is down)
     * @throws IOException if the read fails (the caller reports it through {@link #ioFailed})
     */
    int readFrom(ReadableByteChannel ch, long now) throws IOException {
        assert io.inIoThread();
        reads++;
        buf.compact();
        if (conn == null) {
            // before authentication, small reads (a READY larger than the buffer grows it, see frame())
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
        if (state == S_DISCARD) {
            buf.position(buf.limit());
            return n;
        }
        process();
        sendAck();
        return n;
    }

    /** One cumulative ACK per read, and none if every frame of it was unsignaled. */
    private void sendAck() {
        if (ackDue && handledSeq > ackedSeq && state != S_DISCARD) {
            ackDue = false;
            ackedSeq = handledSeq;
            conn.sendControl(FrameDescriptor.TYPE_ACK, handledSeq);
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
            io.execute(this::resume);
        }
    }

    private void resume() {
        if (!waitingRecv || state == S_DISCARD) {
            return;
        }
        waitingRecv = false;
        io.reading(true);
        process();
        sendAck();
    }

    /** Any thread: the connection is going down; stop handling input. */
    void closing() {
        if (io.inIoThread()) {
            discard();
        } else {
            io.execute(this::discard);
        }
    }

    private void discard() {
        state = S_DISCARD;
        waitingRecv = false;
        buf.position(buf.limit());
        io.reading(true);
    }

    /**
     * Waits for a posted receive; returns true if one is posted now after all. Reading goes on while the read
     * buffer has room (so the end of the stream, a dead peer, is still seen) and stops once it is full: back
     * pressure to the sender until a receive is posted.
     */
    private boolean waitForRecv() {
        waitingRecv = true;
        VarHandle.fullFence();
        if (conn.hasRecv()) {
            waitingRecv = false;
            return true;
        }
        if (buf.remaining() == buf.capacity()) {
            io.reading(false);
        }
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
    }

    /** Copies n bytes of input into the target at its position and advances both. */
    private void copyToTarget(int n) {
        int at = target.position();
        target.put(at, buf, buf.position(), n);
        target.position(at + n);
        buf.position(buf.position() + n);
    }

    /** One step of the receive state machine; false when it needs more input or a posted receive. */
    private boolean step() throws ProtocolException {
        int readable = buf.remaining();
        switch (state) {
            case S_HELLO:
            case S_AUTH:
            case S_READY:
            case S_HEADER:
                return frame(readable);
            case S_WRITE_DATA: {
                int n = Math.min(readable, remaining);
                if (n > 0) {
                    copyToTarget(n);
                    remaining -= n;
                }
                if (remaining > 0) {
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
                int n = Math.min(readable, remaining);
                if (n > 0) {
                    copyToTarget(n);
                    remaining -= n;
                }
                if (remaining > 0) {
                    return false;
                }
                long wrId = curRecv.wrId();
                curRecv = null;
                handled(curSeq, curFlags);
                state = S_HEADER;
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
        int base = buf.position();
        int version = Byte.toUnsignedInt(buf.get(base + FrameDescriptor.VERSION_OFFSET));
        int type = Byte.toUnsignedInt(buf.get(base + FrameDescriptor.TYPE_OFFSET));
        int flags = Short.toUnsignedInt(buf.getShort(base + FrameDescriptor.FLAGS_OFFSET));
        long length = Integer.toUnsignedLong(buf.getInt(base + FrameDescriptor.LENGTH_OFFSET));
        long seq = buf.getLong(base + FrameDescriptor.SEQ_OFFSET);
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
            if (length > buf.capacity()) {
                grow((int) length); // a READY larger than the buffer (validated against MAX_READY_FRAME above)
            }
            return false;
        }
        ByteBuffer f = buf.slice(base, (int) length).order(ByteOrder.LITTLE_ENDIAN);
        buf.position(base + (int) length);
        control(type, seq, f);
        return true;
    }

    private void grow(int capacity) {
        ByteBuffer b = ByteBuffer.allocateDirect(capacity).order(ByteOrder.LITTLE_ENDIAN);
        b.put(buf).flip();
        buf = b;
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
        int base = buf.position();
        int rkey = buf.getInt(base + FrameDescriptor.WRITE_KEY_OFFSET);
        int imm = buf.getInt(base + FrameDescriptor.WRITE_IMM_OFFSET);
        long offset = buf.getLong(base + FrameDescriptor.WRITE_REMOTE_OFFSET_OFFSET);
        int dataLength = buf.getInt(base + FrameDescriptor.WRITE_DATA_LENGTH_OFFSET);
        String bad = FrameBuffers.checkWrite(flags, curFrameLength, dataLength, node.acceptsPlacedWrites());
        if (bad != null) {
            throw new ProtocolException("WRITE frame from '" + peerName() + "' " + bad);
        }
        buf.position(base + FrameDescriptor.WRITE_HEADER_LENGTH);
        curSeq = seq;
        curFlags = flags;
        curImm = imm;
        curLength = dataLength;
        if ((flags & FrameDescriptor.FLAG_PLACED) != 0) {
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
        buf.position(buf.position() + HEADER_LENGTH);
        curSeq = seq;
        curFlags = flags;
        curLength = curFrameLength - HEADER_LENGTH;
        state = S_SEND_RECV;
        return true;
    }

    private void control(int type, long seq, ByteBuffer f) throws ProtocolException {
        switch (type) {
            case FrameDescriptor.TYPE_PING:
                return;
            case FrameDescriptor.TYPE_ERROR:
                peerError(FrameBuffers.text(f, HEADER_LENGTH));
                return;
            case FrameDescriptor.TYPE_ACK:
                requireEstablished(type);
                conn.onAck(seq);
                return;
            case FrameDescriptor.TYPE_NAK: {
                requireEstablished(type);
                int st = Short.toUnsignedInt(f.getShort(HEADER_LENGTH));
                String bad = FrameBuffers.checkNakStatus(st);
                if (bad != null) {
                    throw new ProtocolException("NAK from '" + peerName() + "' " + bad);
                }
                conn.onNak(seq, Status.values()[st], FrameBuffers.text(f, HEADER_LENGTH + 2));
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

    private void hello(ByteBuffer f) throws ProtocolException {
        if (state != S_HELLO) {
            throw new ProtocolException("unexpected HELLO from '" + peerName() + "'");
        }
        peer = FrameBuffers.parseHello(f);
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
            String bad = node.checkAcceptedPeer(io, peer.address());
            if (bad != null) {
                handshakeRefused(bad);
                return;
            }
            handshakeWrite(FrameBuffers.hello(myHello()));
            if (mine) {
                // our proof first: the connecting side checks it before it proves anything or sends its regions
                handshakeWrite(FrameBuffers.auth(proof().prove(true, peer.nonce(), nonce, node.name(),
                    peer.name())));
                state = S_AUTH;
            } else {
                state = S_READY;
            }
        } else if (mine) {
            state = S_AUTH;
        } else {
            sendReady();
        }
    }

    private AuthProof proof() {
        return new AuthProof(node.options().secret());
    }

    private void auth(ByteBuffer f) throws ProtocolException {
        if (state != S_AUTH) {
            throw new ProtocolException("unexpected AUTH from '" + peerName() + "'");
        }
        byte[] got = new byte[FrameDescriptor.MAC_LENGTH];
        f.get(HEADER_LENGTH, got);
        // the connecting side's nonce is Nc, the accepting side's Na; each side checks against its own nonce
        byte[] nc = active ? nonce : peer.nonce();
        byte[] na = active ? peer.nonce() : nonce;
        if (!proof().check(got, active, nc, na, peer.name(), node.name())) {
            handshakeRefused("cluster secret mismatch: peer '" + peer.name() + "' failed authentication with '"
                + node.name() + "'");
            return;
        }
        if (active) {
            handshakeWrite(FrameBuffers.auth(proof().prove(false, nc, na, node.name(), peer.name())));
            sendReady();
        } else {
            state = S_READY;
        }
    }

    /** The connecting side, the peer authenticated: our regions, then wait for the peer's READY. */
    private void sendReady() {
        handshakeWrite(FrameBuffers.ready(node.exportedRegions()));
        state = S_READY;
    }

    private void ready(ByteBuffer f) throws ProtocolException {
        if (state != S_READY) {
            throw new ProtocolException("unexpected READY from '" + peerName() + "'");
        }
        List<RemoteRegion> regions = FrameBuffers.parseReady(f);
        if (active) {
            // WRITEs go to the directory that was dialed, never to one the peer names
            ShmConnection c = new ShmConnection(node, peer.name(), dialedAddress, regions, io, this,
                node.placerFor(dialedAddress));
            if (!node.addConnection(c)) {
                handshakeRefused("node '" + node.name() + "' already has a connection to '" + peer.name() + "'");
                return;
            }
            established(c);
            if (!connectFuture.complete(c)) {
                c.close();
            }
            return;
        }
        ShmConnection c = new ShmConnection(node, peer.name(), peer.address(), regions, io, this,
            node.placerFor(peer.address()));
        if (!node.addConnection(c)) {
            handshakeRefused("a connection between '" + peer.name() + "' and '" + node.name() + "' already exists");
            return;
        }
        // under the send lock: a frame the accepting application posts once it has the connection cannot
        // overtake READY (the dialing side is established only by READY)
        synchronized (c.sendLock()) {
            if (!node.offerAccepted(c)) {
                node.removeConnection(c);
                handshakeRefused("node '" + node.name() + "' has a full accept backlog (acceptBacklog="
                    + node.options().acceptBacklog() + ")");
                return;
            }
            handshakeWrite(FrameBuffers.ready(node.exportedRegions()));
        }
        established(c);
    }

    /** @return read system calls on this socket so far (tests, diagnostics) */
    long reads() {
        return reads;
    }

    /** @return the established connection, or null */
    ShmConnection connection() {
        return conn;
    }

    private void established(ShmConnection c) {
        conn = c;
        state = S_HEADER;
        handshakeOver();
        if (buf.capacity() < ESTABLISHED_READ_BUFFER) {
            grow(ESTABLISHED_READ_BUFFER);
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
        // the peer gets a moment to read the ERROR (closing with unread input resets the connection); a peer
        // that does not read cannot keep the socket: it closes after a bounded linger
        if (io.write(FrameBuffers.error(why), null)) {
            io.closeAfterFlush();
        } else {
            io.close();
        }
    }

    private void refuse(long seq, Status status, String why) {
        ackDue = true;
        sendAck();
        conn.sendFrame(FrameBuffers.nak(seq, status.ordinal(), why));
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
        io.close();
    }

    /**
     * The socket is closed (the stream ended, or it was closed here): the connection goes down with a cause that
     * names the peer. I/O thread; idempotent.
     */
    void inactive() {
        if (inactive) {
            return;
        }
        inactive = true;
        boolean midFrame = state == S_WRITE_DATA || state == S_SEND_DATA
            || ((state == S_HEADER || state == S_IMM_RECV || state == S_SEND_RECV) && buf.hasRemaining());
        RdmxException cause;
        if (midFrame) {
            int got = curFrameLength - remaining;
            cause = new ProtocolException("truncated frame from '" + peerName() + "': the stream ended "
                + (state == S_WRITE_DATA || state == S_SEND_DATA ? "after " + got + " of " + curFrameLength
                    + " bytes" : "inside a frame (" + buf.remaining() + " bytes pending)"));
        } else {
            cause = new ConnectionClosedException(peerName(), "connection to peer '" + peerName()
                + "' lost: the peer closed it or died", null);
        }
        buf.position(buf.limit());
        state = S_DISCARD;
        handshakeOver();
        if (conn != null) {
            conn.fail(cause);
        } else if (active) {
            connectFuture.completeExceptionally(new RdmxException("connect from '" + node.name() + "' to address="
                + dialedAddress + " failed: " + cause.getMessage(), cause));
        }
    }

    /**
     * A read or write on the socket failed. I/O thread.
     *
     * @param e the error
     */
    void ioFailed(IOException e) {
        RdmxException x = new ConnectionClosedException(peerName(), "connection to peer '" + peerName()
            + "' lost: " + e.getMessage(), e);
        if (conn != null) {
            conn.fail(x);
        } else if (active) {
            connectFuture.completeExceptionally(x);
        }
        io.close();
    }

    /**
     * Timers: the handshake deadline, the peer timeout (nothing read for {@code peerTimeout}) and the keep-alive
     * (a PING when nothing was written for a quarter of it, at least 50 ms). I/O thread.
     *
     * @param now {@code System.nanoTime()}
     */
    void tick(long now) {
        if (state == S_DISCARD || inactive) {
            return;
        }
        if (conn == null && handshakeDeadline != 0 && now - handshakeDeadline >= 0) {
            handshakeRefused("handshake not completed within handshakeTimeout="
                + node.options().handshakeTimeout().toMillis() + " ms");
            return;
        }
        long timeout = node.options().peerTimeout().toNanos();
        if (now - lastReadAt >= timeout) {
            String why = "peer '" + peerName() + "' silent for " + node.options().peerTimeout().toMillis()
                + " ms (peerTimeout): presumed hung or dead";
            if (conn != null) {
                discard();
                conn.fail(new ConnectionClosedException(peerName(), why, null));
            } else {
                if (active) {
                    connectFuture.completeExceptionally(new RdmxException(why));
                }
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
        } else if (now - lastWriteAt >= pingInterval(node)) {
            if (conn != null) {
                conn.sendControl(FrameDescriptor.TYPE_PING, 0);
            } else {
                handshakeWrite(FrameBuffers.simple(FrameDescriptor.TYPE_PING, 0));
            }
        }
    }

    /**
     * @param node a node
     * @return how long a connection may write nothing before it sends a PING, in nanoseconds
     */
    static long pingInterval(ShmNode node) {
        return Math.max(50_000_000L, node.options().peerTimeout().toNanos() / 4);
    }
}
