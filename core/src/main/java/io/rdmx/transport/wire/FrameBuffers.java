package io.rdmx.transport.wire;

import static io.rdmx.transport.wire.FrameDescriptor.HEADER_LENGTH;
import static io.rdmx.transport.wire.FrameDescriptor.VERSION;

import io.rdmx.transport.ProtocolException;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.Status;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The byte-level codec of the stream protocol ({@link FrameDescriptor}) on plain {@link ByteBuffer}s: the
 * encoders of the control frames and the parsers of HELLO and READY, with every check of peer input that is
 * not a header check ({@link FrameDescriptor#validate}). The Netty path ({@code FrameCodec}, tcp) and the JDK
 * path (the {@code shm} provider) both use it, so the two cannot diverge.
 */
public final class FrameBuffers {
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.-]{1,64}");

    private FrameBuffers() {
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

    private static ByteBuffer frame(int type, int flags, int length, long seq) {
        ByteBuffer b = ByteBuffer.allocateDirect(length).order(ByteOrder.LITTLE_ENDIAN);
        header(b, type, flags, length, seq);
        return b;
    }

    /**
     * Writes a common header at the buffer's position (little endian) and advances it.
     *
     * @param b target, little endian
     * @param type frame type
     * @param flags flags
     * @param frameLength whole frame length
     * @param seq sequence number
     */
    public static void header(ByteBuffer b, int type, int flags, int frameLength, long seq) {
        b.put((byte) VERSION).put((byte) type).putShort((short) flags).putInt(frameLength).putLong(seq);
    }

    /**
     * A frame with only a header (ACK, PING).
     *
     * @param type frame type
     * @param seq sequence number (the acknowledged one for ACK)
     * @return the frame, ready to be written
     */
    public static ByteBuffer simple(int type, long seq) {
        return frame(type, 0, HEADER_LENGTH, seq).flip();
    }

    /**
     * An ERROR frame.
     *
     * @param message why the sender closes (truncated to {@link FrameDescriptor#MAX_MESSAGE_LENGTH} bytes)
     * @return the frame, ready to be written
     */
    public static ByteBuffer error(String message) {
        byte[] m = truncate(message);
        return frame(FrameDescriptor.TYPE_ERROR, 0, HEADER_LENGTH + m.length, 0).put(m).flip();
    }

    /**
     * A NAK frame.
     *
     * @param seq the failed request
     * @param status the status ordinal it completes with
     * @param message why (truncated to {@link FrameDescriptor#MAX_MESSAGE_LENGTH} bytes)
     * @return the frame, ready to be written
     */
    public static ByteBuffer nak(long seq, int status, String message) {
        byte[] m = truncate(message);
        return frame(FrameDescriptor.TYPE_NAK, 0, HEADER_LENGTH + 2 + m.length, seq).putShort((short) status).put(m)
            .flip();
    }

    /**
     * An AUTH frame.
     *
     * @param mac the proof
     * @return the frame, ready to be written
     */
    public static ByteBuffer auth(byte[] mac) {
        return frame(FrameDescriptor.TYPE_AUTH, 0, HEADER_LENGTH + mac.length, 0).put(mac).flip();
    }

    /**
     * A HELLO frame.
     *
     * @param hello the content
     * @return the frame, ready to be written
     * @throws IllegalArgumentException if the name or address is longer than the protocol allows
     */
    public static ByteBuffer hello(Hello hello) {
        byte[] name = hello.name().getBytes(StandardCharsets.UTF_8);
        byte[] addr = hello.address().getBytes(StandardCharsets.UTF_8);
        if (name.length > FrameDescriptor.MAX_NAME_LENGTH || addr.length > FrameDescriptor.MAX_ADDRESS_LENGTH) {
            throw new IllegalArgumentException("HELLO name length=" + name.length + " (max="
                + FrameDescriptor.MAX_NAME_LENGTH + ") or address length=" + addr.length + " (max="
                + FrameDescriptor.MAX_ADDRESS_LENGTH + ") too long");
        }
        int len = HEADER_LENGTH + FrameDescriptor.NONCE_LENGTH + 2 + name.length + 2 + addr.length;
        ByteBuffer b = frame(FrameDescriptor.TYPE_HELLO, hello.hasSecret() ? FrameDescriptor.FLAG_SECRET : 0, len, 0);
        b.put(hello.nonce(), 0, FrameDescriptor.NONCE_LENGTH);
        b.putShort((short) name.length).put(name);
        b.putShort((short) addr.length).put(addr);
        return b.flip();
    }

    /**
     * A READY frame carrying the sender's region descriptors (at most {@link FrameDescriptor#MAX_REGIONS}).
     *
     * @param regions the sender's remotely writable regions
     * @return the frame, ready to be written
     * @throws IllegalArgumentException if there are more regions than a READY carries
     */
    public static ByteBuffer ready(List<RemoteRegion> regions) {
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
        ByteBuffer b = frame(FrameDescriptor.TYPE_READY, 0, len, 0);
        b.putShort((short) n);
        for (int i = 0; i < n; i++) {
            RemoteRegion r = regions.get(i);
            b.putLong(r.address()).putInt(r.length()).putInt(r.remoteKey());
            b.put((byte) names[i].length).put(names[i]);
        }
        return b.flip();
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
     * Parses a whole READY frame.
     *
     * @param frame the frame, from its position to its limit (not modified)
     * @return the sender's region descriptors
     * @throws ProtocolException if the count does not match the length or a descriptor is invalid
     */
    public static List<RemoteRegion> parseReady(ByteBuffer frame) throws ProtocolException {
        ByteBuffer b = frame.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        skip(b, HEADER_LENGTH, "READY");
        need(b, 2, "READY", "region count");
        int n = Short.toUnsignedInt(b.getShort());
        if (n > FrameDescriptor.MAX_REGIONS) {
            throw new ProtocolException("READY region count=" + n + " exceeds the limit="
                + FrameDescriptor.MAX_REGIONS);
        }
        if (b.remaining() < (long) n * (FrameDescriptor.REGION_DESCRIPTOR_LENGTH + 1)) {
            throw new ProtocolException("READY region count=" + n + " needs at least "
                + n * (FrameDescriptor.REGION_DESCRIPTOR_LENGTH + 1) + " bytes, the frame has " + b.remaining());
        }
        List<RemoteRegion> regions = new ArrayList<>(n);
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < n; i++) {
            need(b, FrameDescriptor.REGION_DESCRIPTOR_LENGTH + 1, "READY", "region " + i);
            long address = b.getLong();
            int length = b.getInt();
            int key = b.getInt();
            if (length <= 0) {
                throw new ProtocolException("READY region " + i + " has length=" + length);
            }
            int nameLength = Byte.toUnsignedInt(b.get());
            if (nameLength > RemoteRegion.MAX_NAME_BYTES) {
                throw new ProtocolException("READY region " + i + " has name length=" + nameLength + " (max="
                    + RemoteRegion.MAX_NAME_BYTES + ")");
            }
            need(b, nameLength, "READY", "region " + i + " name");
            String name = string(b, nameLength);
            try {
                regions.add(new RemoteRegion(address, length, key, name));
            } catch (IllegalArgumentException e) {
                throw new ProtocolException("READY region " + i + ": " + e.getMessage());
            }
            if (!name.isEmpty() && !seen.add(name)) {
                throw new ProtocolException("READY region " + i + " repeats the name '" + name + "'");
            }
        }
        if (b.hasRemaining()) {
            throw new ProtocolException("READY region count=" + n + " leaves " + b.remaining() + " bytes unread");
        }
        return regions;
    }

    /**
     * Parses a whole HELLO frame.
     *
     * @param frame the frame, from its position to its limit (not modified)
     * @return the content
     * @throws ProtocolException if a field runs past the frame, a name is invalid or bytes trail
     */
    public static Hello parseHello(ByteBuffer frame) throws ProtocolException {
        ByteBuffer b = frame.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        skip(b, HEADER_LENGTH, "HELLO");
        int flags = Short.toUnsignedInt(b.getShort(frame.position() + FrameDescriptor.FLAGS_OFFSET));
        need(b, FrameDescriptor.NONCE_LENGTH, "HELLO", "nonce");
        byte[] nonce = new byte[FrameDescriptor.NONCE_LENGTH];
        b.get(nonce);
        String name = readString(b, "name", FrameDescriptor.MAX_NAME_LENGTH);
        if (!NAME.matcher(name).matches()) {
            throw new ProtocolException("HELLO has an invalid node name='" + printable(name)
                + "' (1-64 characters of letters, digits, '-', '_', '.')");
        }
        String address = readString(b, "address", FrameDescriptor.MAX_ADDRESS_LENGTH);
        if (b.hasRemaining()) {
            throw new ProtocolException("HELLO has trailing bytes=" + b.remaining());
        }
        return new Hello((flags & FrameDescriptor.FLAG_SECRET) != 0, nonce, name, address);
    }

    /**
     * The text of an ERROR frame, or of a NAK from its message on.
     *
     * @param frame the frame, from its position to its limit (not modified)
     * @param offset where the text starts in the frame
     * @return the text (malformed UTF-8 replaced)
     */
    public static String text(ByteBuffer frame, int offset) {
        ByteBuffer b = frame.duplicate();
        b.position(Math.min(b.limit(), b.position() + offset));
        return string(b, b.remaining());
    }

    /**
     * Checks the data length of a WRITE header against the frame length.
     *
     * @param flags the frame's flags
     * @param frameLength the frame length (validated)
     * @param dataLength the data length field
     * @param acceptsPlaced whether this provider places WRITE data through shared memory
     * @return null if consistent, else what is wrong (the caller names the peer)
     */
    public static String checkWrite(int flags, int frameLength, int dataLength, boolean acceptsPlaced) {
        boolean placed = (flags & FrameDescriptor.FLAG_PLACED) != 0;
        int carried = frameLength - FrameDescriptor.WRITE_HEADER_LENGTH;
        if (dataLength < 0 || (placed ? carried != 0 : carried != dataLength)) {
            return "has dataLength=" + dataLength + " but carries " + carried + " bytes (placed=" + placed + ")";
        }
        if (placed && !acceptsPlaced) {
            return "claims shared-memory placement, which this provider does not use";
        }
        return null;
    }

    /**
     * Checks the status of a NAK.
     *
     * @param status the status field
     * @return null if it names a failure status, else what is wrong
     */
    public static String checkNakStatus(int status) {
        return checkFailureStatus(status);
    }

    /**
     * A refusing READ_ANSWER frame (status other than SUCCESS, the message as its payload).
     *
     * @param seq the READ it answers
     * @param status the status
     * @param message why (truncated to {@link FrameDescriptor#MAX_MESSAGE_LENGTH} bytes)
     * @return the frame, ready to be written
     */
    public static ByteBuffer readRefusal(long seq, int status, String message) {
        byte[] m = truncate(message);
        return frame(FrameDescriptor.TYPE_READ_ANSWER, 0, FrameDescriptor.ANSWER_HEADER_LENGTH + m.length, seq)
            .putShort((short) status).putShort((short) 0).putInt(m.length).put(m).flip();
    }

    /**
     * Checks a READ_ANSWER header against its frame length.
     *
     * @param status the status field
     * @param frameLength the frame length
     * @param payloadLength the payload length field
     * @return null, or what is wrong ({@code name=value})
     */
    public static String checkAnswer(int status, int frameLength, int payloadLength) {
        if (status >= Status.values().length) {
            return "has unknown status=" + status;
        }
        if (payloadLength < 0 || frameLength - FrameDescriptor.ANSWER_HEADER_LENGTH != payloadLength) {
            return "has payload length=" + payloadLength + " in a frame of length=" + frameLength;
        }
        if (status != Status.SUCCESS.ordinal() && payloadLength > FrameDescriptor.MAX_MESSAGE_LENGTH) {
            return "refuses with a message of length=" + payloadLength + " (limit="
                + FrameDescriptor.MAX_MESSAGE_LENGTH + ")";
        }
        return null;
    }

    private static String checkFailureStatus(int status) {
        if (status >= Status.values().length || status == Status.SUCCESS.ordinal()) {
            return "has unknown status=" + status;
        }
        return null;
    }

    private static String printable(String s) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < s.length() && i < 64; i++) {
            char c = s.charAt(i);
            sb.append(c >= 0x20 && c < 0x7f ? c : '?');
        }
        return sb.toString();
    }

    private static String readString(ByteBuffer b, String what, int max) throws ProtocolException {
        need(b, 2, "HELLO", what + " length");
        int len = Short.toUnsignedInt(b.getShort());
        if (len > max) {
            throw new ProtocolException("HELLO " + what + " length=" + len + " exceeds the limit=" + max);
        }
        need(b, len, "HELLO", what);
        return string(b, len);
    }

    private static String string(ByteBuffer b, int len) {
        byte[] s = new byte[len];
        b.get(s);
        return new String(s, StandardCharsets.UTF_8);
    }

    private static void skip(ByteBuffer b, int n, String frame) throws ProtocolException {
        need(b, n, frame, "header");
        b.position(b.position() + n);
    }

    private static void need(ByteBuffer b, long n, String frame, String what) throws ProtocolException {
        if (b.remaining() < n) {
            throw new ProtocolException(frame + " truncated in " + what + ": need=" + n + " have=" + b.remaining());
        }
    }
}
