package io.rdmx.transport.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.rdmx.transport.ProtocolException;
import io.rdmx.transport.RemoteRegion;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
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
 * lengths within what the type allows; {@link FrameBuffers#parseHello} and {@link FrameBuffers#parseReady} (which the shm
 * handler and the Netty codec of tcp both call) return
 * content that re-encodes to the same frame content, or throw a {@link ProtocolException} with {@code name=value};
 * nothing else escapes.
 *
 * <p>Regression inputs: {@code src/test/resources/io/rdmx/transport/wire/FrameBuffersFuzzTestInputs/validateAndParse}.
 */
class FrameBuffersFuzzTest {
    @FuzzTest
    @Timeout(value = 10, unit = TimeUnit.SECONDS)
    void validateAndParse(byte[] input) {
        if (input.length < 1 + FrameDescriptor.HEADER_LENGTH) {
            return;
        }
        int maxTransfer = 1 << ((input[0] & 0xFF) % 31);
        ByteBuffer frame = ByteBuffer.wrap(input, 1, input.length - 1).slice().order(ByteOrder.LITTLE_ENDIAN);
        int version = Byte.toUnsignedInt(frame.get(FrameDescriptor.VERSION_OFFSET));
        int type = Byte.toUnsignedInt(frame.get(FrameDescriptor.TYPE_OFFSET));
        long length = Integer.toUnsignedLong(frame.getInt(FrameDescriptor.LENGTH_OFFSET));
        String bad = FrameDescriptor.validate(version, type, length, maxTransfer);
        if (bad != null) {
            assertTrue(bad.contains("="), () -> "reason names no field=value: " + bad);
            return;
        }
        assertTrue(length >= FrameDescriptor.HEADER_LENGTH, "accepted length=" + length + " below the header");
        assertTrue(length <= Math.max(FrameDescriptor.MAX_READY_FRAME,
            FrameDescriptor.WRITE_HEADER_LENGTH + (long) maxTransfer), "accepted length=" + length);
        if (frame.remaining() < length) {
            return;
        }
        ByteBuffer whole = frame.slice(0, (int) length);
        if (type == FrameDescriptor.TYPE_HELLO) {
            hello(whole);
        } else if (type == FrameDescriptor.TYPE_READY) {
            ready(whole);
        }
    }

    private static void hello(ByteBuffer whole) {
        FrameBuffers.Hello h;
        try {
            h = FrameBuffers.parseHello(whole);
        } catch (ProtocolException e) {
            assertTrue(e.getMessage().contains("="), () -> "error names no field=value: " + e.getMessage());
            return;
        }
        assertTrue(h.name().getBytes(StandardCharsets.UTF_8).length <= FrameDescriptor.MAX_NAME_LENGTH);
        assertTrue(h.address().getBytes(StandardCharsets.UTF_8).length <= FrameDescriptor.MAX_ADDRESS_LENGTH);
        ByteBuffer again = FrameBuffers.hello(h);
        try {
            FrameBuffers.Hello back = FrameBuffers.parseHello(again);
            assertEquals(h.hasSecret(), back.hasSecret());
            assertArrayEquals(h.nonce(), back.nonce());
            assertEquals(h.name(), back.name());
            assertEquals(h.address(), back.address());
        } catch (ProtocolException e) {
            throw new AssertionError("a parsed HELLO does not re-parse after encoding: " + e.getMessage(), e);
        }
    }

    private static void ready(ByteBuffer whole) {
        List<RemoteRegion> regions;
        try {
            regions = FrameBuffers.parseReady(whole);
        } catch (ProtocolException e) {
            assertTrue(e.getMessage().contains("="), () -> "error names no field=value: " + e.getMessage());
            return;
        }
        assertTrue(regions.size() <= FrameDescriptor.MAX_REGIONS);
        ByteBuffer again = FrameBuffers.ready(regions);
        try {
            assertEquals(whole.remaining(), again.remaining(), "READY re-encodes to its length");
            assertEquals(regions, FrameBuffers.parseReady(again));
        } catch (ProtocolException e) {
            throw new AssertionError("a parsed READY does not re-parse after encoding: " + e.getMessage(), e);
        }
    }
}
