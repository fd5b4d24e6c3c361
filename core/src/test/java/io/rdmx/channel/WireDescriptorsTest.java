package io.rdmx.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link WrIdDescriptor} and {@link ImmediateDescriptor}: every field round-trips at its limits. */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class WireDescriptorsTest {
    @Test
    void workRequestIdFieldsRoundTripAtTheirLimits() {
        int[] kinds = {WrIdDescriptor.KIND_WRITE, WrIdDescriptor.KIND_NOTIFY, WrIdDescriptor.KIND_RECV,
            WrIdDescriptor.KIND_HANDSHAKE};
        int[] peers = {1, 2, WrIdDescriptor.MAX_PEER_ID};
        int[] indexes = {0, 1, 65535, Integer.MAX_VALUE, -1};
        for (int k : kinds) {
            for (int p : peers) {
                for (int i : indexes) {
                    long id = WrIdDescriptor.encode(k, p, i);
                    assertEquals(k, WrIdDescriptor.kind(id), "kind of " + Long.toHexString(id));
                    assertEquals(p, WrIdDescriptor.peerId(id), "peer of " + Long.toHexString(id));
                    assertEquals(i, WrIdDescriptor.index(id), "index of " + Long.toHexString(id));
                }
            }
        }
        assertEquals((1 << 28) - 1, WrIdDescriptor.MAX_PEER_ID);
    }

    @Test
    void peerIdsBeyondTheFieldAreRefused() {
        assertNull(WrIdDescriptor.validatePeerId(1));
        assertNull(WrIdDescriptor.validatePeerId(WrIdDescriptor.MAX_PEER_ID));
        assertEquals("peer id=0 outside [1, 268435455] (the 28-bit peer field of a work-request id)",
            WrIdDescriptor.validatePeerId(0));
        assertNotNull(WrIdDescriptor.validatePeerId(WrIdDescriptor.MAX_PEER_ID + 1));
    }

    @Test
    void immediateFieldsRoundTripAtTheirLimits() {
        int[] rings = {0, 1, ImmediateDescriptor.MAX_RINGS - 1};
        int[] lengths = {8, 16, 1 << 16, ImmediateDescriptor.MAX_RING_CAPACITY};
        for (int r : rings) {
            for (int len : lengths) {
                int imm = ImmediateDescriptor.encode(r, len);
                assertEquals(r, ImmediateDescriptor.ring(imm), "ring of 0x" + Integer.toHexString(imm));
                assertEquals(len, ImmediateDescriptor.length(imm), "length of 0x" + Integer.toHexString(imm));
                assertNull(ImmediateDescriptor.validate(imm, r + 1));
            }
        }
        assertEquals(4096, ImmediateDescriptor.MAX_RINGS);
    }

    @Test
    void badImmediatesAreNamedWithTheirValue() {
        int imm = ImmediateDescriptor.encode(6, 64);
        assertEquals("immediate=0x600008 names ring=6 >= rings=6", ImmediateDescriptor.validate(imm, 6));
        assertEquals("immediate=0x200000 announces length=0 for ring=2",
            ImmediateDescriptor.validate(ImmediateDescriptor.encode(2, 0), 6));
    }

    @Test
    void ringLimitNamesBothWorkerCountsAndTheLimit() {
        assertNull(ImmediateDescriptor.validateRings(64, 64));
        assertNull(ImmediateDescriptor.validateRings(16, 256));
        String why = ImmediateDescriptor.validateRings(64, 65);
        assertNotNull(why);
        assertTrue(why.contains("workers local=64 x peer=65") && why.contains("4160 rings")
            && why.contains("exceeds 4096"), why);
        assertNotNull(ImmediateDescriptor.validateRings(65, 64));
        assertNotNull(ImmediateDescriptor.validateRings(256, 256));
    }
}
