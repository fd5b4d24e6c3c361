package org.apache.hadoop.ipc;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.hadoop.thirdparty.protobuf.CodedInputStream;
import org.apache.hadoop.thirdparty.protobuf.Message;
import org.apache.hadoop.thirdparty.protobuf.UnsafeByteOperations;

/**
 * The server's request of a protobuf call that came over rdmx: {@code ProtobufRpcEngine2}'s own request class
 * (its invoker reads it as usual), whose messages are parsed with their {@code bytes} fields aliasing the request's
 * body array instead of copied out of it. The stock request parses from a {@code CodedInputStream} over the array
 * that copies every {@code bytes} field (and every string field kept as bytes); over rdmx the body array is the
 * call's own (the rdmx RPC layer hands each request a fresh array that nothing writes again), so a parsed message
 * may keep it: a 512 KiB {@code bytes} payload reaches the service without a copy (one per call removed). The
 * price: a service that keeps a {@code bytes} field of a request beyond the call (rather than its contents) keeps
 * the whole request array reachable with it, where the stock server's copy would keep only the field.
 */
final class RdmxProtobufRequest extends ProtobufRpcEngine2.RpcProtobufRequest {
    /** For {@code RpcWritable.Buffer.newInstance}'s reflection: a request still to be given its buffer. */
    RdmxProtobufRequest() {
    }

    /**
     * @param body the request body at the {@code RequestHeaderProto}: array-backed, owned by the call, never
     *     written again
     * @return the request
     * @throws IOException if it cannot be read
     */
    static RdmxProtobufRequest of(ByteBuffer body) throws IOException {
        if (!body.hasArray()) {
            throw new IOException("an rdmx request body must be array-backed, not " + body);
        }
        return RpcWritable.Buffer.wrap(body).getValue(new RdmxProtobufRequest());
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> T getValue(T value) throws IOException {
        ByteBuffer bb = getByteBuffer();
        if (!(value instanceof Message) || bb == null) {
            return super.getValue(value);
        }
        // as RpcWritable.ProtobufWrapper.readFrom (a delimited message, the buffer advanced past it), but over an
        // immutable view of the array with aliasing: readBytes() wraps the array instead of copying from it
        CodedInputStream in = UnsafeByteOperations.unsafeWrap(bb.array(), bb.arrayOffset() + bb.position(),
            bb.remaining()).newCodedInput();
        in.enableAliasing(true);
        try {
            int length = in.readRawVarint32();
            if (length < 0) {
                throw new IOException("negative message length " + length + " in an rdmx request");
            }
            int old = in.pushLimit(length);
            T m = (T) ((Message) value).getParserForType().parseFrom(in);
            in.checkLastTagWas(0);
            in.popLimit(old);
            return m;
        } finally {
            bb.position(bb.position() + in.getTotalBytesRead());
        }
    }
}
