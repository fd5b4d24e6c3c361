package io.rdmx.transport.tcp;

import io.rdmx.transport.wire.FrameDescriptor;
import io.rdmx.transport.wire.FrameBuffers;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** A hand-driven peer speaking the stream protocol over a plain socket, to send what a real node never would. */
public final class RawPeer implements AutoCloseable {
    /** A frame as read off the wire. */
    public record Frame(int type, int flags, long seq, byte[] payload) {
        /** @return the payload as text (ERROR) */
        public String text() {
            return new String(payload, StandardCharsets.UTF_8);
        }
    }

    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;

    /**
     * @param hostPort a tcp node address
     * @throws IOException if the connection fails
     */
    public RawPeer(String hostPort) throws IOException {
        this(hostPort, null);
    }

    /**
     * @param hostPort a tcp node address
     * @param from the local address to connect from (another loopback address, such as 127.0.0.2, is another
     *     source host to the node), or null for any
     * @throws IOException if the connection fails
     */
    public RawPeer(String hostPort, String from) throws IOException {
        int i = hostPort.lastIndexOf(':');
        socket = new Socket();
        if (from != null) {
            socket.bind(new InetSocketAddress(from, 0));
        }
        socket.connect(new InetSocketAddress(hostPort.substring(0, i), Integer.parseInt(hostPort.substring(i + 1))),
            5000);
        socket.setSoTimeout(10_000);
        in = new DataInputStream(socket.getInputStream());
        out = socket.getOutputStream();
    }

    /**
     * Sends raw bytes.
     *
     * @param b the bytes
     * @throws IOException on failure
     */
    public void send(byte[] b) throws IOException {
        out.write(b);
        out.flush();
    }

    /**
     * Sends a frame built in a buffer, from its position to its limit.
     *
     * @param b the buffer
     * @throws IOException on failure
     */
    public void send(ByteBuffer b) throws IOException {
        send(bytes(b));
    }

    /**
     * @param b a buffer
     * @return its bytes from its position to its limit
     */
    public static byte[] bytes(ByteBuffer b) {
        byte[] a = new byte[b.remaining()];
        b.duplicate().get(a);
        return a;
    }

    /**
     * A WRITE header; the data (unless placed) follows separately.
     *
     * @param flags WITH_IMM, PLACED, UNSIGNALED
     * @param seq sequence number
     * @param rkey remote key
     * @param imm immediate
     * @param remoteOffset offset in the target region
     * @param length data length
     * @return the header, ready to read
     */
    public static ByteBuffer writeHeader(int flags, long seq, int rkey, int imm, long remoteOffset, int length) {
        boolean placed = (flags & FrameDescriptor.FLAG_PLACED) != 0;
        ByteBuffer b = ByteBuffer.allocate(FrameDescriptor.WRITE_HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        FrameBuffers.header(b, FrameDescriptor.TYPE_WRITE, flags,
            FrameDescriptor.WRITE_HEADER_LENGTH + (placed ? 0 : length), seq);
        b.putInt(rkey).putInt(imm).putLong(remoteOffset).putInt(length).putInt(0);
        return b.flip();
    }

    /**
     * A common header as bytes.
     *
     * @param version version
     * @param type type
     * @param flags flags
     * @param length frame length
     * @param seq sequence number
     * @return 16 bytes
     */
    public static byte[] header(int version, int type, int flags, int length, long seq) {
        ByteBuffer b = ByteBuffer.allocate(FrameDescriptor.HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        b.put((byte) version).put((byte) type).putShort((short) flags).putInt(length).putLong(seq);
        return b.array();
    }

    /**
     * Reads one frame.
     *
     * @return the frame, or null at end of stream
     * @throws IOException on failure
     */
    public Frame read() throws IOException {
        byte[] h = new byte[FrameDescriptor.HEADER_LENGTH];
        try {
            in.readFully(h);
        } catch (java.io.EOFException e) {
            return null;
        }
        ByteBuffer b = ByteBuffer.wrap(h).order(ByteOrder.LITTLE_ENDIAN);
        int type = b.get(1) & 0xff;
        int flags = b.getShort(2) & 0xffff;
        int length = b.getInt(4);
        long seq = b.getLong(8);
        byte[] p = new byte[length - FrameDescriptor.HEADER_LENGTH];
        in.readFully(p);
        return new Frame(type, flags, seq, p);
    }

    /**
     * Reads the next frame that is not a keep-alive (PING).
     *
     * @return the frame, or null at end of stream
     * @throws IOException on failure
     */
    public Frame readSkippingPings() throws IOException {
        Frame f;
        do {
            f = read();
        } while (f != null && f.type() == FrameDescriptor.TYPE_PING);
        return f;
    }

    /**
     * @param parts frames (or parts of one)
     * @return them back to back, to send in one write
     */
    public static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        byte[] out = new byte[n];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }

    /**
     * Reads frames until one of this type (skipping PING and ACK).
     *
     * @param type wanted type
     * @return the frame, or null at end of stream
     * @throws IOException on failure
     */
    public Frame expect(int type) throws IOException {
        while (true) {
            Frame f = read();
            if (f == null || f.type() == type) {
                return f;
            }
            if (f.type() != FrameDescriptor.TYPE_PING && f.type() != FrameDescriptor.TYPE_ACK) {
                throw new AssertionError("expected " + FrameDescriptor.typeName(type) + ", got "
                    + FrameDescriptor.typeName(f.type()) + " " + f.text());
            }
        }
    }

    /**
     * Runs the handshake (no secret) as node {@code name}.
     *
     * @param name the raw peer's node name
     * @throws IOException on failure
     */
    public void handshake(String name) throws IOException {
        handshake(name, "127.0.0.1:1");
    }

    /**
     * Runs the handshake (no secret) as node {@code name} claiming an address.
     *
     * @param name the raw peer's node name
     * @param address the address it claims in its HELLO
     * @return the regions the node listed in its READY
     * @throws IOException on failure
     */
    public List<io.rdmx.transport.RemoteRegion> handshake(String name, String address) throws IOException {
        send(FrameBuffers.hello(new FrameBuffers.Hello(false, new byte[16], name,
            address)));
        if (expect(FrameDescriptor.TYPE_HELLO) == null) {
            throw new IOException("handshake refused");
        }
        send(FrameBuffers.ready(List.of()));
        Frame ready = expect(FrameDescriptor.TYPE_READY);
        if (ready == null) {
            throw new IOException("handshake refused");
        }
        java.nio.ByteBuffer f = java.nio.ByteBuffer.allocate(FrameDescriptor.HEADER_LENGTH + ready.payload().length)
            .order(java.nio.ByteOrder.LITTLE_ENDIAN);
        f.position(FrameDescriptor.HEADER_LENGTH);
        f.put(ready.payload());
        try {
            return FrameBuffers.parseReady(f.flip());
        } catch (io.rdmx.transport.ProtocolException e) {
            throw new IOException(e);
        }
    }

    /** Closes the socket (half a frame may be left unsent: that is the point of some tests). */
    @Override
    public void close() throws IOException {
        socket.close();
    }
}
