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
}
