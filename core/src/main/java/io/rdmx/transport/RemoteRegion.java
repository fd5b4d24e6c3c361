package io.rdmx.transport;

import java.nio.ByteBuffer;

/**
 * The descriptor of a peer's region: what a WRITE needs to target it. Exchanged at connection setup for every
 * remotely writable region, and {@link #encode encodable} so applications can pass descriptors in messages.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                     address (64, little endian)               |
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                     length (32)                               |
 *  +---------------------------------------------------------------+
 *  |                     remote key (32)                           |
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * @param address the region's base in the owner's address space (virtual for providers without native
 *                registration); informational, WRITEs use offsets
 * @param length the region's length in bytes
 * @param remoteKey the key a WRITE must carry
 */
public record RemoteRegion(long address, int length, int remoteKey) {
    /** Encoded length in bytes. */
    public static final int ENCODED_LENGTH = 16;
    /** Offset of the address field. */
    public static final int ADDRESS_OFFSET = 0;
    /** Offset of the length field. */
    public static final int LENGTH_OFFSET = 8;
    /** Offset of the remote key field. */
    public static final int KEY_OFFSET = 12;

    /** Validates the fields. */
    public RemoteRegion {
        if (length < 0) {
            throw new IllegalArgumentException("negative region length=" + length);
        }
    }

    /**
     * Writes the descriptor at an absolute index, little endian.
     *
     * @param dst target buffer
     * @param index where to write
     */
    public void encode(ByteBuffer dst, int index) {
        ByteBuffer b = dst.duplicate().order(java.nio.ByteOrder.LITTLE_ENDIAN);
        b.putLong(index + ADDRESS_OFFSET, address);
        b.putInt(index + LENGTH_OFFSET, length);
        b.putInt(index + KEY_OFFSET, remoteKey);
    }

    /**
     * Reads a descriptor at an absolute index.
     *
     * @param src source buffer
     * @param index where to read
     * @return the descriptor
     * @throws IllegalArgumentException if the buffer is too short or the length is negative
     */
    public static RemoteRegion decode(ByteBuffer src, int index) {
        if (index < 0 || index + ENCODED_LENGTH > src.limit()) {
            throw new IllegalArgumentException("region descriptor needs " + ENCODED_LENGTH + " bytes at index="
                + index + ", limit=" + src.limit());
        }
        ByteBuffer b = src.duplicate().order(java.nio.ByteOrder.LITTLE_ENDIAN);
        return new RemoteRegion(b.getLong(index + ADDRESS_OFFSET), b.getInt(index + LENGTH_OFFSET),
            b.getInt(index + KEY_OFFSET));
    }

    @Override
    public String toString() {
        return "RemoteRegion{rkey=0x" + Integer.toHexString(remoteKey) + ", length=" + length
            + ", address=0x" + Long.toHexString(address) + "}";
    }
}
