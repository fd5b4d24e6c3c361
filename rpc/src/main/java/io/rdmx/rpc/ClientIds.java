package io.rdmx.rpc;

import java.nio.ByteBuffer;

/** 16-byte client ids as two longs (big endian, as Hadoop's ClientId bytes read). */
final class ClientIds {
    private ClientIds() {
    }

    static byte[] toBytes(long hi, long lo) {
        return ByteBuffer.allocate(16).putLong(hi).putLong(lo).array();
    }

    static long high(byte[] id) {
        check(id);
        return ByteBuffer.wrap(id).getLong(0);
    }

    static long low(byte[] id) {
        check(id);
        return ByteBuffer.wrap(id).getLong(8);
    }

    private static void check(byte[] id) {
        if (id == null || id.length != RpcFrameDescriptor.CLIENT_ID_LENGTH) {
            throw new IllegalArgumentException("client id length=" + (id == null ? "null" : id.length)
                + " must be " + RpcFrameDescriptor.CLIENT_ID_LENGTH);
        }
    }
}
