package org.apache.hadoop.ipc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ipc.protobuf.ProtobufRpcEngine2Protos.RequestHeaderProto;
import org.apache.hadoop.security.proto.SecurityProtos.TokenProto;
import org.apache.hadoop.thirdparty.protobuf.ByteString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The request class of protobuf calls over rdmx: it reads what the stock request reads, but a parsed message's
 * {@code bytes} fields are views of the call's body array, not copies of it.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RdmxProtobufRequestTest {
    private static final RequestHeaderProto HEADER = RequestHeaderProto.newBuilder().setMethodName("echo")
        .setDeclaringClassProtocolName("some.Protocol").setClientProtocolVersion(1).build();

    /** A request body as it follows the RPC header: the delimited request header, then the delimited message. */
    private static byte[] body(TokenProto message) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        HEADER.writeDelimitedTo(out);
        message.writeDelimitedTo(out);
        return out.toByteArray();
    }

    private static TokenProto token(int identifierBytes) {
        byte[] id = new byte[identifierBytes];
        for (int i = 0; i < id.length; i++) {
            id[i] = (byte) (i * 31 + 7);
        }
        return TokenProto.newBuilder().setIdentifier(ByteString.copyFrom(id))
            .setPassword(ByteString.copyFrom(new byte[] {1, 2, 3})).setKind("kind").setService("svc").build();
    }

    @Test
    void readsWhatTheStockRequestReads() throws IOException {
        TokenProto sent = token(70_000);
        byte[] body = body(sent);
        ProtobufRpcEngine2.RpcProtobufRequest stock = RpcWritable.Buffer.wrap(ByteBuffer.wrap(body.clone()))
            .newInstance(ProtobufRpcEngine2.RpcProtobufRequest.class, new Configuration(false));
        RdmxProtobufRequest r = RdmxProtobufRequest.of(ByteBuffer.wrap(body));
        assertEquals(stock.getRequestHeader(), r.getRequestHeader());
        assertEquals(HEADER, r.getRequestHeader());
        assertEquals(sent, stock.getValue(TokenProto.getDefaultInstance()));
        assertEquals(sent, r.getValue(TokenProto.getDefaultInstance()));
        assertEquals(0, r.remaining(), "the whole body read");
    }

    @Test
    void bytesFieldsAliasTheCallsBodyArray() throws IOException {
        TokenProto sent = token(512 << 10);
        byte[] body = body(sent);
        RdmxProtobufRequest r = RdmxProtobufRequest.of(ByteBuffer.wrap(body));
        r.getRequestHeader();
        TokenProto got = r.getValue(TokenProto.getDefaultInstance());
        assertEquals(sent.getIdentifier(), got.getIdentifier());

        // the identifier's bytes are the body's: change them there and the parsed message sees it (a copy would not)
        byte[] id = sent.getIdentifier().toByteArray();
        int at = indexOf(body, id);
        assertTrue(at > 0, "identifier found in the body");
        body[at + 1000] ^= (byte) 0xFF;
        assertEquals((byte) (id[1000] ^ 0xFF), got.getIdentifier().byteAt(1000), "the parsed bytes alias the body");
    }

    @Test
    void aTruncatedMessageIsAClearErrorAndTheHeaderStillReads() throws IOException {
        byte[] body = body(token(4096));
        byte[] cut = Arrays.copyOf(body, body.length - 100);
        RdmxProtobufRequest r = RdmxProtobufRequest.of(ByteBuffer.wrap(cut));
        assertEquals(HEADER, r.getRequestHeader());
        IOException e = assertThrows(IOException.class, () -> r.getValue(TokenProto.getDefaultInstance()));
        assertTrue(e.getMessage().contains("truncated"), e.getMessage());
    }

    @Test
    void aNegativeLengthIsRefusedNamingIt() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        HEADER.writeDelimitedTo(out);
        out.write(new byte[] {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 0x0F});  // varint -1
        RdmxProtobufRequest r = RdmxProtobufRequest.of(ByteBuffer.wrap(out.toByteArray()));
        r.getRequestHeader();
        IOException e = assertThrows(IOException.class, () -> r.getValue(TokenProto.getDefaultInstance()));
        assertTrue(e.getMessage().contains("negative message length -1"), e.getMessage());
    }

    @Test
    void aDirectBufferIsRefused() {
        IOException e = assertThrows(IOException.class, () -> RdmxProtobufRequest.of(ByteBuffer.allocateDirect(8)));
        assertTrue(e.getMessage().contains("array-backed"), e.getMessage());
    }

    private static int indexOf(byte[] in, byte[] what) {
        outer:
        for (int i = 0; i + what.length <= in.length; i++) {
            for (int j = 0; j < 64; j++) {
                if (in[i + j] != what[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
