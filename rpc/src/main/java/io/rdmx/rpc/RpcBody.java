package io.rdmx.rpc;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * A request or response body that the sending thread writes straight into the ring to its peer, instead of
 * building it in an array first and copying that in: for a serialized message (a protobuf of known size) this
 * saves an allocation of the body's size and one copy of it per message. A body that fits one ring record
 * ({@code ChannelWriter.maxPayload()} minus the frame header) is written into the claimed record; a larger one is
 * written into an array of its length and sent in fragments as any other body.
 */
public interface RpcBody {
    /** @return the body's length in bytes, the same on every call */
    int length();

    /**
     * Writes the body: exactly {@link #length()} bytes from {@code dst}'s position on, advancing the position past
     * them. It runs with the ring claimed and the ring's writer lock held, so it must not block, and it should not
     * fail. If it throws, or leaves bytes of its length unwritten, the frame still goes out, with a zero-filled
     * body, and the send fails with an {@link RpcException} naming the peer (the exception as its cause).
     *
     * @param dst the space for the body: from its position to its limit, exactly {@link #length()} bytes (byte
     *            order unspecified; valid only during the call)
     * @throws IOException if the body cannot be written
     */
    void writeTo(ByteBuffer dst) throws IOException;
}
