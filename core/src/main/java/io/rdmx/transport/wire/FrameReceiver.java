package io.rdmx.transport.wire;

import static io.rdmx.transport.wire.FrameDescriptor.HEADER_LENGTH;

import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.ProtocolException;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Status;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.internal.AbstractNode;
import io.rdmx.transport.internal.RegionImpl;
import io.rdmx.transport.internal.SafeLog;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;

/**
 * The receive side of one stream-protocol connection and its handshake, apart from the I/O: the state machine
 * that the {@code shm} and {@code tcp} providers both drive through the selector engine's {@code SocketHandler}.
 * One copy of the protocol: the handshake steps (HELLO, AUTH, READY and the limits before authentication), header
 * checks, WRITE placement and SEND matching against posted receives, READs answered from the region and their
 * answers copied into the reader's region, the cumulative ACK of each read batch, NAKs,
 * and how every failure maps to the connection's cause or the dial's exception (each naming the peer).
 *
 * <p>A provider subclasses it for what differs: where the unread input is (a {@code ByteBuffer} the I/O thread
 * fills), how frames are written and the socket closed, and who owns the thread. The
 * subclass's hooks are plain methods the state machine calls on the I/O thread: no hand-off, lock, copy or
 * allocation is added per frame (header fields are read in place, payload bytes are copied once, from the input
 * into the target region, as before).
 *
 * <p>The handshake (HELLO, AUTH, READY, the handshake slot, the refusals) is kept apart, in the package's {@code
 * Handshake}, and most hooks are declared apart ({@code ReceiverHooks}); this class is the frame state machine.
 *
 * <p>I/O thread only (the provider asserts it), except {@link #recvPosted()}.
 *
 * @param <C> the provider's connection type
 */
public abstract class FrameReceiver<C extends AbstractConnection> extends ReceiverHooks<C> {
    /** The handshake's steps ({@link Handshake} moves the receiver along them). */
    static final int S_HELLO = 0;
    static final int S_AUTH = 1;
    static final int S_READY = 2;
    private static final int S_HEADER = 3;
    private static final int S_WRITE_DATA = 4;
    private static final int S_IMM_RECV = 5;
    private static final int S_SEND_RECV = 6;
    private static final int S_SEND_DATA = 7;
    /** The input is discarded (the connection is going down). */
    static final int S_DISCARD = 8;
    /** The bytes of a READ_ANSWER are copied into the READ's local region. */
    private static final int S_ANSWER_DATA = 9;
    /** A READ was answered and the output is backed up: no frame is handled until it drained. */
    private static final int S_ANSWER_WAIT = 10;

    /** The provider's logger (its log lines keep their category). */
    private final Logger log;
    /** The node. */
    protected final AbstractNode node;
    /** True on the dialing side. */
    protected final boolean active;
    /** The address dialed (active side), else null. */
    protected final String dialedAddress;
    /** Completed with the connection (active side), else null. */
    protected final CompletableFuture<AbstractConnection> connectFuture;
    /** HELLO, AUTH, READY: what the handshake learns, and its failures. */
    private final Handshake<C> handshake;

    private C conn;
    private int state = S_HELLO;

    private long curSeq;
    private int curFlags;
    private int curImm;
    private int curLength;
    private int curFrameLength;
    private int remaining;
    private ByteBuffer target;
    /** The receive a SEND is copied into (refilled for each: no object per receive). */
    private final AbstractConnection.Recv curRecv = new AbstractConnection.Recv();
    private long handledSeq;
    private long ackedSeq;
    /** A frame handled since the last ACK asked for one (it lacked {@link FrameDescriptor#FLAG_UNSIGNALED}). */
    private boolean ackDue;
    private volatile boolean waitingRecv;
    private int lastKey;
    private RegionImpl lastRegion;
    private final RegionViews views = new RegionViews();

    /**
     * @param log the provider's logger
     * @param node the node
     * @param active true on the dialing side
     * @param dialedAddress the address dialed (active side), else null
     * @param connectFuture completed with the connection (active side), else null
     */
    // the handshake keeps the reference and reads the node (set above); it calls no hook before the provider drives it
    @SuppressWarnings("this-escape")
    protected FrameReceiver(Logger log, AbstractNode node, boolean active, String dialedAddress,
                            CompletableFuture<AbstractConnection> connectFuture) {
        this.log = log;
        this.node = node;
        this.active = active;
        this.dialedAddress = dialedAddress;
        this.connectFuture = connectFuture;
        this.handshake = new Handshake<>(this, log);
    }

    // ---- the ACK hooks ----

    /** @return true if an ACK may be written now (the socket is open) */
    protected boolean canAck() {
        return true;
    }

    /**
     * Writes a cumulative ACK.
     *
     * @param c the connection
     * @param seq the last request handled
     */
    protected abstract void writeAck(C c, long seq);

    /**
     * @param c the connection
     * @param seq the peer's cumulative ACK
     */
    protected abstract void onAck(C c, long seq);

    // ---- state the provider reads ----

    /** @return the established connection, or null */
    public final C connection() {
        return conn;
    }

    /** @return true once the input is discarded (the connection is going down) */
    protected final boolean discarding() {
        return state == S_DISCARD;
    }

    /**
     * A name for this connection that both of its ends compute and nobody else learns from the wire: the first 8
     * bytes of {@code SHA-256(Nc || Na)} in hex. shm places the region files granted to this connection under it.
     * Known once the peer's HELLO arrived.
     *
     * @return 16 lowercase hex digits
     * @throws IllegalStateException before the peer's HELLO
     */
    protected final String scopeToken() {
        return handshake.scopeToken();
    }

    /** @return the peer's name once it sent HELLO, before that what is known of it */
    protected final String peerName() {
        return handshake.peerName();
    }

    // ---- what the handshake reaches (package-private: Handshake) ----

    /** @return the receive state: the handshake's step while it runs */
    final int state() {
        return state;
    }

    /** @param next the handshake's next step ({@link #S_AUTH}, {@link #S_READY}), or {@link #S_DISCARD} */
    final void enter(int next) {
        state = next;
    }

    /**
     * The handshake completed: frames from now on are for {@code c}.
     *
     * @param c the connection, added to the node
     */
    final void connectionEstablished(C c) {
        conn = c;
        state = S_HEADER;
    }

    // ---- driving it ----

    /**
     * The socket is connected: the accepting side takes a handshake slot (or refuses, writing an ERROR), the
     * dialing side sends HELLO.
     *
     * @return false if refused (the input is discarded, the socket closes after the ERROR)
     */
    protected final boolean start() {
        return handshake.start();
    }

    /** The dialing side opens the handshake (after the provider armed its deadline). */
    protected final void sendHello() {
        handshake.sendHello();
    }

    /** Handles the input there is, as far as it goes (I/O thread). */
    protected final void process() {
        try {
            while (state != S_DISCARD && step()) {
                // keep going while progress is made
            }
        } catch (ProtocolException e) {
            protocolError(e);
        } catch (Throwable e) {
            // anything (a LinkageError included) fails this connection only, never the provider's I/O thread
            SafeLog.error(log, "node '" + node.name() + "': unexpected error on the connection from '" + peerName()
                + "'", e);
            protocolError(new ProtocolException("internal error handling a frame from '" + peerName() + "': "
                + e));
        }
        processed();
    }

    /** One cumulative ACK per read batch, and none if every frame of the batch was unsignaled. */
    protected final void sendAck() {
        if (ackDue && handledSeq > ackedSeq && state != S_DISCARD && canAck()) {
            ackDue = false;
            ackedSeq = handledSeq;
            writeAck(conn, handledSeq);
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
    public final void recvPosted() {
        VarHandle.fullFence();
        if (waitingRecv) {
            execute(this::resume);
        }
    }

    private void resume() {
        if (!waitingRecv || state == S_DISCARD) {
            return;
        }
        waitingRecv = false;
        resumeReading();
        process();
        sendAck();
    }

    /** Any thread: the connection is going down; stop handling input. */
    public final void closing() {
        if (inIoThread()) {
            discard();
        } else {
            execute(this::discard);
        }
    }

    /** Stops handling input: drops what is unread and keeps reading (to see the end of the stream). */
    protected final void discard() {
        state = S_DISCARD;
        waitingRecv = false;
        dropInput();
        resumeReading();
    }

    /** Waits for a posted receive; returns true if one is posted now after all. */
    private boolean waitForRecv() {
        waitingRecv = true;
        VarHandle.fullFence();
        if (conn.hasRecv()) {
            waitingRecv = false;
            return true;
        }
        pauseReading();
        return false;
    }

    /** Copies what has arrived of the current payload into its target; true once the whole payload is there. */
    private boolean copyPayload() {
        int n = Math.min(readable(), remaining);
        if (n > 0) {
            copyTo(target, n);
            remaining -= n;
        }
        return remaining == 0;
    }

    /** One step of the receive state machine; false when it needs more input or a posted receive. */
    private boolean step() throws ProtocolException {
        switch (state) {
            case S_HELLO:
            case S_AUTH:
            case S_READY:
            case S_HEADER:
                return frame(readable());
            case S_WRITE_DATA: {
                if (!copyPayload()) {
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
                var r = curRecv;
                if (!conn.takeRecv(r)) {
                    return waitForRecv();
                }
                handled(curSeq, curFlags);
                state = S_HEADER;
                // an inline completion handler may take the connection down (and discard the input) from here
                conn.emit(Opcode.RECV, r.wrId(), Status.SUCCESS, curLength, curImm, true, null);
                return state != S_DISCARD;
            }
            case S_SEND_RECV: {
                var r = curRecv;
                if (!conn.takeRecv(r)) {
                    return waitForRecv();
                }
                if (curLength > r.length()) {
                    String why = "SEND length=" + curLength + " exceeds the receive buffer length=" + r.length()
                        + " posted by '" + node.name() + "'";
                    conn.emit(Opcode.RECV, r.wrId(), Status.LOCAL_LENGTH_ERROR, 0, 0, false, why);
                    refuse(curSeq, Status.REMOTE_INVALID_REQUEST, why);
                    return false;
                }
                target = views.view(r.region());
                target.position(r.offset());
                remaining = curLength;
                state = S_SEND_DATA;
                return true;
            }
            case S_ANSWER_DATA: {
                if (!copyPayload()) {
                    return false;
                }
                target = null; // the READ's region: not kept past its answer
                state = S_HEADER;
                return true;
            }
            case S_SEND_DATA: {
                if (!copyPayload()) {
                    return false;
                }
                long wrId = curRecv.wrId();
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
        int version = byteAt(FrameDescriptor.VERSION_OFFSET);
        int type = byteAt(FrameDescriptor.TYPE_OFFSET);
        int flags = unsignedShortAt(FrameDescriptor.FLAGS_OFFSET);
        long length = Integer.toUnsignedLong(intAt(FrameDescriptor.LENGTH_OFFSET));
        long seq = longAt(FrameDescriptor.SEQ_OFFSET);
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
        if (type == FrameDescriptor.TYPE_READ) {
            if (state != S_HEADER) {
                throw new ProtocolException("READ frame from '" + peerName() + "' before the handshake completed");
            }
            if (seq != handledSeq + 1) {
                throw new ProtocolException("READ frame from '" + peerName() + "' has seq=" + seq + ", expected="
                    + (handledSeq + 1));
            }
            return readRequest(readable, flags, seq);
        }
        if (type == FrameDescriptor.TYPE_READ_ANSWER) {
            requireEstablished(type);
            return readAnswer(readable, seq);
        }
        if (conn == null) {
            checkHandshakeFrame(type);
        }
        if (readable < length) {
            awaitFrame((int) length);
            return false;
        }
        control(type, seq, (int) length);
        return true;
    }

    /** Before the connection is established, only the frame the handshake step expects (or ERROR, PING). */
    private void checkHandshakeFrame(int type) throws ProtocolException {
        handshake.checkFrame(type);
    }

    private boolean writeHeader(int readable, int flags, long seq) throws ProtocolException {
        if (readable < FrameDescriptor.WRITE_HEADER_LENGTH) {
            return false;
        }
        int rkey = intAt(FrameDescriptor.WRITE_KEY_OFFSET);
        int imm = intAt(FrameDescriptor.WRITE_IMM_OFFSET);
        long offset = longAt(FrameDescriptor.WRITE_REMOTE_OFFSET_OFFSET);
        int dataLength = intAt(FrameDescriptor.WRITE_DATA_LENGTH_OFFSET);
        String bad = FrameBuffers.checkWrite(flags, curFrameLength, dataLength, acceptsPlacedWrites());
        if (bad != null) {
            throw new ProtocolException("WRITE frame from '" + peerName() + "' " + bad);
        }
        skip(FrameDescriptor.WRITE_HEADER_LENGTH);
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
        // (the cached region was reachable on this connection when cached: its grant never changes)
        RegionImpl region = rkey == lastKey && lastRegion != null && lastRegion.live() ? lastRegion
            : node.lookupRemote(rkey, conn);
        if (region == null || offset < 0 || dataLength > region.length() || offset > region.length() - dataLength) {
            String err = node.checkRemoteWrite(rkey, offset, dataLength, conn);
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

    /**
     * A peer's READ: checked (the key readable on this connection, the range inside the region, the length within
     * this node's {@code maxTransferSize}) and answered at once from the region's memory, or refused with an answer that fails that READ
     * only. Nothing is allocated in proportion to the length asked for. Then it counts as handled: the ACK that
     * covers it goes out behind the answer.
     */
    private boolean readRequest(int readable, int flags, long seq) {
        if (readable < FrameDescriptor.READ_LENGTH) {
            return false;
        }
        int rkey = intAt(FrameDescriptor.WRITE_KEY_OFFSET);
        long offset = longAt(FrameDescriptor.WRITE_REMOTE_OFFSET_OFFSET);
        int length = intAt(FrameDescriptor.READ_LENGTH_OFFSET);
        skip(FrameDescriptor.READ_LENGTH);
        RegionImpl region = node.lookupRemoteRead(rkey, conn);
        String refusal = null;
        int max = node.options().maxTransferSize();
        if (length > max) { // a region may be longer (a file): one answer is not
            refusal = "READ length=" + length + " of rkey=0x" + Integer.toHexString(rkey) + " exceeds maxTransferSize="
                + max + " of node '" + node.name() + "'";
            region = null;
        } else if (region == null || length < 0 || offset < 0 || length > region.length()
            || offset > region.length() - length) {
            refusal = node.checkRemoteRead(rkey, offset, length, conn);
            if (refusal == null) { // released or re-checked between the two looks
                refusal = "no remotely readable region with rkey=0x" + Integer.toHexString(rkey) + " at node '"
                    + node.name() + "'";
            }
            region = null;
        }
        boolean backedUp = answerRead(conn, seq, region, (int) offset, length, refusal);
        handled(seq, flags & ~FrameDescriptor.FLAG_UNSIGNALED);
        if (backedUp && state == S_HEADER) {
            state = S_ANSWER_WAIT;
            pauseReading();
            whenOutputDrained(this::outputDrained);
            return false;
        }
        return state != S_DISCARD;
    }

    /** The output drained after a READ's answer backed it up: frames are handled again. I/O thread. */
    private void outputDrained() {
        if (state != S_ANSWER_WAIT) {
            return;
        }
        state = S_HEADER;
        resumeReading();
        process();
        sendAck();
    }

    /** The answer to one of this side's READs: its bytes go into the READ's region, or the refusal is recorded. */
    private boolean readAnswer(int readable, long seq) throws ProtocolException {
        if (readable < FrameDescriptor.ANSWER_HEADER_LENGTH) {
            return false;
        }
        int status = unsignedShortAt(FrameDescriptor.ANSWER_STATUS_OFFSET);
        int length = intAt(FrameDescriptor.ANSWER_LENGTH_OFFSET);
        String bad = FrameBuffers.checkAnswer(status, curFrameLength, length);
        if (bad != null) {
            throw new ProtocolException("READ_ANSWER frame from '" + peerName() + "' " + bad);
        }
        if (status == Status.SUCCESS.ordinal()) {
            target = readTarget(conn, seq, length);
            skip(FrameDescriptor.ANSWER_HEADER_LENGTH);
            remaining = length;
            curFrameLength = FrameDescriptor.ANSWER_HEADER_LENGTH + length;
            state = S_ANSWER_DATA;
            return true;
        }
        if (readable < curFrameLength) {
            awaitFrame(curFrameLength);
            return false;
        }
        ByteBuffer f = frameView(curFrameLength);
        skip(curFrameLength);
        readRefused(conn, seq, Status.values()[status], FrameBuffers.text(f, FrameDescriptor.ANSWER_HEADER_LENGTH));
        return true;
    }

    private boolean sendHeader(int flags, long seq) {
        skip(HEADER_LENGTH);
        curSeq = seq;
        curFlags = flags;
        curLength = curFrameLength - HEADER_LENGTH;
        state = S_SEND_RECV;
        return true;
    }

    /** A whole control frame is readable: handles it (it is passed over before anything it sets off runs). */
    private void control(int type, long seq, int length) throws ProtocolException {
        switch (type) {
            case FrameDescriptor.TYPE_PING:
                skip(length);
                return;
            case FrameDescriptor.TYPE_ACK:
                skip(length);
                requireEstablished(type);
                onAck(conn, seq);
                return;
            default:
                break;
        }
        ByteBuffer f = frameView(length);
        skip(length);
        switch (type) {
            case FrameDescriptor.TYPE_ERROR:
                peerError(FrameBuffers.text(f, HEADER_LENGTH));
                return;
            case FrameDescriptor.TYPE_NAK: {
                requireEstablished(type);
                int st = Short.toUnsignedInt(f.getShort(HEADER_LENGTH));
                String bad = FrameBuffers.checkNakStatus(st);
                if (bad != null) {
                    throw new ProtocolException("NAK from '" + peerName() + "' " + bad);
                }
                onNak(conn, seq, Status.values()[st], FrameBuffers.text(f, HEADER_LENGTH + 2));
                return;
            }
            case FrameDescriptor.TYPE_HELLO:
                handshake.hello(f);
                return;
            case FrameDescriptor.TYPE_AUTH:
                handshake.auth(f);
                return;
            case FrameDescriptor.TYPE_READY:
                handshake.ready(f);
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

    /** The handshake is over (established or failed): release its slot and its timer. */
    protected final void handshakeOver() {
        handshake.handshakeOver();
    }

    // ---- failures ----

    /** The handshake did not complete within {@code handshakeTimeout}: refused with an ERROR. */
    protected final void handshakeTimedOut() {
        handshake.handshakeTimedOut();
    }

    private void refuse(long seq, Status status, String why) {
        ackDue = true;
        sendAck();
        writeNak(conn, seq, status, why);
        discard();
        conn.fail(new ConnectionClosedException(peerName(), "refused request seq=" + seq + " from peer '"
            + peerName() + "': " + why, null));
    }

    private void protocolError(ProtocolException e) {
        log.warn("node '{}': closing the connection with '{}': {}", node.name(), peerName(), e.getMessage());
        if (conn != null) {
            discard();
            conn.fail(e);
        } else {
            if (active) {
                connectFuture.completeExceptionally(e);
            }
            handshake.sendErrorAndClose(e.getMessage());
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
        closeIo();
    }

    /**
     * The stream ended (or the socket was closed here): the input is dropped and the connection goes down with
     * a cause that names the peer (a truncated frame if the stream ended inside one), or the dial fails.
     */
    protected final void streamEnded() {
        int pending = readable();
        boolean midFrame = state == S_WRITE_DATA || state == S_SEND_DATA || state == S_ANSWER_DATA
            || ((state == S_HEADER || state == S_IMM_RECV || state == S_SEND_RECV) && pending > 0);
        RdmxException cause;
        if (midFrame) {
            int got = curFrameLength - remaining;
            cause = new ProtocolException("truncated frame from '" + peerName() + "': the stream ended "
                + (state == S_WRITE_DATA || state == S_SEND_DATA || state == S_ANSWER_DATA
                    ? "after " + got + " of " + curFrameLength
                    + " bytes" : "inside a frame (" + pending + " bytes pending)"));
        } else {
            cause = new ConnectionClosedException(peerName(), "connection to peer '" + peerName()
                + "' lost: the peer closed it or died", null);
        }
        dropInput();
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
     * A read or write on the socket failed: the connection goes down (or the dial fails) with a cause naming the
     * peer. The provider closes the socket.
     *
     * @param e the error
     */
    protected final void socketFailed(Throwable e) {
        RdmxException x = new ConnectionClosedException(peerName(), "connection to peer '" + peerName()
            + "' lost: " + e.getMessage(), e);
        if (conn != null) {
            conn.fail(x);
        } else if (active) {
            connectFuture.completeExceptionally(x);
        }
    }

    /**
     * Nothing was read for {@code peerTimeout}: the connection goes down, or the dial fails.
     *
     * @param discardFirst whether to stop handling input before failing the connection
     * @return true if the connection was established (else the provider closes the socket)
     */
    protected final boolean peerSilent(boolean discardFirst) {
        String why = "peer '" + peerName() + "' silent for " + node.options().peerTimeout().toMillis()
            + " ms (peerTimeout): presumed hung or dead";
        if (conn != null) {
            if (discardFirst) {
                discard();
            }
            conn.fail(new ConnectionClosedException(peerName(), why, null));
            return true;
        }
        if (active) {
            connectFuture.completeExceptionally(new RdmxException(why));
        }
        return false;
    }
}
