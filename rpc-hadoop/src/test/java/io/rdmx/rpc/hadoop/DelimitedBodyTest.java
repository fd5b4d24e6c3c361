package io.rdmx.rpc.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.ipc.protobuf.ProtobufRpcEngine2Protos.RequestHeaderProto;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcResponseHeaderProto;
import org.apache.hadoop.thirdparty.protobuf.Message;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Hadoop's delimited wire form written straight into a buffer: the very bytes {@code writeDelimitedTo} makes. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class DelimitedBodyTest {
    private static final RpcResponseHeaderProto HEADER = RpcResponseHeaderProto.newBuilder().setCallId(7)
        .setStatus(RpcResponseHeaderProto.RpcStatusProto.SUCCESS).build();

    /** A message whose length needs a two-byte varint (more than 127 bytes). */
    private static RequestHeaderProto request(int nameLength) {
        char[] name = new char[nameLength];
        Arrays.fill(name, 'm');
        return RequestHeaderProto.newBuilder().setMethodName(new String(name))
            .setDeclaringClassProtocolName("org.example.Protocol").setClientProtocolVersion(1).build();
    }

    private static byte[] expected(byte[] prefix, Message... messages) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(prefix);
        for (Message m : messages) {
            m.writeDelimitedTo(out);
        }
        return out.toByteArray();
    }

    /** Writes the body into the middle of a larger buffer, as into a claimed ring record. */
    private static byte[] written(DelimitedBody b) throws Exception {
        ByteBuffer ring = ByteBuffer.allocate(b.length() + 20);
        ByteBuffer dst = ring.duplicate().position(10).limit(10 + b.length());
        b.writeTo(dst);
        assertEquals(0, dst.remaining(), "exactly its length written");
        return Arrays.copyOfRange(ring.array(), 10, 10 + b.length());
    }

    @Test
    void aPrefixAndThreeMessagesAreWrittenAsWriteDelimitedToWritesThem() throws Exception {
        byte[] prefix = {1, 2, 3, 4, 5};
        RequestHeaderProto big = request(300);
        DelimitedBody b = DelimitedBody.of("request", prefix, HEADER, big, request(3));
        byte[] want = expected(prefix, HEADER, big, request(3));
        assertEquals(want.length, b.length());
        assertArrayEquals(want, written(b));
    }

    @Test
    void absentMessagesTakeNoBytesNotEvenALength() throws Exception {
        DelimitedBody b = DelimitedBody.of("response", new byte[0], HEADER, null, null);
        byte[] want = expected(new byte[0], HEADER);
        assertEquals(want.length, b.length());
        assertArrayEquals(want, written(b));
    }
}
