package io.rdmx.transport.stream;

import static io.rdmx.transport.wire.FrameDescriptor.HEADER_LENGTH;
import static io.rdmx.transport.wire.FrameDescriptor.VERSION;

import io.rdmx.transport.wire.FrameDescriptor;
import io.rdmx.transport.wire.FrameBuffers;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.rdmx.transport.ProtocolException;
import io.rdmx.transport.RemoteRegion;
import java.util.List;

/**
 * Netty encoders and parsers of the stream protocol (see {@link FrameDescriptor}); the control frames and the
 * HELLO/READY parsers are those of {@link FrameBuffers}, shared with the JDK path of the shm provider.
 */
public final class FrameCodec {
    private FrameCodec() {
    }

    /**
     * Writes a common header.
     *
     * @param buf target
     * @param type frame type
     * @param flags flags
     * @param frameLength whole frame length
     * @param seq sequence number
     * @return the buffer
     */
    public static ByteBuf header(ByteBuf buf, int type, int flags, int frameLength, long seq) {
        buf.writeByte(VERSION);
        buf.writeByte(type);
        buf.writeShortLE(flags);
        buf.writeIntLE(frameLength);
        buf.writeLongLE(seq);
        return buf;
    }

    /**
     * A frame with only a header (READY, ACK, PING).
     *
     * @param alloc allocator
     * @param type frame type
     * @param seq sequence number (the acknowledged one for ACK)
     * @return the frame
     */
    public static ByteBuf simple(ByteBufAllocator alloc, int type, long seq) {
        return header(alloc.directBuffer(HEADER_LENGTH), type, 0, HEADER_LENGTH, seq);
    }

    /**
     * An ERROR frame.
     *
     * @param alloc allocator
     * @param message why the sender closes
     * @return the frame
     */
    public static ByteBuf error(ByteBufAllocator alloc, String message) {
        return copy(alloc, FrameBuffers.error(message));
    }

    /**
     * A NAK frame.
     *
     * @param alloc allocator
     * @param seq the failed request
     * @param status the status ordinal it completes with
     * @param message why
     * @return the frame
     */
    public static ByteBuf nak(ByteBufAllocator alloc, long seq, int status, String message) {
        return copy(alloc, FrameBuffers.nak(seq, status, message));
    }

    /**
     * @param alloc allocator
     * @param frame a frame of {@link FrameBuffers}, from its position to its limit
     * @return a direct buffer holding it
     */
    static ByteBuf copy(ByteBufAllocator alloc, java.nio.ByteBuffer frame) {
        return alloc.directBuffer(frame.remaining()).writeBytes(frame);
    }


    /**
     * A WRITE header; the data (if not placed) follows as a separate buffer.
     *
     * @param alloc allocator
     * @param flags WITH_IMM, PLACED, UNSIGNALED
     * @param seq sequence number
     * @param rkey remote key
     * @param imm immediate
     * @param remoteOffset offset in the target region
     * @param length data length
     * @return the header
     */
    public static ByteBuf writeHeader(ByteBufAllocator alloc, int flags, long seq, int rkey, int imm,
                                      long remoteOffset, int length) {
        boolean placed = (flags & FrameDescriptor.FLAG_PLACED) != 0;
        int frameLength = FrameDescriptor.WRITE_HEADER_LENGTH + (placed ? 0 : length);
        ByteBuf b = alloc.directBuffer(FrameDescriptor.WRITE_HEADER_LENGTH);
        header(b, FrameDescriptor.TYPE_WRITE, flags, frameLength, seq);
        b.writeIntLE(rkey);
        b.writeIntLE(imm);
        b.writeLongLE(remoteOffset);
        b.writeIntLE(length);
        b.writeIntLE(0);
        return b;
    }

    /**
     * A SEND header without flags; the data follows as a separate buffer.
     *
     * @param alloc allocator
     * @param seq sequence number
     * @param length data length
     * @return the header
     */
    public static ByteBuf sendHeader(ByteBufAllocator alloc, long seq, int length) {
        return sendHeader(alloc, 0, seq, length);
    }

    /**
     * A SEND header; the data follows as a separate buffer.
     *
     * @param alloc allocator
     * @param flags UNSIGNALED or 0
     * @param seq sequence number
     * @param length data length
     * @return the header
     */
    public static ByteBuf sendHeader(ByteBufAllocator alloc, int flags, long seq, int length) {
        return header(alloc.directBuffer(HEADER_LENGTH), FrameDescriptor.TYPE_SEND, flags, HEADER_LENGTH + length,
            seq);
    }

    /**
     * A HELLO frame.
     *
     * @param alloc allocator
     * @param hello the content
     * @return the frame
     * @throws IllegalArgumentException if the name or address is longer than the protocol allows
     */
    public static ByteBuf hello(ByteBufAllocator alloc, FrameBuffers.Hello hello) {
        return copy(alloc, FrameBuffers.hello(hello));
    }

    /**
     * A READY frame carrying the sender's region descriptors (at most {@link FrameDescriptor#MAX_REGIONS}).
     *
     * @param alloc allocator
     * @param regions the sender's remotely writable regions
     * @return the frame
     * @throws IllegalArgumentException if there are more regions than a READY carries
     */
    public static ByteBuf ready(ByteBufAllocator alloc, List<RemoteRegion> regions) {
        return copy(alloc, FrameBuffers.ready(regions));
    }

    /**
     * Parses a whole READY frame ({@link FrameBuffers#parseReady}).
     *
     * @param frame the frame, reader index at its start
     * @return the sender's region descriptors
     * @throws ProtocolException if the count does not match the length or a descriptor is invalid
     */
    public static List<RemoteRegion> parseReady(ByteBuf frame) throws ProtocolException {
        return FrameBuffers.parseReady(frame.nioBuffer(frame.readerIndex(), frame.readableBytes()));
    }

    /**
     * An AUTH frame.
     *
     * @param alloc allocator
     * @param mac the proof
     * @return the frame
     */
    public static ByteBuf auth(ByteBufAllocator alloc, byte[] mac) {
        return copy(alloc, FrameBuffers.auth(mac));
    }

    /**
     * Parses a whole HELLO frame ({@link FrameBuffers#parseHello}).
     *
     * @param frame the frame, reader index at its start
     * @return the content
     * @throws ProtocolException if a field runs past the frame, a name is invalid or bytes trail
     */
    public static FrameBuffers.Hello parseHello(ByteBuf frame) throws ProtocolException {
        return FrameBuffers.parseHello(frame.nioBuffer(frame.readerIndex(), frame.readableBytes()));
    }
}
