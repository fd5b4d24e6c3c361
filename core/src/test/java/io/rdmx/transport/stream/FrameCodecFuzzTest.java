package io.rdmx.transport.stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.rdmx.transport.ProtocolException;
import io.rdmx.transport.RemoteRegion;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;

/**
 * Fuzzes the stream protocol's header validator and handshake parsers (HELLO, READY) as the receive path uses
 * them: a header is validated first, and only a frame it accepts is parsed.
 *
 * <p>Input layout: byte 0 picks the node's {@code maxTransferSize} ({@code 1 << (b % 31)}), the rest is one frame.
 * Contract: {@link FrameDescriptor#validate} returns null or a reason with {@code name=value}, and accepts only
 * lengths within what the type allows; {@link FrameCodec#parseHello} and {@link FrameCodec#parseReady} return
 * content that re-encodes to the same frame content, or throw a {@link ProtocolException} with {@code name=value};
 * nothing else escapes.
 *
 * <p>Regression inputs: {@code src/test/resources/io/rdmx/transport/stream/FrameCodecFuzzTestInputs/validateAndParse}.
 */
class FrameCodecFuzzTest {
    @FuzzTest
    @Timeout(value = 10, unit = TimeUnit.SECONDS)
    void validateAndParse(byte[] input) {
        if (input.length < 1 + FrameDescriptor.HEADER_LENGTH) {
            return;
        }
        int maxTransfer = 1 << ((input[0] & 0xFF) % 31);
        ByteBuf frame = Unpooled.wrappedBuffer(input, 1, input.length - 1);
        int version = frame.getUnsignedByte(FrameDescriptor.VERSION_OFFSET);
        int type = frame.getUnsignedByte(FrameDescriptor.TYPE_OFFSET);
        long length = frame.getUnsignedIntLE(FrameDescriptor.LENGTH_OFFSET);
        String bad = FrameDescriptor.validate(version, type, length, maxTransfer);
        if (bad != null) {
            assertTrue(bad.contains("="), () -> "reason names no field=value: " + bad);
            return;
        }
        assertTrue(length >= FrameDescriptor.HEADER_LENGTH, "accepted length=" + length + " below the header");
        assertTrue(length <= Math.max(FrameDescriptor.MAX_READY_FRAME,
            FrameDescriptor.WRITE_HEADER_LENGTH + (long) maxTransfer), "accepted length=" + length);
        if (frame.readableBytes() < length) {
            return;
        }
        ByteBuf whole = frame.slice(0, (int) length);
        if (type == FrameDescriptor.TYPE_HELLO) {
            hello(whole);
        } else if (type == FrameDescriptor.TYPE_READY) {
            ready(whole);
        }
    }

    private static void hello(ByteBuf whole) {
        FrameBuffers.Hello h;
        try {
            h = FrameCodec.parseHello(whole);
        } catch (ProtocolException e) {
            assertTrue(e.getMessage().contains("="), () -> "error names no field=value: " + e.getMessage());
            return;
        }
        assertTrue(h.name().getBytes(StandardCharsets.UTF_8).length <= FrameDescriptor.MAX_NAME_LENGTH);
        assertTrue(h.address().getBytes(StandardCharsets.UTF_8).length <= FrameDescriptor.MAX_ADDRESS_LENGTH);
        ByteBuf again = FrameCodec.hello(ByteBufAllocator.DEFAULT, h);
        try {
            FrameBuffers.Hello back = FrameCodec.parseHello(again);
            assertEquals(h.hasSecret(), back.hasSecret());
            assertArrayEquals(h.nonce(), back.nonce());
            assertEquals(h.name(), back.name());
            assertEquals(h.address(), back.address());
        } catch (ProtocolException e) {
            throw new AssertionError("a parsed HELLO does not re-parse after encoding: " + e.getMessage(), e);
        } finally {
            again.release();
        }
    }

    private static void ready(ByteBuf whole) {
        List<RemoteRegion> regions;
        try {
            regions = FrameCodec.parseReady(whole);
        } catch (ProtocolException e) {
            assertTrue(e.getMessage().contains("="), () -> "error names no field=value: " + e.getMessage());
            return;
        }
        assertTrue(regions.size() <= FrameDescriptor.MAX_REGIONS);
        ByteBuf again = FrameCodec.ready(ByteBufAllocator.DEFAULT, regions);
        try {
            assertEquals(whole.readableBytes(), again.readableBytes(), "READY re-encodes to its length");
            assertEquals(regions, FrameCodec.parseReady(again));
        } catch (ProtocolException e) {
            throw new AssertionError("a parsed READY does not re-parse after encoding: " + e.getMessage(), e);
        } finally {
            again.release();
        }
    }
}
