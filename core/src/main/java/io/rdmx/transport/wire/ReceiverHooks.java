package io.rdmx.transport.wire;

import io.rdmx.transport.ProtocolException;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.Status;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.internal.RegionImpl;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * What a stream provider supplies to its {@link FrameReceiver}, apart from the ACK hooks the receiver declares
 * itself: where the unread input is, who owns the thread, how frames are written and the socket closed, and what
 * the node and the connection do at each step. Plain methods that the state machine (and its {@link Handshake})
 * calls on the I/O thread: no hand-off, lock, copy or allocation per frame.
 *
 * <p>Declarations only, no state: the provider overrides them on its {@link FrameReceiver} subclass.
 *
 * @param <C> the provider's connection type
 */
abstract class ReceiverHooks<C extends AbstractConnection> {
    // ---- what the provider supplies: the input (unread bytes, from the read position) ----

    /** @return unread input bytes */
    protected abstract int readable();

    /**
     * @param at offset from the read position
     * @return the unsigned byte there
     */
    protected abstract int byteAt(int at);

    /**
     * @param at offset from the read position
     * @return the unsigned little-endian 16-bit value there
     */
    protected abstract int unsignedShortAt(int at);

    /**
     * @param at offset from the read position
     * @return the little-endian int there
     */
    protected abstract int intAt(int at);

    /**
     * @param at offset from the read position
     * @return the little-endian long there
     */
    protected abstract long longAt(int at);

    /** @param n bytes of input to pass over (at most {@link #readable()}) */
    protected abstract void skip(int n);

    /**
     * Copies input into a target region's view at its position, advancing both.
     *
     * @param target the view
     * @param n bytes (at most {@link #readable()})
     */
    protected abstract void copyTo(ByteBuffer target, int n);

    /**
     * A little-endian view of the next {@code length} bytes of input (a whole control frame, readable), valid
     * until the input is read further or dropped; the read position is not moved.
     *
     * @param length the frame length
     * @return the view, position 0
     */
    protected abstract ByteBuffer frameView(int length);

    /**
     * A control frame of {@code length} bytes is not all here yet. A provider whose input buffer is smaller
     * than the frame grows it here (a READY larger than the handshake's read buffer).
     *
     * @param length the frame length (validated)
     */
    protected void awaitFrame(int length) {
    }

    /** Drops all unread input (the connection is going down). */
    protected abstract void dropInput();

    /** Reading from the socket goes on (a receive was posted, or the input is discarded). */
    protected abstract void resumeReading();

    /** A SEND waits for a receive: stop reading from the socket once the provider holds enough input. */
    protected abstract void pauseReading();

    /** After each run of the state machine: the provider may release an empty input buffer. */
    protected void processed() {
    }

    // ---- the thread ----

    /** @return true on the I/O thread */
    protected abstract boolean inIoThread();

    /** @param task runs on the I/O thread */
    protected abstract void execute(Runnable task);

    // ---- output ----

    /**
     * Writes a NAK behind whatever the connection wrote.
     *
     * @param c the connection
     * @param seq the refused request
     * @param status its status
     * @param why the explanation
     */
    protected abstract void writeNak(C c, long seq, Status status, String why);

    /**
     * Writes a frame of the handshake (the connection is not established).
     *
     * @param frame the frame
     * @param flush whether the frames written so far go out now (a provider that writes each at once ignores it)
     */
    protected abstract void writeHandshake(ByteBuffer frame, boolean flush);

    /**
     * Writes an ERROR frame and closes the socket once it went out (or after a bounded linger).
     *
     * @param frame the ERROR frame
     * @param early true when refused before any handshake step ran (too many handshakes pending)
     */
    protected abstract void writeErrorAndClose(ByteBuffer frame, boolean early);

    /** Closes the socket now. */
    protected abstract void closeIo();

    /** The handshake is over: the provider stops its deadline. */
    protected abstract void stopHandshakeTimer();

    // ---- the node and the connection ----

    /** @return who is at the other end of the socket, for messages before the peer named itself */
    protected abstract String describeRemote();

    /**
     * @return the IP address an accepted connection comes from, counted against the caps per source address; null
     *     where every peer is a process of this host (shm), the default
     */
    protected String sourceAddress() {
        return null;
    }

    /**
     * @param peerAddress the address an accepted peer advertises
     * @return null to go on, else why the peer is refused
     */
    protected abstract String checkAcceptedPeer(String peerAddress);

    /** @return true if the provider's peers may place WRITE data themselves ({@link FrameDescriptor#FLAG_PLACED}) */
    protected abstract boolean acceptsPlacedWrites();

    /**
     * @param peerName the peer's name
     * @param peerAddress its address (the one dialed on the dialing side)
     * @param regions its regions
     * @return the new connection (not yet added to the node)
     */
    protected abstract C newConnection(String peerName, String peerAddress, List<RemoteRegion> regions);

    /**
     * The accepting side: offers the new connection to the application and writes READY (our regions), in an
     * order where nothing the application posts once it has the connection overtakes READY.
     *
     * @param c the connection, added to the node
     * @param ready the READY frame
     * @return false if the accept backlog is full (nothing was written)
     */
    protected abstract boolean offerAndReady(C c, ByteBuffer ready);

    /**
     * The connection is established ({@link FrameReceiver#connection()} set), before the dialing side's future
     * completes.
     *
     * @param c the connection
     */
    protected void onEstablished(C c) {
    }

    /**
     * @param c the connection
     * @param seq the request the peer refused
     * @param status its status
     * @param message the peer's explanation
     */
    protected abstract void onNak(C c, long seq, Status status, String message);

    // ---- READ ----

    /**
     * Answers a peer's READ, behind whatever the connection wrote before: the region's bytes straight from its
     * memory (a gathering write of the answer's header and a view of the region, nothing copied), or a refusal.
     *
     * @param c the connection
     * @param seq the READ's sequence number
     * @param region the region read (checked: readable on this connection, the range inside it), or null if refused
     * @param offset where in the region
     * @param length bytes
     * @param refusal why the READ is refused (names the values), or null
     * @return true if the connection's output is backed up (the peer reads slowly): handle no further frame until
     *     it drained ({@link #whenOutputDrained}), so a peer cannot make this node queue more than a bounded number
     *     of answers
     */
    protected abstract boolean answerRead(C c, long seq, RegionImpl region, int offset, int length, String refusal);

    /**
     * Runs a task on the I/O thread once the connection's output drained (at once if it has).
     *
     * @param task the task
     */
    protected abstract void whenOutputDrained(Runnable task);

    /**
     * The answer to this side's oldest unanswered READ arrived with its bytes: where they go.
     *
     * @param c the connection
     * @param seq the sequence number the answer carries
     * @param length its payload length
     * @return a view of the READ's local region, positioned at its offset (its limit the region's capacity)
     * @throws ProtocolException naming the peer if this side has no such READ outstanding or its length differs
     */
    protected abstract ByteBuffer readTarget(C c, long seq, int length) throws ProtocolException;

    /**
     * The peer refused this side's oldest unanswered READ: it completes (in order, with the ACK that covers it)
     * with the status and the message.
     *
     * @param c the connection
     * @param seq the sequence number the answer carries
     * @param status the status
     * @param message the peer's explanation
     * @throws ProtocolException naming the peer if this side has no such READ outstanding
     */
    protected abstract void readRefused(C c, long seq, Status status, String message) throws ProtocolException;
}
