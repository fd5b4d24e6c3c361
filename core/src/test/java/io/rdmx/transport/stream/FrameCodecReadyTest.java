package io.rdmx.transport.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.rdmx.transport.ProtocolException;
import io.rdmx.transport.RemoteRegion;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** READY frames carry each region's name after its descriptor; a peer's bad names are refused by name. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class FrameCodecReadyTest {
    private static final List<RemoteRegion> REGIONS = List.of(new RemoteRegion(1L << 31, 4096, 0x11, "inbox"),
        new RemoteRegion(2L << 31, 64, 0x22), new RemoteRegion(3L << 31, 8, 0x33, "x".repeat(64)));

    private static ByteBuf frame(List<RemoteRegion> regions) {
        return FrameCodec.ready(Unpooled.buffer().alloc(), regions);
    }

    @Test
    void namesRoundTripInRegistrationOrder() throws Exception {
        ByteBuf f = frame(REGIONS);
        try {
            assertEquals(FrameDescriptor.HEADER_LENGTH + 2 + 3 * (FrameDescriptor.REGION_DESCRIPTOR_LENGTH + 1) + 5
                + 64, f.readableBytes());
            assertEquals(null, FrameDescriptor.validate(f.getByte(FrameDescriptor.VERSION_OFFSET),
                f.getByte(FrameDescriptor.TYPE_OFFSET), f.readableBytes(), 1 << 20), "a READY within the frame limit");
            List<RemoteRegion> back = FrameCodec.parseReady(f);
            assertEquals(REGIONS, back);
            assertEquals(List.of("inbox", "", "x".repeat(64)), names(back));
        } finally {
            f.release();
        }
    }

    @Test
    void theLargestReadyFitsTheFrameLimit() throws Exception {
        List<RemoteRegion> many = new ArrayList<>();
        for (int i = 0; i < FrameDescriptor.MAX_REGIONS; i++) {
            many.add(new RemoteRegion(i, 1, i + 1, String.format("%064d", i)));
        }
        ByteBuf f = frame(many);
        try {
            assertEquals(FrameDescriptor.MAX_READY_FRAME, f.readableBytes());
            assertEquals(null, FrameDescriptor.validate(FrameDescriptor.VERSION, FrameDescriptor.TYPE_READY,
                f.readableBytes(), 1 << 20));
            assertEquals(many, FrameCodec.parseReady(f));
        } finally {
            f.release();
        }
    }

    @Test
    void badNamesFromAPeerAreProtocolErrors() {
        int firstNameLength = FrameDescriptor.HEADER_LENGTH + 2 + FrameDescriptor.REGION_DESCRIPTOR_LENGTH;
        assertRefused(REGIONS, b -> b.setByte(firstNameLength, RemoteRegion.MAX_NAME_BYTES + 1), "name length=65");
        assertRefused(REGIONS, b -> b.setByte(firstNameLength, 200), "name length=200");
        assertRefused(List.of(new RemoteRegion(0, 8, 1, "ab")), b -> b.setByte(firstNameLength, 9), "region 0 name");
        assertRefused(List.of(new RemoteRegion(0, 8, 1, "ab")), b -> b.setByte(firstNameLength + 1, 0x0a),
            "control character");
        assertRefused(List.of(new RemoteRegion(0, 8, 1, "same"), new RemoteRegion(8, 8, 2, "same")), b -> { },
            "repeats the name 'same'");
        assertRefused(List.of(new RemoteRegion(0, 8, 1, "ab")), b -> b.setByte(firstNameLength, 1),
            "1 bytes unread");
    }

    private static void assertRefused(List<RemoteRegion> regions, java.util.function.Consumer<ByteBuf> damage,
                                      String expected) {
        ByteBuf f = frame(regions);
        try {
            damage.accept(f);
            ProtocolException e = assertThrows(ProtocolException.class, () -> FrameCodec.parseReady(f));
            assertTrue(e.getMessage().contains(expected), e.getMessage() + " should contain " + expected);
        } finally {
            f.release();
        }
    }

    private static List<String> names(List<RemoteRegion> rs) {
        List<String> out = new ArrayList<>();
        for (RemoteRegion r : rs) {
            out.add(r.name());
        }
        return out;
    }
}
