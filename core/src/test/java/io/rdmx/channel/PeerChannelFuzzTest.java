package io.rdmx.channel;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.rdmx.transport.Completion;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Status;
import io.rdmx.transport.internal.RegionImpl;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;

/**
 * Fuzzes what a peer sends a {@link PeerChannel}: control messages (HELLO, REGION, NOTIFY batches of DATA and
 * CREDIT entries, see {@link NotificationDescriptor}), the immediate word of a WRITE_WITH_IMM, and the bytes it
 * WRITEs into our incoming rings, which our readers then read.
 *
 * <p>The connection is {@link ChannelFuzzSupport.FakeConnection}: it records what the channel posts, and the
 * input plays the peer, event by event. Input layout: byte 0 configures the run
 * ({@link ChannelFuzzSupport#config}); then events, each an opcode byte and its operands:
 * <ul>
 *   <li>{@code op % 4 == 0}: a SEND of {@code u16} bytes (capped at the posted receive) into the oldest
 *       posted receive, completed as a RECV;</li>
 *   <li>{@code op % 4 == 1}: a WRITE_WITH_IMM with a 4-byte immediate (consumes a receive);</li>
 *   <li>{@code op % 4 == 2}: a WRITE of {@code u16} bytes at {@code u32} modulo the length of our pair
 *       region (known from the REGION we sent);</li>
 *   <li>{@code op % 4 == 3}: every local reader polls.</li>
 * </ul>
 * Contract: completions never throw; a peer that breaks the protocol fails the channel with an exception that
 * names the peer; a credit never moves a writer's tail past its head; readers hand out records inside the ring
 * and otherwise throw only the documented {@code IllegalStateException} ("corrupt ring at position=").
 *
 * <p>Regression inputs: {@code src/test/resources/io/rdmx/channel/PeerChannelFuzzTestInputs/peer}.
 */
class PeerChannelFuzzTest {
    static {
        ChannelFuzzSupport.quietLogs();
    }

    @FuzzTest
    @Timeout(value = 10, unit = TimeUnit.SECONDS)
    void peer(byte[] input) throws RdmxException {
        run(input, null);
    }

    /**
     * A peer that writes a record header no writer writes (the fuzz seed "corrupt-record"): that peer fails,
     * named, with the ring's complaint, and the reader does not throw. Before, every read of that reader threw
     * the ring's {@code IllegalStateException} again (its queue handed the ring back each time) and the peer stayed.
     */
    @org.junit.jupiter.api.Test
    @Timeout(value = 10, unit = TimeUnit.SECONDS)
    void aCorruptRecordFailsItsPeerNamingItAndNoReadThrows() throws RdmxException {
        byte[] seed = ChannelFuzzSeeds.peerSeeds().get("corrupt-record");
        boolean[] checked = {false};
        run(seed, (p, engine) -> {
            assertTrue(!p.isOpen(), "the peer that wrote a corrupt record is still open");
            String m = p.failure().getMessage();
            assertTrue(m.contains("'" + p.name() + "'") && m.contains("corrupt ring at position="), m);
            for (int w = 0; w < engine.config().workers(); w++) {
                engine.reader(w).poll(ChannelFuzzSupport::checkRecord, 1024); // nothing left to throw
            }
            checked[0] = true;
        });
        assertTrue(checked[0]);
    }

    private void run(byte[] input, java.util.function.BiConsumer<PeerChannel, ChannelEngine> atEnd)
        throws RdmxException {
        if (input.length == 0) {
            return;
        }
        ChannelFuzzSupport.Config cfg = ChannelFuzzSupport.config(input[0]);
        ChannelEngine engine = ChannelFuzzSupport.engine(cfg.imm());
        ChannelFuzzSupport.FakeConnection conn = new ChannelFuzzSupport.FakeConnection(engine.node(),
            cfg.peerName());
        PeerChannel p = new PeerChannel(engine, 1, conn);
        try {
            p.start();
            ByteBuffer in = ByteBuffer.wrap(input, 1, input.length - 1).slice().order(ByteOrder.LITTLE_ENDIAN);
            while (in.hasRemaining() && p.isOpen()) {
                int op = in.get() & 0xFF;
                switch (op & 3) {
                    case 0:
                        send(p, conn, in);
                        break;
                    case 1:
                        immediate(p, conn, in);
                        break;
                    case 2:
                        write(conn, in);
                        break;
                    default:
                        poll(engine);
                        break;
                }
                checkWriters(p);
            }
            poll(engine);
            if (!p.isOpen()) {
                ConnectionClosedException f = p.failure();
                assertTrue(f.getMessage() != null && f.getMessage().contains("'" + cfg.peerName() + "'"),
                    () -> "failure does not name the peer: " + f.getMessage());
            }
            if (atEnd != null) {
                atEnd.accept(p, engine);
            }
        } finally {
            if (p.isOpen()) {
                p.fail(new ConnectionClosedException(cfg.peerName(), "end of fuzz input", null));
            }
            poll(engine);
            p.release();
        }
    }

    private static void send(PeerChannel p, ChannelFuzzSupport.FakeConnection conn, ByteBuffer in) {
        if (in.remaining() < 2) {
            in.position(in.limit());
            return;
        }
        int len = in.getShort() & 0xFFFF;
        ChannelFuzzSupport.PostedRecv r = conn.takeRecv();
        if (r == null) {
            return; // a real transport would fail the connection: no receive posted (RNR)
        }
        int n = Math.min(Math.min(len, r.length()), in.remaining());
        ByteBuffer dst = r.region().buffer();
        dst.put(r.offset(), in, in.position(), n);
        in.position(in.position() + n);
        complete(p, conn, new Completion(conn, r.wrId(), Opcode.RECV, Status.SUCCESS, n, 0, false, null));
    }

    private static void immediate(PeerChannel p, ChannelFuzzSupport.FakeConnection conn, ByteBuffer in) {
        if (in.remaining() < 4) {
            in.position(in.limit());
            return;
        }
        int imm = in.getInt();
        ChannelFuzzSupport.PostedRecv r = conn.takeRecv();
        if (r == null) {
            return;
        }
        complete(p, conn, new Completion(conn, r.wrId(), Opcode.RECV, Status.SUCCESS, 0, imm, true, null));
    }

    private static void write(ChannelFuzzSupport.FakeConnection conn, ByteBuffer in) {
        if (in.remaining() < 6) {
            in.position(in.limit());
            return;
        }
        long at = in.getInt() & 0xFFFF_FFFFL;
        int len = in.getShort() & 0xFFFF;
        RegionImpl pair = conn.ourPairRegion();
        int n = Math.min(len, in.remaining());
        if (pair == null) {
            in.position(in.position() + n);
            return; // the peer does not know our region yet
        }
        int offset = (int) (at % pair.length());
        n = Math.min(n, pair.length() - offset);
        pair.memory().put(offset, in, in.position(), n);
        in.position(in.position() + n);
    }

    private static void complete(PeerChannel p, ChannelFuzzSupport.FakeConnection conn, Completion c) {
        try {
            p.onCompletion(c);
        } catch (RuntimeException e) {
            fail("a completion from peer '" + conn.peerName() + "' threw out of PeerChannel.onCompletion: " + e, e);
        }
    }

    private static void checkWriters(PeerChannel p) {
        if (!p.isOpen() || p.workers() == 0) {
            return;
        }
        for (int w = 0; w < p.workers(); w++) {
            ChannelWriter cw;
            try {
                cw = p.writer(0, w);
            } catch (IllegalStateException notReady) {
                return;
            }
            RingBuffer ring = cw.ring();
            long head = ring.headAcquire();
            long tail = ring.tailAcquire();
            assertTrue(tail <= head, () -> "a credit moved the tail of the ring to '" + p.name() + "' to " + tail
                + ", past its head=" + head);
        }
    }

    private static void poll(ChannelEngine engine) {
        for (int w = 0; w < engine.config().workers(); w++) {
            try {
                engine.reader(w).poll(ChannelFuzzSupport::checkRecord, 1024);
            } catch (IllegalStateException e) {
                assertTrue(e.getMessage() != null && e.getMessage().startsWith("corrupt ring at position="),
                    () -> "reader threw an undocumented exception: " + e);
            }
        }
    }
}
