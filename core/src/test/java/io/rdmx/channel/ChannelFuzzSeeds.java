package io.rdmx.channel;

import io.rdmx.transport.RemoteRegion;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Writes the seed inputs of the channel fuzz targets with {@link NotificationDescriptor}'s and
 * {@link RingBuffer}'s own writers. Run by {@code scripts/rdmx fuzz --seeds}, which sets
 * {@code rdmx.fuzz.writeSeeds=true}; the files are checked in and replayed by every {@code mvn verify}.
 */
class ChannelFuzzSeeds {
    private static final Path RESOURCES = Path.of("src/test/resources/io/rdmx/channel");
    private static final int PAIR_LENGTH = new PairLayout(1, 1, ChannelFuzzSupport.RING_CAPACITY).regionLength();

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    @EnabledIfSystemProperty(named = "rdmx.fuzz.writeSeeds", matches = "true")
    void write() throws IOException {
        writeAll(RESOURCES.resolve("PeerChannelFuzzTestInputs/peer"), peerSeeds());
        writeAll(RESOURCES.resolve("RingBufferFuzzTestInputs/read"), ringSeeds());
    }

    private static void writeAll(Path dir, Map<String, byte[]> seeds) throws IOException {
        Files.createDirectories(dir);
        for (Map.Entry<String, byte[]> e : seeds.entrySet()) {
            Files.write(dir.resolve("seed-" + e.getKey()), e.getValue());
        }
    }

    /** Builds a peer script: events as {@link PeerChannelFuzzTest} reads them. */
    private static final class Script {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();

        Script(ChannelFuzzSupport.Config cfg) {
            out.write(cfg.encode());
        }

        private ByteBuffer le(int n) {
            return ByteBuffer.allocate(n).order(ByteOrder.LITTLE_ENDIAN);
        }

        Script send(ByteBuffer msg) {
            out.write(0);
            out.writeBytes(le(2).putShort(0, (short) msg.remaining()).array());
            byte[] b = new byte[msg.remaining()];
            msg.duplicate().get(b);
            out.writeBytes(b);
            return this;
        }

        Script immediate(int imm) {
            out.write(1);
            out.writeBytes(le(4).putInt(0, imm).array());
            return this;
        }

        Script write(int at, byte[] data) {
            out.write(2);
            out.writeBytes(le(6).putInt(0, at).putShort(4, (short) data.length).array());
            out.writeBytes(data);
            return this;
        }

        Script poll() {
            out.write(3);
            return this;
        }

        byte[] bytes() {
            return out.toByteArray();
        }
    }

    private static ByteBuffer hello(int workers, int capacity, ChannelConfig.Notification mode) {
        ByteBuffer b = ByteBuffer.allocate(NotificationDescriptor.HELLO_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        NotificationDescriptor.header(b, 0, NotificationDescriptor.TYPE_HELLO, 0);
        b.putInt(NotificationDescriptor.HELLO_WORKERS_OFFSET, workers);
        b.putInt(NotificationDescriptor.HELLO_CAPACITY_OFFSET, capacity);
        b.putInt(NotificationDescriptor.HELLO_MODE_OFFSET, mode.ordinal());
        return b;
    }

    private static ByteBuffer region(int length) {
        ByteBuffer b = ByteBuffer.allocate(NotificationDescriptor.REGION_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        NotificationDescriptor.header(b, 0, NotificationDescriptor.TYPE_REGION, 0);
        new RemoteRegion(1L << 31, length, 0x5eed).encode(b, NotificationDescriptor.REGION_OFFSET);
        return b;
    }

    private static ByteBuffer notify(int[] kinds, long[] positions) {
        int n = kinds.length;
        int length = NotificationDescriptor.HEADER_LENGTH + n * NotificationDescriptor.ENTRY_LENGTH;
        ByteBuffer b = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
        NotificationDescriptor.header(b, 0, NotificationDescriptor.TYPE_NOTIFY, n);
        for (int i = 0; i < n; i++) {
            NotificationDescriptor.entry(b, 0, i, kinds[i], 0, positions[i]);
        }
        return b;
    }

    /** Records as a writer lays them out: returns the ring's bytes up to its head. */
    private static byte[] records(int capacity, int... payloadLengths) {
        RingBuffer r = new RingBuffer(ByteBuffer.allocateDirect(capacity), capacity / 4);
        for (int len : payloadLengths) {
            ByteBuffer p = ByteBuffer.allocate(len);
            for (int i = 0; i < len; i++) {
                p.put(i, (byte) (i + 1));
            }
            r.write(7, p);
        }
        byte[] b = new byte[(int) r.headAcquire()];
        r.buffer().get(0, b);
        return b;
    }

    static Map<String, byte[]> peerSeeds() {
        Map<String, byte[]> m = new LinkedHashMap<>();
        int cap = ChannelFuzzSupport.RING_CAPACITY;
        for (boolean imm : new boolean[] {false, true}) {
            ChannelConfig.Notification mode = imm ? ChannelConfig.Notification.WRITE_WITH_IMM
                : ChannelConfig.Notification.SEND;
            for (String peer : new String[] {ChannelFuzzSupport.LOW_PEER, ChannelFuzzSupport.HIGH_PEER}) {
                boolean peerIsLow = peer.equals(ChannelFuzzSupport.LOW_PEER);
                int incoming = peerIsLow ? 0 : cap; // ring (peer worker 0 -> our worker 0)
                byte[] recs = records(cap, 5, 16);
                Script s = new Script(new ChannelFuzzSupport.Config(imm, peer))
                    .send(hello(1, cap, mode)).send(region(PAIR_LENGTH))
                    .write(incoming, recs);
                if (imm) {
                    s.immediate(recs.length / 8);
                } else {
                    s.send(notify(new int[] {NotificationDescriptor.KIND_DATA}, new long[] {recs.length}));
                }
                s.poll().send(notify(new int[] {NotificationDescriptor.KIND_CREDIT}, new long[] {0}));
                m.put((imm ? "imm" : "send") + "-" + (peerIsLow ? "low" : "high") + "-peer", s.bytes());
            }
        }
        ChannelFuzzSupport.Config plain = new ChannelFuzzSupport.Config(false, ChannelFuzzSupport.LOW_PEER);
        m.put("region-before-hello", new Script(plain).send(region(PAIR_LENGTH)).bytes());
        m.put("hello-twice", new Script(plain).send(hello(1, cap, ChannelConfig.Notification.SEND))
            .send(hello(1, cap, ChannelConfig.Notification.SEND)).bytes());
        m.put("data-beyond-capacity", new Script(plain).send(hello(2, cap, ChannelConfig.Notification.SEND))
            .send(region(2 * PAIR_LENGTH))
            .send(notify(new int[] {NotificationDescriptor.KIND_DATA}, new long[] {cap + 8})).bytes());
        m.put("corrupt-record", new Script(plain).send(hello(1, cap, ChannelConfig.Notification.SEND))
            .send(region(PAIR_LENGTH)).write(0, new byte[] {8, 0, 0, 0, 0, 0, 9, 0})
            .send(notify(new int[] {NotificationDescriptor.KIND_DATA}, new long[] {16})).poll().bytes());
        return m;
    }

    static Map<String, byte[]> ringSeeds() {
        Map<String, byte[]> m = new LinkedHashMap<>();
        // layout read by RingBufferFuzzTest: capacity selector, tail (u32), head advance (u32), then ring bytes
        m.put("records", ring(0, 0, records(64, 5, 8), 64));
        m.put("wrapped-with-padding", wrapped());
        m.put("larger-ring", ring(2, 0, records(256, 1, 2, 3, 40), 256));
        return m;
    }

    /** A ring whose last record wrapped: padding to the end, the record at index 0; tail, head and bytes. */
    private static byte[] wrapped() {
        RingBuffer r = new RingBuffer(ByteBuffer.allocateDirect(64), 16);
        r.write(1, ByteBuffer.allocate(16)); // 0..24
        r.write(1, ByteBuffer.allocate(16)); // 24..48
        r.read((s, b, o, l) -> { }, 10);
        r.write(2, ByteBuffer.allocate(16)); // padding 48..64, the record at 64..88
        ByteBuffer b = ByteBuffer.allocate(9 + 64).order(ByteOrder.LITTLE_ENDIAN);
        b.put((byte) 0).putInt((int) r.tailAcquire()).putInt((int) (r.headAcquire() - r.tailAcquire()));
        r.buffer().get(0, b.array(), 9, 64);
        return b.array();
    }

    private static byte[] ring(int capacitySelector, int tail, byte[] bytes, int capacity) {
        ByteBuffer b = ByteBuffer.allocate(9 + capacity).order(ByteOrder.LITTLE_ENDIAN);
        b.put((byte) capacitySelector).putInt(tail).putInt(bytes.length);
        b.put(bytes, 0, Math.min(bytes.length, capacity));
        return b.array();
    }
}
