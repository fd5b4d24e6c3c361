package io.rdmx.rpc.hadoop;

import io.rdmx.rpc.RpcBody;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.hadoop.thirdparty.protobuf.CodedOutputStream;
import org.apache.hadoop.thirdparty.protobuf.Message;

/**
 * A body of Hadoop's wire form, as an {@link RpcBody}: raw prefix bytes, then up to three protobuf messages, each
 * after its length as a varint ({@code writeDelimitedTo}'s form). Sized once up front; the sending thread encodes it
 * straight into the ring (no array of its size, no copy of it). The request of {@link RdmxInvoker} (context prefix,
 * RPC header, request header, request) and the response of {@code RdmxIpcBridge.responseBody} (header, value) are
 * both of this form.
 */
public final class DelimitedBody implements RpcBody {
    private final byte[] prefix;
    private final Message first;
    private final Message second;
    private final Message third;
    private final int firstSize;
    private final int secondSize;
    private final int thirdSize;
    private final int length;

    private DelimitedBody(byte[] prefix, Message first, Message second, Message third, String what)
        throws IOException {
        this.prefix = prefix;
        this.first = first;
        this.second = second;
        this.third = third;
        this.firstSize = size(first);
        this.secondSize = size(second);
        this.thirdSize = size(third);
        long total = (long) prefix.length + delimited(first, firstSize) + delimited(second, secondSize)
            + delimited(third, thirdSize);
        if (total > Integer.MAX_VALUE - 16) {
            throw new IOException(what + " of " + total + " bytes is too large");
        }
        this.length = (int) total;
    }

    /**
     * @param what what the body is, for the error ("request", "response")
     * @param prefix raw bytes before the messages (not copied: not to be changed while the body is in use)
     * @param first the first message
     * @param second the second message, or null for none
     * @param third the third message, or null for none
     * @return the body
     * @throws IOException if it would be larger than a message can be, naming {@code what} and the size
     */
    public static DelimitedBody of(String what, byte[] prefix, Message first, Message second, Message third)
        throws IOException {
        return new DelimitedBody(prefix, first, second, third, what);
    }

    private static int size(Message m) {
        return m == null ? 0 : m.getSerializedSize();
    }

    private static long delimited(Message m, int size) {
        return m == null ? 0 : CodedOutputStream.computeUInt32SizeNoTag(size) + (long) size;
    }

    @Override
    public int length() {
        return length;
    }

    @Override
    public void writeTo(ByteBuffer dst) throws IOException {
        dst.put(prefix);
        CodedOutputStream out = CodedOutputStream.newInstance(dst);
        put(out, first, firstSize);
        put(out, second, secondSize);
        put(out, third, thirdSize);
        out.flush();
    }

    private static void put(CodedOutputStream out, Message m, int size) throws IOException {
        if (m != null) {
            out.writeUInt32NoTag(size);
            m.writeTo(out);
        }
    }
}
