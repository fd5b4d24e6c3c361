package io.rdmx.transport.stream;

import static io.rdmx.transport.stream.FrameDescriptor.HEADER_LENGTH;
import static io.rdmx.transport.stream.FrameDescriptor.VERSION;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.rdmx.transport.ProtocolException;
import io.rdmx.transport.RemoteRegion;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Encoders and the HELLO parser of the stream protocol (see {@link FrameDescriptor}). */
public final class FrameCodec {
    private FrameCodec() {
    }

    /** A parsed HELLO. */
    public record Hello(boolean hasSecret, byte[] nonce, String name, String address, List<RemoteRegion> regions) {
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
        byte[] m = truncate(message);
        ByteBuf b = alloc.directBuffer(HEADER_LENGTH + m.length);
        header(b, FrameDescriptor.TYPE_ERROR, 0, HEADER_LENGTH + m.length, 0);
        return b.writeBytes(m);
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
        byte[] m = truncate(message);
        ByteBuf b = alloc.directBuffer(HEADER_LENGTH + 2 + m.length);
        header(b, FrameDescriptor.TYPE_NAK, 0, HEADER_LENGTH + 2 + m.length, seq);
        b.writeShortLE(status);
        return b.writeBytes(m);
    }

    private static byte[] truncate(String s) {
        byte[] m = s.getBytes(StandardCharsets.UTF_8);
        if (m.length > 4096) {
            byte[] t = new byte[4096];
            System.arraycopy(m, 0, t, 0, t.length);
            return t;
        }
        return m;
    }

    /**
     * A WRITE header; the data (if not placed) follows as a separate buffer.
     *
     * @param alloc allocator
     * @param flags WITH_IMM, PLACED
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
     * A SEND header; the data follows as a separate buffer.
     *
     * @param alloc allocator
     * @param seq sequence number
     * @param length data length
     * @return the header
     */
    public static ByteBuf sendHeader(ByteBufAllocator alloc, long seq, int length) {
        return header(alloc.directBuffer(HEADER_LENGTH), FrameDescriptor.TYPE_SEND, 0, HEADER_LENGTH + length, seq);
    }

    /**
     * A HELLO frame.
     *
     * @param alloc allocator
     * @param hello the content
     * @return the frame
     */
    public static ByteBuf hello(ByteBufAllocator alloc, Hello hello) {
        byte[] name = hello.name().getBytes(StandardCharsets.UTF_8);
        byte[] addr = hello.address().getBytes(StandardCharsets.UTF_8);
        int n = Math.min(hello.regions().size(), 4096);
        int len = HEADER_LENGTH + FrameDescriptor.NONCE_LENGTH + 2 + name.length + 2 + addr.length + 2
            + n * RemoteRegion.ENCODED_LENGTH;
        ByteBuf b = alloc.directBuffer(len);
        header(b, FrameDescriptor.TYPE_HELLO, hello.hasSecret() ? FrameDescriptor.FLAG_SECRET : 0, len, 0);
        b.writeBytes(hello.nonce());
        b.writeShortLE(name.length).writeBytes(name);
        b.writeShortLE(addr.length).writeBytes(addr);
        b.writeShortLE(n);
        for (int i = 0; i < n; i++) {
            RemoteRegion r = hello.regions().get(i);
            b.writeLongLE(r.address());
            b.writeIntLE(r.length());
            b.writeIntLE(r.remoteKey());
        }
        return b;
    }

    /**
     * An AUTH frame.
     *
     * @param alloc allocator
     * @param mac the proof
     * @return the frame
     */
    public static ByteBuf auth(ByteBufAllocator alloc, byte[] mac) {
        ByteBuf b = alloc.directBuffer(HEADER_LENGTH + mac.length);
        header(b, FrameDescriptor.TYPE_AUTH, 0, HEADER_LENGTH + mac.length, 0);
        return b.writeBytes(mac);
    }

    /**
     * Parses a whole HELLO frame.
     *
     * @param frame the frame, reader index at its start
     * @return the content
     * @throws ProtocolException if a field runs past the frame
     */
    public static Hello parseHello(ByteBuf frame) throws ProtocolException {
        int flags = frame.getUnsignedShortLE(frame.readerIndex() + FrameDescriptor.FLAGS_OFFSET);
        ByteBuf b = frame.duplicate();
        b.skipBytes(HEADER_LENGTH);
        byte[] nonce = new byte[FrameDescriptor.NONCE_LENGTH];
        b.readBytes(nonce);
        String name = readString(b, "name");
        String address = readString(b, "address");
        need(b, 2, "region count");
        int n = b.readUnsignedShortLE();
        need(b, (long) n * RemoteRegion.ENCODED_LENGTH, "regions");
        List<RemoteRegion> regions = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            long address0 = b.readLongLE();
            int length = b.readIntLE();
            int key = b.readIntLE();
            if (length < 0) {
                throw new ProtocolException("HELLO region " + i + " has negative length=" + length);
            }
            regions.add(new RemoteRegion(address0, length, key));
        }
        if (b.isReadable()) {
            throw new ProtocolException("HELLO has " + b.readableBytes() + " trailing bytes");
        }
        return new Hello((flags & FrameDescriptor.FLAG_SECRET) != 0, nonce, name, address, regions);
    }

    private static String readString(ByteBuf b, String what) throws ProtocolException {
        need(b, 2, what + " length");
        int len = b.readUnsignedShortLE();
        need(b, len, what);
        return b.readCharSequence(len, StandardCharsets.UTF_8).toString();
    }

    private static void need(ByteBuf b, long n, String what) throws ProtocolException {
        if (b.readableBytes() < n) {
            throw new ProtocolException("HELLO truncated in " + what + ": need=" + n + " have="
                + b.readableBytes());
        }
    }
}
