package io.rdmx.verbs.tools;

import io.rdmx.channel.ChannelConfig;
import io.rdmx.channel.ChannelEngine;
import io.rdmx.channel.ChannelWriter;
import io.rdmx.channel.PeerChannel;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A two-process ring-channel run on a provider (the Soft-RoCE CI job runs it on {@code verbs}): the client
 * process streams {@code n} records of varying sizes (each carries its sequence number and a pattern derived
 * from it) through a ring channel; the server process checks every byte and the order, then answers with the
 * count. Prints {@code CHANNEL OK ...} on success, exits 1 on any failure. Usage:
 * {@code ChannelRun server|client <provider> <address file> <records>}. With provider {@code auto} (the run
 * between two hosts) each side takes what {@link Fabrics#choose} picks for a peer on another host and says so:
 * {@code PROVIDER <name> (auto)}.
 */
public final class ChannelRun {
    private static final int DATA = 1;
    private static final int DONE = 2;
    /** How long a side waits for the other: between the Soft-RoCE job's two VMs, JVMs start a minute apart. */
    private static final Duration WAIT = Duration.ofSeconds(300);

    private ChannelRun() {
    }

    /**
     * @param args role, provider, address file, record count
     */
    public static void main(String[] args) {
        try {
            long n = Long.parseLong(args[3]);
            if (args[0].equals("server")) {
                server(args[1], Path.of(args[2]), n);
            } else {
                client(args[1], Path.of(args[2]), n);
            }
            System.exit(0);
        } catch (Throwable t) {
            System.out.println("CHANNEL FAILED (" + args[0] + "): " + t);
            t.printStackTrace(System.out);
            System.exit(1);
        }
    }

    /**
     * The provider to open: the one named, or for {@code auto} the one {@link Fabrics#choose} ranks best for a peer
     * on another host (the only place this tool runs under {@code auto}), printed so the caller can check it.
     */
    static Fabric fabric(String provider) throws RdmxException {
        Fabric f = Fabrics.forAnotherHost(provider);
        if (Fabrics.AUTO.equals(provider)) {
            System.out.println("PROVIDER " + f.name() + " (auto)");
        }
        return f;
    }

    static int length(long seq) {
        return 8 + (int) ((seq * 7919) % 4000);
    }

    private static byte pattern(long seq, int i) {
        return (byte) (seq * 31 + i);
    }

    private static void server(String provider, Path addressFile, long n) throws Exception {
        ChannelConfig cfg = ChannelConfig.builder(1).build();
        try (Node node = fabric(provider).open(NodeOptions.builder().name("channel-server").build());
             ChannelEngine engine = ChannelEngine.open(node, cfg)) {
            Path tmp = addressFile.resolveSibling(addressFile.getFileName() + ".tmp");
            Files.writeString(tmp, node.address());
            Files.move(tmp, addressFile);
            PeerChannel peer = engine.accept(WAIT);
            long[] seen = {0};
            long[] bytes = {0};
            while (seen[0] < n) {
                int k = engine.reader(0).read((stream, buf, off, len, src) -> {
                    long seq = buf.order(ByteOrder.LITTLE_ENDIAN).getLong(off);
                    if (stream != DATA || seq != seen[0] || len != length(seq)) {
                        throw new IllegalStateException("record " + seen[0] + ": stream " + stream + " seq " + seq
                            + " length " + len);
                    }
                    for (int i = 8; i < len; i++) {
                        if (buf.get(off + i) != pattern(seq, i)) {
                            throw new IllegalStateException("record " + seq + " differs at byte " + i);
                        }
                    }
                    seen[0]++;
                    bytes[0] += len;
                }, 256, WAIT.toSeconds(), TimeUnit.SECONDS);
                if (k == 0) {
                    throw new RdmxException("no record for " + WAIT + " after " + seen[0]);
                }
            }
            ChannelWriter back = peer.writer(0, 0);
            ByteBuffer reply = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putLong(seen[0])
                .putLong(bytes[0]).flip();
            back.write(DONE, reply, WAIT.toSeconds(), TimeUnit.SECONDS);
            back.flush();
            // stay until the client has read the answer and closed
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (peer.isOpen() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            System.out.println("CHANNEL SERVER OK: " + seen[0] + " records, " + bytes[0] + " bytes checked");
        }
    }

    private static void client(String provider, Path addressFile, long n) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!Files.exists(addressFile)) {
            if (System.nanoTime() > deadline) {
                throw new RdmxException("the server did not publish its address in " + WAIT);
            }
            Thread.sleep(200);
        }
        String address = Files.readString(addressFile).trim();
        // the server's accept waits WAIT from when it published its address: so long to connect from now on
        deadline = System.nanoTime() + WAIT.toNanos();
        ChannelConfig cfg = ChannelConfig.builder(1).build();
        try (Node node = fabric(provider).open(NodeOptions.builder().name("channel-client").build());
             ChannelEngine engine = ChannelEngine.open(node, cfg)) {
            PeerChannel peer = null;
            RdmxException last = null;
            while (peer == null && System.nanoTime() < deadline) {
                try {
                    // a refused connection (the server not yet listening) fails at once and is tried again; a
                    // slow handshake gets the whole wait (in a loaded TCG VM it can take longer than 10 s)
                    peer = engine.connect(address, WAIT);
                } catch (RdmxException e) {
                    last = e;
                    Thread.sleep(500);
                }
            }
            if (peer == null) {
                throw new RdmxException("cannot connect to " + address + ": " + last, last);
            }
            ChannelWriter w = peer.writer(0, 0);
            long t0 = System.nanoTime();
            long bytes = 0;
            for (long seq = 0; seq < n; seq++) {
                int len = length(seq);
                int at = w.claim(DATA, len, WAIT.toSeconds(), TimeUnit.SECONDS);
                ByteBuffer b = w.buffer();
                b.order(ByteOrder.LITTLE_ENDIAN).putLong(at, seq);
                for (int i = 8; i < len; i++) {
                    b.put(at + i, pattern(seq, i));
                }
                w.commit();
                bytes += len;
            }
            w.flush();
            long[] answer = new long[2];
            int k = engine.reader(0).read((stream, buf, off, len, src) -> {
                ByteBuffer a = buf.duplicate().order(ByteOrder.LITTLE_ENDIAN);
                answer[0] = a.getLong(off);
                answer[1] = a.getLong(off + 8);
            }, 1, WAIT.toSeconds(), TimeUnit.SECONDS);
            double s = (System.nanoTime() - t0) / 1e9;
            if (k != 1 || answer[0] != n || answer[1] != bytes) {
                throw new IllegalStateException("server answered " + answer[0] + " records / " + answer[1]
                    + " bytes, sent " + n + " / " + bytes);
            }
            System.out.printf("CHANNEL OK: %d records (%d bytes) over %s between two processes, checked by the"
                + " receiver, %.1f MB/s%n", n, bytes, node.fabric().name(), bytes / 1e6 / s);
        }
    }
}
