package io.rdmx.transport.selector;

import io.rdmx.transport.internal.RegionImpl;
import io.rdmx.transport.wire.FrameBuffers;
import io.rdmx.transport.wire.FrameDescriptor;
import io.rdmx.transport.wire.RegionViews;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * How a {@link SocketConnection}'s frames reach its socket: the one place the stream providers build and write
 * frames. A request frame's header is built in a reused direct buffer and written with the region's memory in
 * one gathering write ({@link SocketIo#write}; what the socket does not take goes to the I/O thread, in order);
 * a cork ({@link #cork}) holds up to {@value #CORK_FRAMES} frames and writes them in one gathering write; an ACK
 * that a reading thread owes ({@link #oweAck}) rides in front of the next frame's header, in the same system
 * call. Nothing is allocated per frame (a cork slot's header buffer once, on its first use).
 *
 * <p>Not thread-safe: every method runs under the connection's send lock, which orders the frames; only
 * {@link #owesAck()} may be called without it (a hint, checked again under the lock).
 */
final class FrameWriter {
    /** Frames a corked connection holds at most ({@link #cork}); one more writes those held first. */
    static final int CORK_FRAMES = 16;

    private final SocketIo io;
    private final ByteBuffer header = ByteBuffer.allocateDirect(FrameDescriptor.HEADER_LENGTH
        + FrameDescriptor.WRITE_HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
    /**
     * The ACK a thread that read the socket itself owes the peer (0: none; see {@link #oweAck}); written under
     * the send lock, read without it to skip the lock.
     */
    private volatile long ackOwed;
    private final RegionViews views = new RegionViews();
    /** Cork depth ({@link #cork}), and what the cork holds: headers copied into slots, payload views per slot. */
    private int corked;
    private int corkFrames;
    private int corkBuffers;
    private int corkCopyMask;
    private final ByteBuffer[] corkIov = new ByteBuffer[2 * CORK_FRAMES];
    private final ByteBuffer[] corkHeaders = new ByteBuffer[CORK_FRAMES];
    private final RegionViews[] corkViews = new RegionViews[CORK_FRAMES];
    /** Frames written so far (the I/O thread's keep-alive reads it under the send lock). */
    private long framesOut;

    /** @param io the connection's socket */
    FrameWriter(SocketIo io) {
        this.io = io;
    }

    /** Frames from now until the matching {@link #uncork} go out together. Nests. */
    void cork() {
        corked++;
    }

    /** Ends a {@link #cork}; the outermost writes what the cork holds. */
    void uncork() {
        if (corked > 0 && --corked == 0) {
            flushCork();
        }
    }

    /** Writes what the cork holds, in one gathering write. */
    void flushCork() {
        if (corkBuffers == 0) {
            return;
        }
        ByteBuffer[] iov = corkIov;
        // a failed write is the I/O thread's to report (it meets the same closed socket and fails the connection)
        io.write(iov, corkBuffers, corkCopyMask);
        for (int i = 0; i < corkBuffers; i++) {
            iov[i] = null;
        }
        corkBuffers = 0;
        corkFrames = 0;
        corkCopyMask = 0;
    }

    /** Builds the header in the reused buffer and writes it with the carried data. */
    void request(int type, int flags, long seq, int rkey, int imm, long remoteOffset, int dataLength,
                            RegionImpl local, int localOffset, int carried) {
        int hl = type == FrameDescriptor.TYPE_WRITE || type == FrameDescriptor.TYPE_READ
            ? FrameDescriptor.WRITE_HEADER_LENGTH : FrameDescriptor.HEADER_LENGTH;
        if (corked > 0) {
            writeCorked(type, flags, seq, rkey, imm, remoteOffset, dataLength, local, localOffset, carried, hl);
            return;
        }
        ByteBuffer h = header;
        h.clear();
        putOwedAck(h);
        FrameBuffers.header(h, type, flags, hl + carried, seq);
        if (type == FrameDescriptor.TYPE_WRITE || type == FrameDescriptor.TYPE_READ) {
            h.putInt(rkey).putInt(imm).putLong(remoteOffset).putInt(dataLength).putInt(0);
        }
        h.flip();
        ByteBuffer payload = null;
        if (carried > 0) {
            payload = views.view(local);
            payload.position(localOffset).limit(localOffset + carried);
        }
        framesOut++;
        // a failed write is the I/O thread's to report (it meets the same closed socket and fails the connection)
        io.write(h, payload);
    }

    /** Corked: adds the frame to what the cork holds. */
    private void writeCorked(int type, int flags, long seq, int rkey, int imm, long remoteOffset, int dataLength,
                             RegionImpl local, int localOffset, int carried, int hl) {
        ByteBuffer h = corkSlot();
        int slot = corkFrames - 1;
        putOwedAck(h);
        FrameBuffers.header(h, type, flags, hl + carried, seq);
        if (type == FrameDescriptor.TYPE_WRITE || type == FrameDescriptor.TYPE_READ) {
            h.putInt(rkey).putInt(imm).putLong(remoteOffset).putInt(dataLength).putInt(0);
        }
        corkCopyMask |= 1 << corkBuffers;
        corkIov[corkBuffers++] = h.flip();
        if (carried > 0) {
            ByteBuffer payload = corkViews[slot].view(local);
            payload.position(localOffset).limit(localOffset + carried);
            corkIov[corkBuffers++] = payload;
        }
        framesOut++;
    }

    /** @return the next cork slot's header buffer, cleared (what the cork holds is written first if it is full) */
    private ByteBuffer corkSlot() {
        if (corkFrames == CORK_FRAMES) {
            flushCork();
        }
        int slot = corkFrames++;
        ByteBuffer h = corkHeaders[slot];
        if (h == null) {
            h = ByteBuffer.allocateDirect(header.capacity()).order(ByteOrder.LITTLE_ENDIAN);
            corkHeaders[slot] = h;
            corkViews[slot] = new RegionViews();
        }
        return h.clear();
    }

    /**
     * Writes the answer to a peer's READ: the header built here, the bytes a view of the region's memory (not
     * copied; what the socket does not take now waits in the outbox as a view), in one gathering write, behind the
     * frames a cork holds (corked: into the cork).
     *
     * @param seq the READ answered
     * @param region the region read
     * @param offset where in it
     * @param length bytes
     */
    void answer(long seq, RegionImpl region, int offset, int length) {
        boolean cork = corked > 0;
        ByteBuffer h = cork ? corkSlot() : header.clear();
        RegionViews v = cork ? corkViews[corkFrames - 1] : views;
        putOwedAck(h);
        FrameBuffers.header(h, FrameDescriptor.TYPE_READ_ANSWER, 0, FrameDescriptor.ANSWER_HEADER_LENGTH + length, seq);
        h.putShort((short) 0).putShort((short) 0).putInt(length).flip();
        ByteBuffer payload = null;
        if (length > 0) {
            payload = v.view(region);
            payload.position(offset).limit(offset + length);
        }
        framesOut++;
        if (!cork) {
            io.write(h, payload);
            return;
        }
        corkCopyMask |= 1 << corkBuffers;
        corkIov[corkBuffers++] = h;
        if (payload != null) {
            corkIov[corkBuffers++] = payload;
        }
    }

    /**
     * Writes a control frame (ACK, PING) behind the frames a cork holds (corked: into the cork, written with them);
     * an owed ACK the frame does not cover goes in front of it.
     *
     * @param type {@link FrameDescriptor#TYPE_ACK} or {@link FrameDescriptor#TYPE_PING}
     * @param seq the sequence number (the highest handled, for an ACK)
     */
    void control(int type, long seq) {
        if (type == FrameDescriptor.TYPE_ACK && seq >= ackOwed) {
            ackOwed = 0; // this one covers it
        }
        if (corked > 0) {
            // behind the frames the cork holds, in the same gathering write (the I/O thread corks a read batch:
            // the frames its completions posted and the batch's ACK leave in one system call)
            ByteBuffer h = corkSlot();
            putOwedAck(h);
            FrameBuffers.header(h, type, 0, FrameDescriptor.HEADER_LENGTH, seq);
            corkCopyMask |= 1 << corkBuffers;
            corkIov[corkBuffers++] = h.flip();
            framesOut++;
            return;
        }
        ByteBuffer h = header;
        h.clear();
        putOwedAck(h);
        FrameBuffers.header(h, type, 0, FrameDescriptor.HEADER_LENGTH, seq);
        framesOut++;
        io.write(h.flip(), null);
    }

    /**
     * Records an ACK owed to the peer: it rides in front of the next frame ({@link SocketConnection#oweAck}).
     *
     * @param seq the highest request handled
     */
    void oweAck(long seq) {
        if (seq > ackOwed) {
            ackOwed = seq;
        }
    }

    /** @return true if an ACK is owed (any thread: a hint, checked again under the send lock) */
    boolean owesAck() {
        return ackOwed != 0;
    }

    /** Writes the owed ACK now, if any, behind the frames a cork holds. */
    void payAck() {
        if (ackOwed == 0) {
            return;
        }
        flushCork();
        ByteBuffer h = header;
        h.clear();
        putOwedAck(h);
        io.write(h.flip(), null);
    }

    /** Puts the owed ACK frame, if any, where the next frame's header starts. */
    private void putOwedAck(ByteBuffer h) {
        long owed = ackOwed;
        if (owed != 0) {
            FrameBuffers.header(h, FrameDescriptor.TYPE_ACK, 0, FrameDescriptor.HEADER_LENGTH, owed);
            ackOwed = 0;
            framesOut++;
        }
    }

    /**
     * Writes a complete frame (NAK) as it is.
     *
     * @param frame the frame
     */
    void frame(ByteBuffer frame) {
        framesOut++;
        io.write(frame, null);
    }

    /** @return frames written so far */
    long framesOut() {
        return framesOut;
    }
}
