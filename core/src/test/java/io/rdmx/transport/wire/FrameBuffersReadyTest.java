package io.rdmx.transport.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.ProtocolException;
import io.rdmx.transport.RemoteRegion;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** READY frames carry each region's name after its descriptor; a peer's bad names are refused by name. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class FrameBuffersReadyTest {
    private static final List<RemoteRegion> REGIONS = List.of(new RemoteRegion(1L << 31, 4096, 0x11, "inbox"),
        new RemoteRegion(2L << 31, 64, 0x22), new RemoteRegion(3L << 31, 8, 0x33, "x".repeat(64)));

    private static ByteBuffer frame(List<RemoteRegion> regions) {
        return FrameBuffers.ready(regions);
    }

    @Test
    void namesRoundTripInRegistrationOrder() throws Exception {
        ByteBuffer f = frame(REGIONS);
        assertEquals(FrameDescriptor.HEADER_LENGTH + 2 + 3 * (FrameDescriptor.REGION_DESCRIPTOR_LENGTH + 1) + 5
            + 64, f.remaining());
        assertEquals(null, FrameDescriptor.validate(f.get(FrameDescriptor.VERSION_OFFSET),
            f.get(FrameDescriptor.TYPE_OFFSET), f.remaining(), 1 << 20), "a READY within the frame limit");
        List<RemoteRegion> back = FrameBuffers.parseReady(f);
        assertEquals(REGIONS, back);
        assertEquals(List.of("inbox", "", "x".repeat(64)), names(back));
    }

    @Test
    void theLargestReadyFitsTheFrameLimit() throws Exception {
        List<RemoteRegion> many = new ArrayList<>();
        for (int i = 0; i < FrameDescriptor.MAX_REGIONS; i++) {
            many.add(new RemoteRegion(i, 1, i + 1, String.format("%064d", i)));
        }
        ByteBuffer f = frame(many);
        assertEquals(FrameDescriptor.MAX_READY_FRAME, f.remaining());
        assertEquals(null, FrameDescriptor.validate(FrameDescriptor.VERSION, FrameDescriptor.TYPE_READY,
            f.remaining(), 1 << 20));
        assertEquals(many, FrameBuffers.parseReady(f));
    }

    @Test
    void badNamesFromAPeerAreProtocolErrors() {
        int firstNameLength = FrameDescriptor.HEADER_LENGTH + 2 + FrameDescriptor.REGION_DESCRIPTOR_LENGTH;
        assertRefused(REGIONS, b -> b.put(firstNameLength, (byte) (RemoteRegion.MAX_NAME_BYTES + 1)), "name length=65");
        assertRefused(REGIONS, b -> b.put(firstNameLength, (byte) 200), "name length=200");
        assertRefused(List.of(new RemoteRegion(0, 8, 1, "ab")), b -> b.put(firstNameLength, (byte) 9), "region 0 name");
        assertRefused(List.of(new RemoteRegion(0, 8, 1, "ab")), b -> b.put(firstNameLength + 1, (byte) 0x0a),
            "control character");
        assertRefused(List.of(new RemoteRegion(0, 8, 1, "same"), new RemoteRegion(8, 8, 2, "same")), b -> { },
            "repeats the name 'same'");
        assertRefused(List.of(new RemoteRegion(0, 8, 1, "ab")), b -> b.put(firstNameLength, (byte) 1),
            "1 bytes unread");
    }

    private static void assertRefused(List<RemoteRegion> regions, java.util.function.Consumer<ByteBuffer> damage,
                                      String expected) {
        ByteBuffer f = frame(regions);
        damage.accept(f);
        ProtocolException e = assertThrows(ProtocolException.class, () -> FrameBuffers.parseReady(f));
        assertTrue(e.getMessage().contains(expected), e.getMessage() + " should contain " + expected);
    }

    private static List<String> names(List<RemoteRegion> rs) {
        List<String> out = new ArrayList<>();
        for (RemoteRegion r : rs) {
            out.add(r.name());
        }
        return out;
    }
}
