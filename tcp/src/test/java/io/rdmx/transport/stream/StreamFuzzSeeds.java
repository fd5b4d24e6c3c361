package io.rdmx.transport.stream;

import io.rdmx.transport.wire.FrameDescriptor;
import io.rdmx.transport.wire.FrameBuffers;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.Status;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Writes the seed inputs of the stream fuzz targets, built with {@link FrameCodec}'s encoders so they follow the
 * protocol as it is now. Run by {@code scripts/rdmx fuzz --seeds} (after a protocol change), which sets
 * {@code rdmx.fuzz.writeSeeds=true}; the files are checked in and replayed by every {@code mvn verify}.
 */
class StreamFuzzSeeds {
    private static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;
    private static final Path RESOURCES = Path.of("src/test/resources/io/rdmx/transport/stream");

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    @EnabledIfSystemProperty(named = "rdmx.fuzz.writeSeeds", matches = "true")
    void write() throws IOException {
        writeAll(RESOURCES.resolve("StreamHandlerFuzzTestInputs/receive"), handlerSeeds());
        // rdmx-core's targets: the shm handler speaks the same protocol and decodes the same input layout, and
        // FrameBuffersFuzzTest parses the frames both handlers share (this runs in tcp/, core/ is its sibling)
        Path core = Path.of("../core/src/test/resources/io/rdmx/transport");
        writeAll(core.resolve("shm/ShmHandlerFuzzTestInputs/receive"), handlerSeeds());
        writeAll(core.resolve("wire/FrameBuffersFuzzTestInputs/validateAndParse"), codecSeeds());
    }

    static void writeAll(Path dir, Map<String, byte[]> seeds) throws IOException {
        Files.createDirectories(dir);
        for (Map.Entry<String, byte[]> e : seeds.entrySet()) {
            Files.write(dir.resolve("seed-" + e.getKey()), e.getValue());
        }
    }

    private static FrameBuffers.Hello hello(boolean secret) {
        return new FrameBuffers.Hello(secret, new byte[FrameDescriptor.NONCE_LENGTH], "fuzz-peer", "127.0.0.1:1");
    }

    private static ByteBuf ready() {
        return FrameCodec.ready(ALLOC, List.of(new RemoteRegion(1L << 31, 4096, 0x1234)));
    }

    private static byte[] bytes(byte first, ByteBuf... frames) {
        ByteBuf all = Unpooled.buffer();
        all.writeByte(first);
        for (ByteBuf f : frames) {
            all.writeBytes(f);
            f.release();
        }
        byte[] b = new byte[all.readableBytes()];
        all.readBytes(b);
        return b;
    }

    private static ByteBuf data(int n) {
        ByteBuf b = Unpooled.buffer(n);
        for (int i = 0; i < n; i++) {
            b.writeByte(i);
        }
        return b;
    }

    private static ByteBuf write(int flags, long seq, long offset, int n) {
        return FrameCodec.writeHeader(ALLOC, flags, seq, StreamFuzzSupport.FUZZ_RKEY, 0x77, offset, n);
    }

    private static byte cfg(boolean active, boolean secret, boolean placed, int recvs, int chunk) {
        return new StreamFuzzSupport.Config(active, secret, placed, recvs, chunk).encode();
    }

    static Map<String, byte[]> handlerSeeds() {
        Map<String, byte[]> m = new LinkedHashMap<>();
        m.put("passive-write-send-imm", bytes(cfg(false, false, false, 2, 0),
            FrameCodec.hello(ALLOC, hello(false)), ready(),
            write(0, 1, 8, 16), data(16),
            FrameCodec.sendHeader(ALLOC, 2, 8), data(8),
            write(FrameDescriptor.FLAG_WITH_IMM, 3, 0, 4), data(4),
            FrameCodec.simple(ALLOC, FrameDescriptor.TYPE_ACK, 0),
            FrameCodec.simple(ALLOC, FrameDescriptor.TYPE_PING, 0),
            FrameCodec.error(ALLOC, "bye")));
        m.put("passive-split-frames", bytes(cfg(false, false, false, 1, 21),
            FrameCodec.hello(ALLOC, hello(false)), ready(),
            write(0, 1, 0, 40), data(40),
            FrameCodec.sendHeader(ALLOC, 2, 30), data(30)));
        m.put("passive-send-waits-for-recv", bytes(cfg(false, false, false, 0, 0),
            FrameCodec.hello(ALLOC, hello(false)), ready(),
            FrameCodec.sendHeader(ALLOC, 1, 8), data(8)));
        m.put("active-ready-write-nak", bytes(cfg(true, false, false, 1, 0),
            FrameCodec.hello(ALLOC, hello(false)), ready(),
            write(0, 1, 0, 8), data(8),
            FrameCodec.nak(ALLOC, 1, Status.REMOTE_ACCESS_ERROR.ordinal(), "refused")));
        m.put("passive-secret-auth", bytes(cfg(false, true, false, 0, 0),
            FrameCodec.hello(ALLOC, hello(true)),
            FrameCodec.auth(ALLOC, new byte[FrameDescriptor.MAC_LENGTH]), ready()));
        m.put("active-secret-auth", bytes(cfg(true, true, false, 0, 7),
            FrameCodec.hello(ALLOC, hello(true)),
            FrameCodec.auth(ALLOC, new byte[FrameDescriptor.MAC_LENGTH]), ready()));
        m.put("passive-placed", bytes(cfg(false, false, true, 1, 0),
            FrameCodec.hello(ALLOC, hello(false)), ready(),
            write(FrameDescriptor.FLAG_PLACED | FrameDescriptor.FLAG_WITH_IMM, 1, 0, 64),
            write(FrameDescriptor.FLAG_PLACED, 2, 64, 64)));
        m.put("passive-write-out-of-bounds", bytes(cfg(false, false, false, 0, 0),
            FrameCodec.hello(ALLOC, hello(false)), ready(),
            write(0, 1, StreamFuzzSupport.TARGET_LENGTH - 4, 8), data(8)));
        m.put("passive-send-too-long", bytes(cfg(false, false, false, 1, 0),
            FrameCodec.hello(ALLOC, hello(false)), ready(),
            FrameCodec.sendHeader(ALLOC, 1, 100), data(100)));
        ByteBuf badVersion = FrameCodec.hello(ALLOC, hello(false));
        badVersion.setByte(FrameDescriptor.VERSION_OFFSET, FrameDescriptor.VERSION + 1);
        m.put("bad-version", bytes(cfg(false, false, false, 0, 0), badVersion));
        return m;
    }

    static Map<String, byte[]> codecSeeds() {
        Map<String, byte[]> m = new LinkedHashMap<>();
        byte maxTransfer = 16; // 1 << 16
        m.put("hello", bytes(maxTransfer, FrameCodec.hello(ALLOC, hello(false))));
        m.put("hello-secret", bytes(maxTransfer, FrameCodec.hello(ALLOC,
            new FrameBuffers.Hello(true, new byte[FrameDescriptor.NONCE_LENGTH], "n", "a"))));
        m.put("ready", bytes(maxTransfer, ready()));
        m.put("ready-empty", bytes(maxTransfer, FrameCodec.ready(ALLOC, List.of())));
        m.put("write", bytes(maxTransfer, write(0, 1, 0, 8), data(8)));
        m.put("send", bytes(maxTransfer, FrameCodec.sendHeader(ALLOC, 1, 8), data(8)));
        m.put("auth", bytes(maxTransfer, FrameCodec.auth(ALLOC, new byte[FrameDescriptor.MAC_LENGTH])));
        m.put("nak", bytes(maxTransfer, FrameCodec.nak(ALLOC, 1, 1, "why")));
        m.put("error", bytes(maxTransfer, FrameCodec.error(ALLOC, "why")));
        m.put("ack", bytes(maxTransfer, FrameCodec.simple(ALLOC, FrameDescriptor.TYPE_ACK, 9)));
        return m;
    }
}
