package io.rdmx.transport.stream;

import static io.rdmx.transport.stream.FrameDescriptor.HEADER_LENGTH;
import static io.rdmx.transport.stream.FrameDescriptor.VERSION;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.rdmx.transport.ProtocolException;
import io.rdmx.transport.RemoteRegion;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** Encoders and the HELLO parser of the stream protocol (see {@link FrameDescriptor}). */
public final class FrameCodec {
    private FrameCodec() {
    }

    /**
     * A parsed HELLO.
     *
     * @param hasSecret the sender has a cluster secret
     * @param nonce the sender's challenge ({@link FrameDescriptor#NONCE_LENGTH} bytes)
     * @param name the sender's node name
     * @param address the sender's advertised address
     */
    public record Hello(boolean hasSecret, byte[] nonce, String name, String address) {
    }

    private static final java.util.regex.Pattern NAME = java.util.regex.Pattern.compile("[A-Za-z0-9_.-]{1,64}");

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
        if (m.length > FrameDescriptor.MAX_MESSAGE_LENGTH) {
            byte[] t = new byte[FrameDescriptor.MAX_MESSAGE_LENGTH];
            System.arraycopy(m, 0, t, 0, t.length);
            return t;
        }
        return m;
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
    public static ByteBuf hello(ByteBufAllocator alloc, Hello hello) {
        byte[] name = hello.name().getBytes(StandardCharsets.UTF_8);
        byte[] addr = hello.address().getBytes(StandardCharsets.UTF_8);
        if (name.length > FrameDescriptor.MAX_NAME_LENGTH || addr.length > FrameDescriptor.MAX_ADDRESS_LENGTH) {
            throw new IllegalArgumentException("HELLO name length=" + name.length + " (max="
                + FrameDescriptor.MAX_NAME_LENGTH + ") or address length=" + addr.length + " (max="
                + FrameDescriptor.MAX_ADDRESS_LENGTH + ") too long");
        }
        int len = HEADER_LENGTH + FrameDescriptor.NONCE_LENGTH + 2 + name.length + 2 + addr.length;
        ByteBuf b = alloc.directBuffer(len);
        header(b, FrameDescriptor.TYPE_HELLO, hello.hasSecret() ? FrameDescriptor.FLAG_SECRET : 0, len, 0);
        b.writeBytes(hello.nonce(), 0, FrameDescriptor.NONCE_LENGTH);
        b.writeShortLE(name.length).writeBytes(name);
        b.writeShortLE(addr.length).writeBytes(addr);
        return b;
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
        int n = regions.size();
        if (n > FrameDescriptor.MAX_REGIONS) {
            throw new IllegalArgumentException("regions=" + n + " exceed the " + FrameDescriptor.MAX_REGIONS
                + " a connection setup carries");
        }
        byte[][] names = new byte[n][];
        int len = HEADER_LENGTH + 2;
        for (int i = 0; i < n; i++) {
            names[i] = RemoteRegion.checkName(regions.get(i).name());
            len += FrameDescriptor.REGION_DESCRIPTOR_LENGTH + 1 + names[i].length;
        }
        ByteBuf b = alloc.directBuffer(len);
        header(b, FrameDescriptor.TYPE_READY, 0, len, 0);
        b.writeShortLE(n);
        for (int i = 0; i < n; i++) {
            RemoteRegion r = regions.get(i);
            b.writeLongLE(r.address());
            b.writeIntLE(r.length());
            b.writeIntLE(r.remoteKey());
            b.writeByte(names[i].length).writeBytes(names[i]);
        }
        return b;
    }

    /**
     * Parses a whole READY frame.
     *
     * @param frame the frame, reader index at its start
     * @return the sender's region descriptors
     * @throws ProtocolException if the count does not match the length or a descriptor is invalid
     */
    public static List<RemoteRegion> parseReady(ByteBuf frame) throws ProtocolException {
        ByteBuf b = frame.duplicate();
        b.skipBytes(HEADER_LENGTH);
        need(b, 2, "READY", "region count");
        int n = b.readUnsignedShortLE();
        if (n > FrameDescriptor.MAX_REGIONS) {
            throw new ProtocolException("READY region count=" + n + " exceeds the limit="
                + FrameDescriptor.MAX_REGIONS);
        }
        if (b.readableBytes() < (long) n * (FrameDescriptor.REGION_DESCRIPTOR_LENGTH + 1)) {
            throw new ProtocolException("READY region count=" + n + " needs at least "
                + n * (FrameDescriptor.REGION_DESCRIPTOR_LENGTH + 1) + " bytes, the frame has " + b.readableBytes());
        }
        List<RemoteRegion> regions = new ArrayList<>(n);
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < n; i++) {
            need(b, FrameDescriptor.REGION_DESCRIPTOR_LENGTH + 1, "READY", "region " + i);
            long address = b.readLongLE();
            int length = b.readIntLE();
            int key = b.readIntLE();
            if (length <= 0) {
                throw new ProtocolException("READY region " + i + " has length=" + length);
            }
            int nameLength = b.readUnsignedByte();
            if (nameLength > RemoteRegion.MAX_NAME_BYTES) {
                throw new ProtocolException("READY region " + i + " has name length=" + nameLength + " (max="
                    + RemoteRegion.MAX_NAME_BYTES + ")");
            }
            need(b, nameLength, "READY", "region " + i + " name");
            String name = b.readCharSequence(nameLength, StandardCharsets.UTF_8).toString();
            try {
                regions.add(new RemoteRegion(address, length, key, name));
            } catch (IllegalArgumentException e) {
                throw new ProtocolException("READY region " + i + ": " + e.getMessage());
            }
            if (!name.isEmpty() && !seen.add(name)) {
                throw new ProtocolException("READY region " + i + " repeats the name '" + name + "'");
            }
        }
        if (b.isReadable()) {
            throw new ProtocolException("READY region count=" + n + " leaves " + b.readableBytes()
                + " bytes unread");
        }
        return regions;
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
     * @throws ProtocolException if a field runs past the frame, a name is invalid or bytes trail
     */
    public static Hello parseHello(ByteBuf frame) throws ProtocolException {
        int flags = frame.getUnsignedShortLE(frame.readerIndex() + FrameDescriptor.FLAGS_OFFSET);
        ByteBuf b = frame.duplicate();
        b.skipBytes(HEADER_LENGTH);
        need(b, FrameDescriptor.NONCE_LENGTH, "HELLO", "nonce");
        byte[] nonce = new byte[FrameDescriptor.NONCE_LENGTH];
        b.readBytes(nonce);
        String name = readString(b, "name", FrameDescriptor.MAX_NAME_LENGTH);
        if (!NAME.matcher(name).matches()) {
            throw new ProtocolException("HELLO has an invalid node name='" + printable(name)
                + "' (1-64 characters of letters, digits, '-', '_', '.')");
        }
        String address = readString(b, "address", FrameDescriptor.MAX_ADDRESS_LENGTH);
        if (b.isReadable()) {
            throw new ProtocolException("HELLO has trailing bytes=" + b.readableBytes());
        }
        return new Hello((flags & FrameDescriptor.FLAG_SECRET) != 0, nonce, name, address);
    }

    private static String printable(String s) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < s.length() && i < 64; i++) {
            char c = s.charAt(i);
            sb.append(c >= 0x20 && c < 0x7f ? c : '?');
        }
        return sb.toString();
    }

    private static String readString(ByteBuf b, String what, int max) throws ProtocolException {
        need(b, 2, "HELLO", what + " length");
        int len = b.readUnsignedShortLE();
        if (len > max) {
            throw new ProtocolException("HELLO " + what + " length=" + len + " exceeds the limit=" + max);
        }
        need(b, len, "HELLO", what);
        return b.readCharSequence(len, StandardCharsets.UTF_8).toString();
    }

    private static void need(ByteBuf b, long n, String frame, String what) throws ProtocolException {
        if (b.readableBytes() < n) {
            throw new ProtocolException(frame + " truncated in " + what + ": need=" + n + " have="
                + b.readableBytes());
        }
    }
}
