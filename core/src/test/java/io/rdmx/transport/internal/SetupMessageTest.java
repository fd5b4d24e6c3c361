package io.rdmx.transport.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.ProtocolException;
import io.rdmx.transport.RemoteRegion;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The RDMA providers' setup message: round trip, refusal reason, and clear errors for garbage. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SetupMessageTest {
    @Test
    void roundTripsAndRejectsGarbage() throws Exception {
        ByteBuffer buf = ByteBuffer.allocateDirect(4096);
        List<RemoteRegion> regions = List.of(new RemoteRegion(0x7f00_0000_1000L, 1 << 20, 0x1234),
            new RemoteRegion(0x7f00_0020_0000L, 64, 0xabcdef));
        RemoteRegion probe = new RemoteRegion(0x7f00_0030_0000L, 64, 0x77);
        int len = new SetupMessage(SetupMessage.HELLO, "client-1", "10.9.9.1:4791", regions, null, probe)
            .encode(buf);
        SetupMessage s = SetupMessage.decode(buf.duplicate().limit(len));
        assertEquals(SetupMessage.HELLO, s.kind);
        assertEquals("client-1", s.name);
        assertEquals("10.9.9.1:4791", s.address);
        assertEquals(regions, s.regions);
        assertNull(s.reason);
        assertEquals(probe, s.probe);
        len = new SetupMessage(SetupMessage.REFUSE, "srv", "a:1", List.of(), "already connected").encode(buf);
        assertEquals("already connected", SetupMessage.decode(buf.duplicate().limit(len)).reason);
        assertNull(SetupMessage.decode(buf.duplicate().limit(len)).probe);
        ProtocolException e = assertThrows(ProtocolException.class,
            () -> SetupMessage.decode(buf.duplicate().limit(10)));
        assertTrue(e.getMessage().contains("truncated"), e.getMessage());
        e = assertThrows(ProtocolException.class, () -> SetupMessage.decode(ByteBuffer.wrap(new byte[64])));
        assertTrue(e.getMessage().contains("magic"), e.getMessage());
        ByteBuffer bad = ByteBuffer.allocate(64);
        new SetupMessage(SetupMessage.HELLO, "n", "a", List.of(), null).encode(bad);
        bad.put(4, (byte) 9);
        e = assertThrows(ProtocolException.class, () -> SetupMessage.decode(bad));
        assertTrue(e.getMessage().contains("version=9"), e.getMessage());
        e = assertThrows(ProtocolException.class,
            () -> new SetupMessage(SetupMessage.HELLO, "n", "a", regions, null).encode(ByteBuffer.allocate(56)));
        assertTrue(e.getMessage().contains("2 regions"), e.getMessage());
    }

    @Test
    void regionNamesTravelWithTheirDescriptorsAndBadNamesAreRefused() throws Exception {
        ByteBuffer buf = ByteBuffer.allocate(4096);
        List<RemoteRegion> regions = List.of(new RemoteRegion(0x1000L, 4096, 0x11, "inbox"),
            new RemoteRegion(0x2000L, 64, 0x22), new RemoteRegion(0x3000L, 128, 0x33, "r\u00e9sum\u00e9"));
        int len = new SetupMessage(SetupMessage.ACCEPT, "srv", "a:1", regions, null).encode(buf);
        SetupMessage s = SetupMessage.decode(buf.duplicate().limit(len));
        assertEquals(regions, s.regions);
        assertEquals("inbox", s.regions.get(0).name());
        assertEquals("", s.regions.get(1).name());
        // the first region's name length byte follows its 16-byte descriptor: header 8, name 2+3, address 2+3,
        // count 4, then the descriptor
        int nameLengthAt = 8 + 2 + 3 + 2 + 3 + 4 + RemoteRegion.ENCODED_LENGTH;
        assertEquals(5, buf.get(nameLengthAt));
        ByteBuffer tooLong = copy(buf, len);
        tooLong.put(nameLengthAt, (byte) (RemoteRegion.MAX_NAME_BYTES + 1));
        ProtocolException e = assertThrows(ProtocolException.class, () -> SetupMessage.decode(tooLong));
        assertTrue(e.getMessage().contains("name length=" + (RemoteRegion.MAX_NAME_BYTES + 1)), e.getMessage());
        int one = new SetupMessage(SetupMessage.ACCEPT, "srv", "a:1", regions.subList(0, 1), null).encode(buf);
        assertTrue(one > nameLengthAt + 3);
        ByteBuffer past = copy(buf, nameLengthAt + 3);
        e = assertThrows(ProtocolException.class, () -> SetupMessage.decode(past));
        assertTrue(e.getMessage().contains("region 0 name"), e.getMessage());
        List<RemoteRegion> twice = List.of(new RemoteRegion(0x1000L, 8, 1, "same"), new RemoteRegion(0x2000L, 8, 2,
            "same"));
        int l2 = new SetupMessage(SetupMessage.HELLO, "n", "a", twice, null).encode(buf);
        e = assertThrows(ProtocolException.class, () -> SetupMessage.decode(buf.duplicate().limit(l2)));
        assertTrue(e.getMessage().contains("repeats the name 'same'"), e.getMessage());
        ByteBuffer control = copy(buf, l2);
        control.put(8 + 2 + 1 + 2 + 1 + 4 + RemoteRegion.ENCODED_LENGTH + 1, (byte) 0x07);
        e = assertThrows(ProtocolException.class, () -> SetupMessage.decode(control));
        assertTrue(e.getMessage().contains("control character"), e.getMessage());
    }

    private static ByteBuffer copy(ByteBuffer b, int len) {
        ByteBuffer c = ByteBuffer.allocate(len);
        c.put(b.duplicate().position(0).limit(len)).flip();
        return c;
    }

    @Test
    void authBytesTravelWithTheirKindAndWrongLengthsAreRefused() throws Exception {
        ByteBuffer buf = ByteBuffer.allocate(4096);
        byte[] nonce = new byte[SetupMessage.NONCE_LENGTH];
        java.util.Arrays.fill(nonce, (byte) 7);
        int len = new SetupMessage(SetupMessage.HELLO, "c", "a:1", List.of(), null, null, nonce).encode(buf);
        org.junit.jupiter.api.Assertions.assertArrayEquals(nonce,
            SetupMessage.decode(buf.duplicate().limit(len)).auth);
        len = new SetupMessage(SetupMessage.HELLO, "c", "a:1", List.of(), null).encode(buf);
        assertEquals(0, SetupMessage.decode(buf.duplicate().limit(len)).auth.length, "a HELLO without a secret");
        byte[] challenge = new byte[SetupMessage.MAX_AUTH_LENGTH];
        len = new SetupMessage(SetupMessage.CHALLENGE, "s", "a:2", List.of(), null, null, challenge).encode(buf);
        assertEquals(SetupMessage.CHALLENGE, SetupMessage.decode(buf.duplicate().limit(len)).kind);
        // a PROVE whose proof is short, and a CHALLENGE without one, are refused naming the length
        len = new SetupMessage(SetupMessage.PROVE, "c", "a:1", List.of(), null, null, nonce).encode(buf);
        int n = len;
        ProtocolException e = assertThrows(ProtocolException.class,
            () -> SetupMessage.decode(buf.duplicate().limit(n)));
        assertTrue(e.getMessage().contains("auth length=16 (expected 32)"), e.getMessage());
        len = new SetupMessage(SetupMessage.CHALLENGE, "s", "a:2", List.of(), null).encode(buf);
        int m = len;
        e = assertThrows(ProtocolException.class, () -> SetupMessage.decode(buf.duplicate().limit(m)));
        assertTrue(e.getMessage().contains("auth length=0 (expected 48)"), e.getMessage());
    }
}
