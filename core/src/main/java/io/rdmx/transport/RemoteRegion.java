package io.rdmx.transport;

import java.nio.ByteBuffer;

/**
 * The descriptor of a peer's region: what a WRITE needs to target it. Exchanged at connection setup for every
 * remotely writable region, together with the name given at {@link Node#register(int, int, String) registration}
 * (find one with {@link Connection#remoteRegion(String)}), and {@link #encode encodable} so applications can pass
 * descriptors in messages (the 16 bytes below carry no name: a decoded descriptor is unnamed).
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
 * @param name the name the owner registered it under, or {@code ""} when unnamed (not part of the encoding)
 */
public record RemoteRegion(long address, int length, int remoteKey, String name) {
    /** The longest region name, in UTF-8 bytes. */
    public static final int MAX_NAME_BYTES = 64;
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
        checkName(name);
    }

    /**
     * An unnamed descriptor.
     *
     * @param address the region's base in the owner's address space
     * @param length the region's length in bytes
     * @param remoteKey the key a WRITE must carry
     */
    public RemoteRegion(long address, int length, int remoteKey) {
        this(address, length, remoteKey, "");
    }

    /**
     * Checks a region name: not null, at most {@link #MAX_NAME_BYTES} bytes of UTF-8, no control characters.
     *
     * @param name the name ({@code ""} = unnamed)
     * @return its UTF-8 bytes
     * @throws IllegalArgumentException naming the value and the rule it breaks
     */
    public static byte[] checkName(String name) {
        if (name == null) {
            throw new IllegalArgumentException("region name is null (use \"\" for an unnamed region)");
        }
        byte[] utf8 = name.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        if (utf8.length > MAX_NAME_BYTES) {
            throw new IllegalArgumentException("region name '" + name + "' is " + utf8.length
                + " bytes of UTF-8, more than the " + MAX_NAME_BYTES + " a connection setup carries");
        }
        for (int i = 0; i < name.length(); i++) {
            if (Character.isISOControl(name.charAt(i))) {
                throw new IllegalArgumentException("region name '" + name.replaceAll("\\p{Cntrl}", "?")
                    + "' has a control character at index " + i);
            }
        }
        return utf8;
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
        return "RemoteRegion{" + (name.isEmpty() ? "" : "name='" + name + "', ") + "rkey=0x"
            + Integer.toHexString(remoteKey) + ", length=" + length
            + ", address=0x" + Long.toHexString(address) + "}";
    }
}
