package io.rdmx.rpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.channel.ChannelConfig;
import io.rdmx.channel.ChannelEngine;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.loopback.LoopbackFabric;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The server's one answer path, over a loopback pair without an {@link RpcServer} around it: what it writes into
 * the client's ring (read back with an {@link Assembler}), and which thread writes it.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ResponderTest {
    private static final int RING = 64 << 10;
    private static final int LIMIT = 100_000;
    /** More than one ring record, and room for it in the ring with nobody reading. */
    private static final int BIG = ChannelConfig.builder(1).ringCapacity(RING).build().maxRecordPayload() + 100;

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final List<Runnable> handedOver = new ArrayList<>();
    private final List<String> answers = new ArrayList<>();
    private final List<byte[]> bodies = new ArrayList<>();
    private Node server;
    private Node client;
    private ChannelEngine clientEngine;
    private ClientLinks clients;
    private volatile boolean running = true;

    @BeforeEach
    void setUp() throws Exception {
        LoopbackFabric fabric = new LoopbackFabric();
        long pid = ProcessHandle.current().pid();
        server = closing(fabric.open(NodeOptions.builder().name("responder-s-" + pid).build()));
        client = closing(fabric.open(NodeOptions.builder().name("responder-c-" + pid).build()));
        ChannelEngine serverEngine = closing(ChannelEngine.open(server, ChannelConfig.builder(1).ringCapacity(RING)
            .build()));
        clientEngine = closing(ChannelEngine.open(client, ChannelConfig.builder(1).ringCapacity(RING).build()));
        clients = new ClientLinks(serverEngine, server.name(), () -> running, Duration.ofMillis(50));
        clients.start();
        closeables.add(() -> {
            running = false;
            clients.stop();
            clients.join(5000);
        });
        clientEngine.connect(server.address(), Duration.ofSeconds(10));
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    private <T extends AutoCloseable> T closing(T c) {
        closeables.add(c);
        return c;
    }

    /** @param readerThread the thread the responder takes for the server's reader */
    private Responder responder(Thread readerThread) {
        RpcConfig cfg = RpcConfig.builder().maxMessageBytes(LIMIT).writeTimeout(Duration.ofSeconds(10)).build();
        return new Responder(cfg, server.name(), clients, handedOver::add, readerThread, () -> running);
    }

    private RpcCall call(Responder r, long callId) {
        ClientLinks.PeerSlot slot = clients.slot(client.name(), System.nanoTime() + TimeUnit.SECONDS.toNanos(10));
        assertNotNull(slot, "the client's connection registered");
        return new RpcCall(r, client.name(), null, slot, 3, callId, 0, 0, new byte[0], null);
    }

    /** Reads the client's ring until {@code n} answers are reassembled. */
    private void readAnswers(int n) throws Exception {
        Assembler a = new Assembler(server.name(), LIMIT, false);
        Assembler.Sink sink = new Assembler.Sink() {
            @Override
            public void message(int kind, int method, long callId, long hi, long lo, byte[] body) {
                String[] e = kind == RpcFrameDescriptor.KIND_ERROR ? RpcFrameDescriptor.parseError(body) : null;
                answers.add(RpcFrameDescriptor.kindName(kind) + " id=" + callId + " method=" + method
                    + (e == null ? " length=" + body.length : " " + e[0] + ": " + e[1]));
                bodies.add(body);
            }

            @Override
            public void tooLarge(int kind, int method, long callId, long size, long limit, String what) {
                answers.add("too large id=" + callId);
            }
        };
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (answers.size() < n && System.nanoTime() - deadline < 0) {
            clientEngine.reader(0).read((stream, buf, off, len, src) -> {
                try {
                    a.onFrame(buf, off, len, sink);
                } catch (RpcProtocolException e) {
                    throw new AssertionError(e);
                }
            }, 16, 100, TimeUnit.MILLISECONDS);
        }
    }

    @Test
    void aResponseOverTheLimitIsAnsweredWithATooLargeErrorNamingTheCallThePeerAndTheLimit() throws Exception {
        Responder r = responder(null);
        assertTrue(r.answer(call(r, 5), RpcFrameDescriptor.KIND_RESPONSE, ByteBuffer.allocate(LIMIT + 1), null));
        readAnswers(1);
        assertEquals(List.of("ERROR id=5 method=3 " + RpcMessageTooLargeException.class.getName()
            + ": response of call id=5 to '" + client.name() + "' is 100001 bytes, more than "
            + RpcConfig.MAX_MESSAGE_BYTES_PROP + "=100000 of server '" + server.name() + "'"), answers);
        assertEquals(1, r.callsHandled());
        assertEquals(1, r.errorsReturned());
    }

    @Test
    void onTheReaderThreadAnAnswerLargerThanARecordIsLeftToAHandlerThreadAsACopy() throws Exception {
        Responder r = responder(Thread.currentThread());
        assertTrue(BIG < RING / 2, "BIG=" + BIG);
        byte[] big = RpcSuite.body(BIG, 3);
        ByteBuffer buf = ByteBuffer.wrap(big.clone());
        assertTrue(r.answer(call(r, 6), RpcFrameDescriptor.KIND_RESPONSE, buf, null));
        assertEquals(1, handedOver.size(), "the reader does not write it itself");
        buf.put(0, (byte) ~big[0]);                                // the caller may reuse its buffer at once
        handedOver.get(0).run();                                   // the handler thread writes the copy
        readAnswers(1);
        assertEquals(List.of("RESPONSE id=6 method=3 length=" + BIG), answers);
        assertArrayEquals(big, bodies.get(0));
    }

    @Test
    void aBodyWriterThatFailsBeforeAnythingWentOutIsAnsweredWithAnErrorNamingTheCall() throws Exception {
        Responder r = responder(null);
        RpcBody failing = new RpcBody() {
            @Override
            public int length() {
                return BIG;                                        // fragmented: written into an array first
            }

            @Override
            public void writeTo(ByteBuffer dst) {
                throw new IllegalStateException("no body");
            }
        };
        assertTrue(r.answer(call(r, 7), RpcFrameDescriptor.KIND_RESPONSE, null, failing), "the error answer went");
        readAnswers(1);
        assertEquals(1, answers.size());
        assertTrue(answers.get(0).startsWith("ERROR id=7 method=3 " + RpcException.class.getName()
            + ": response of call id=7 on server '" + server.name() + "' could not be written"), answers.get(0));
    }

    @Test
    void noAnswerGoesOnceTheServerStoppedOrToAClientThatNeverConnected() throws Exception {
        Responder r = responder(null);
        RpcCall stranger = new RpcCall(r, "nobody", null, null, 3, 8, 0, 0, new byte[0], null);
        assertFalse(r.answer(stranger, RpcFrameDescriptor.KIND_RESPONSE, null, null));
        RpcCall c = call(r, 9);
        running = false;
        assertFalse(r.answer(c, RpcFrameDescriptor.KIND_RESPONSE, null, null));
        assertEquals(2, r.responsesDropped());
        assertEquals(2, r.callsHandled());
    }
}
