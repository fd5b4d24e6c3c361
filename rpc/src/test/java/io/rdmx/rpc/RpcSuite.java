package io.rdmx.rpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.channel.ChannelConfig;
import io.rdmx.channel.ChannelEngine;
import io.rdmx.channel.ChannelWriter;
import io.rdmx.channel.PeerChannel;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.testsuite.Blocking;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Generic RPC over one provider; every provider runs it unchanged through a one-line subclass. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class RpcSuite {
    static final int ECHO = 1;
    static final int SLOW = 2;
    static final int THROW = 3;
    static final int SIZED = 4;
    /** Asynchronous, taken on the reader thread: the call waits in {@link #held} for the test to answer it. */
    static final int LATER = 5;
    /** Asynchronous, on the reader thread, answered there at once (an echo). */
    static final int LATER_NOW = 6;
    /** Asynchronous, on a handler thread: throws before answering. */
    static final int LATER_THROW = 7;
    /** Asynchronous, on a handler thread: answers with an {@link RpcBody} writing the request back. */
    static final int BODY_ECHO = 8;
    /** Asynchronous, on a handler thread: answers with an {@link RpcBody} of the asked length that throws. */
    static final int BAD_BODY = 9;
    /** Asynchronous, on the reader thread: blocks the server's reader until {@link #release} (fills rings). */
    static final int BLOCK_READER = 10;
    /** Throws an {@link AssertionError} on a handler thread. */
    static final int ERROR = 11;
    /** Asynchronous, on the reader thread: throws an {@link AssertionError} there. */
    static final int ERROR_ON_READER = 12;
    /** 64 KiB rings: the largest record is about 24 KiB, so bodies above that are fragmented. */
    static final int RING = 64 << 10;
    private static final AtomicInteger SEQ = new AtomicInteger();
    private static final Duration WAIT = Duration.ofSeconds(20);
    /**
     * The timeout of a call that the case itself ends (a close, a kill, a release), longer than the case's bound
     * ({@code @Timeout}): such a call's own clock must not race the case's waits (a call with {@link #WAIT} started
     * before a wait of {@link #WAIT} could time out first on a slow machine, and fail the case for no fault).
     */
    private static final Duration ENDED_BY_THE_CASE = Duration.ofMinutes(10);
    private final List<AutoCloseable> closeables = new ArrayList<>();
    /** Released by a test to let SLOW handlers answer. */
    private volatile CountDownLatch release = new CountDownLatch(1);
    /** Counts SLOW handlers that started. */
    private final AtomicInteger slowEntered = new AtomicInteger();
    /** Calls of {@link #LATER}, not answered yet. */
    private final java.util.concurrent.BlockingQueue<RpcCall> held = new java.util.concurrent.LinkedBlockingQueue<>();
    /** Threads that ran {@link #LATER} handlers. */
    private final java.util.Set<String> laterThreads = java.util.concurrent.ConcurrentHashMap.newKeySet();

    @TempDir
    Path scratch;

    /** @return the provider */
    protected abstract Fabric fabric();

    /**
     * Kills a node abruptly, as a dying process would.
     *
     * @param node the node
     */
    protected abstract void kill(Node node);

    /**
     * Chooses where a node opened later will listen (see core's ChannelSuite).
     *
     * @param options the later node's options, its name set
     * @param scratch a private directory
     * @return the address
     * @throws Exception if none can be reserved
     */
    protected abstract String reserveAddress(NodeOptions.Builder options, Path scratch) throws Exception;

    /**
     * @return true where the provider allocates on the thread that posts a WRITE or SEND (tcp today), so the
     *         allocation bound of a call's calling thread is not checked there
     */
    protected boolean writePathAllocates() {
        return false;
    }

    @AfterEach
    void tearDown() throws Exception {
        release.countDown();
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    private <T extends AutoCloseable> T closing(T c) {
        closeables.add(c);
        return c;
    }

    Node node(String role) throws RdmxException {
        return node(options(role));
    }

    /**
     * Options for a new node of the given role; subclasses may adjust (bind it to an address, say).
     *
     * @param role {@code "c"} for a client's node, anything else for a server's ({@code "s"}, {@code "raw"}, ...)
     * @return the builder, its name set
     */
    protected NodeOptions.Builder options(String role) {
        return NodeOptions.builder().name(name(role));
    }

    Node node(NodeOptions.Builder b) throws RdmxException {
        return closing(fabric().open(b.build()));
    }

    private static String name(String role) {
        return "rpc" + role + "-" + ProcessHandle.current().pid() + "-" + SEQ.incrementAndGet();
    }

    ChannelEngine engine(Node n) {
        return closing(ChannelEngine.open(n, ChannelConfig.builder(1).ringCapacity(RING).build()));
    }

    RpcServer server(ChannelEngine e, RpcConfig cfg) {
        return closing(RpcServer.builder(e).config(cfg)
            .handle(ECHO, RpcCall::request)
            .handle(SLOW, call -> {
                slowEntered.incrementAndGet();
                if (!release.await(60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("never released");
                }
                return call.request();
            })
            .handle(THROW, call -> {
                throw new IllegalStateException("boom " + call.request().getInt(0));
            })
            .handle(SIZED, call -> ByteBuffer.wrap(body(call.request().getInt(0), 7)))
            .handleAsyncOnReader(LATER, call -> {
                laterThreads.add(Thread.currentThread().getName());
                held.add(call);
            })
            .handleAsyncOnReader(LATER_NOW, call -> call.respond(call.request()))
            .handleAsync(LATER_THROW, call -> {
                throw new IllegalArgumentException("later boom " + call.request().getInt(0));
            })
            .handleAsync(BODY_ECHO, call -> call.respond(bodyOf(call.request())))
            .handleAsync(BAD_BODY, call -> call.respond(failingBody(call.request().getInt(0))))
            .handle(ERROR, call -> {
                throw new AssertionError("handler assert " + call.request().getInt(0));
            })
            .handleAsyncOnReader(ERROR_ON_READER, call -> {
                throw new AssertionError("reader assert " + call.request().getInt(0));
            })
            .handleAsyncOnReader(BLOCK_READER, call -> {
                if (!release.await(60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("never released");
                }
                call.respond(EMPTY_BODY);
            })
            .build()).start();
    }

    RpcServer server(RpcConfig cfg) throws RdmxException {
        return server(engine(node("s")), cfg);
    }

    RpcClient client(RpcConfig cfg) throws RdmxException {
        return closing(RpcClient.open(engine(node("c")), cfg));
    }

    /**
     * The suite's configuration: the defaults, but 4 handler threads whatever the machine. Cases run up to three
     * SLOW handlers at once on one server, and the default is the machine's cores where {@code rdmx-affinity} is on
     * the class path (2 in the Soft-RoCE VM, where a third SLOW request waited in the handler queue and its call
     * timed out).
     */
    static RpcConfig cfg() {
        return RpcConfig.builder().handlerThreads(4).build();
    }

    static byte[] body(int length, int seed) {
        byte[] b = new byte[length];
        long x = seed * 0x9E3779B97F4A7C15L + 1;
        for (int i = 0; i < length; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            b[i] = (byte) x;
        }
        return b;
    }

    static long crc(byte[] b) {
        CRC32 c = new CRC32();
        c.update(b);
        return c.getValue();
    }

    static final ByteBuffer EMPTY_BODY = ByteBuffer.allocate(0);

    /** @return a body writer that writes the buffer's remaining bytes */
    static RpcBody bodyOf(ByteBuffer b) {
        return new RpcBody() {
            @Override
            public int length() {
                return b.remaining();
            }

            @Override
            public void writeTo(ByteBuffer dst) {
                dst.put(b.duplicate());
            }
        };
    }

    /** @return a body writer of the given length that writes one byte, then throws */
    static RpcBody failingBody(int length) {
        return new RpcBody() {
            @Override
            public int length() {
                return length;
            }

            @Override
            public void writeTo(ByteBuffer dst) throws java.io.IOException {
                dst.put((byte) 1);
                throw new java.io.IOException("bad body of length " + length);
            }
        };
    }

    /** The largest body of one ring record, for a request (true) or a response (false). */
    static int recordBody(boolean request) {
        return ChannelConfig.builder(1).ringCapacity(RING).build().maxRecordPayload()
            - (request ? RpcFrameDescriptor.REQUEST_HEADER_LENGTH : RpcFrameDescriptor.RESPONSE_HEADER_LENGTH);
    }

    static ByteBuffer intBody(int v) {
        return ByteBuffer.allocate(4).putInt(0, v);
    }

    @Test
    void echoesSmallAndLargerThanRingBodiesIntact() throws Exception {
        RpcServer s = server(cfg());
        RpcClient c = client(cfg());
        int[] sizes = {0, 1, 1000, 24_000, 24_528, 24_529, 100_000, RING, 3 * RING + 17, 1 << 20};
        for (int size : sizes) {
            byte[] req = body(size, size);
            byte[] resp = c.call(s.address(), ECHO, ByteBuffer.wrap(req), WAIT);
            assertEquals(size, resp.length, "size=" + size);
            assertEquals(crc(req), crc(resp), "checksum of size=" + size);
            assertArrayEquals(req, resp, "size=" + size);
        }
        byte[] req = body(300_000, 5);
        assertEquals(crc(req), crc(c.callAsync(s.address(), ECHO, ByteBuffer.wrap(req), WAIT).get()));
        assertEquals(sizes.length + 1, s.callsHandled());
        assertEquals(0, c.outstanding());
    }

    @Test
    void bodyWritersAndResponseReadersCarryBodiesAtAndAroundTheRecordBoundary() throws Exception {
        RpcServer s = server(cfg());
        RpcClient c = client(cfg());
        int req = recordBody(true);
        int resp = recordBody(false);
        int[] sizes = {0, 1, 1000, req - 1, req, req + 1, resp - 1, resp, resp + 1, 3 * RING + 17, 1 << 20};
        for (int size : sizes) {
            byte[] want = body(size, size + 3);
            int[] capacity = new int[1];
            byte[] got = c.call(s.address(), BODY_ECHO, bodyOf(ByteBuffer.wrap(want)), b -> {
                capacity[0] = b.capacity();
                byte[] a = new byte[b.remaining()];
                b.get(a);
                return a;
            }, WAIT);
            assertArrayEquals(want, got, "size=" + size);
            // a response of one record is read in place in the ring, a fragmented one from its own array
            if (size <= resp) {
                assertTrue(capacity[0] >= RING, "size=" + size + " read in place, buffer capacity " + capacity[0]);
            } else {
                assertEquals(size, capacity[0], "size=" + size + " reassembled into an array of its own");
            }
            assertArrayEquals(want, c.call(s.address(), ECHO, bodyOf(ByteBuffer.wrap(want)), WAIT), "size=" + size);
        }
        assertEquals(0, c.outstanding());
        assertEquals(0, s.protocolErrors());
    }

    /**
     * An asynchronous call with a response reader: the future completes with what the reader returned, the body
     * read in place in the ring when it came in one record and from its reassembled array otherwise; a reader that
     * throws fails that call only, naming the server.
     */
    @Test
    void asynchronousCallsWithAResponseReaderCompleteWithWhatItReturned() throws Exception {
        RpcServer s = server(cfg());
        RpcClient c = client(cfg());
        int resp = recordBody(false);
        for (int size : new int[] {0, 1, 1000, resp, resp + 1, 3 * RING + 17}) {
            byte[] want = body(size, size + 7);
            int[] capacity = new int[1];
            byte[] got = c.callAsync(s.address(), ECHO, ByteBuffer.wrap(want), b -> {
                capacity[0] = b.capacity();
                byte[] a = new byte[b.remaining()];
                b.get(a);
                return a;
            }, WAIT).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            assertArrayEquals(want, got, "size=" + size);
            if (size <= resp) {
                assertTrue(capacity[0] >= RING, "size=" + size + " read in place, buffer capacity " + capacity[0]);
            } else {
                assertEquals(size, capacity[0], "size=" + size + " reassembled into an array of its own");
            }
        }
        ExecutionException e = assertThrows(ExecutionException.class,
            () -> c.callAsync(s.address(), ECHO, ByteBuffer.wrap(body(10, 1)), b -> {
                throw new IllegalStateException("cannot decode " + b.remaining());
            }, WAIT).get(WAIT.toMillis(), TimeUnit.MILLISECONDS));
        assertInstanceOf(RpcException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains(s.name()) && e.getCause().getMessage().contains(
            "cannot decode 10"), e.getCause().getMessage());
        assertArrayEquals(body(10, 2), c.callAsync(s.address(), ECHO, ByteBuffer.wrap(body(10, 2)), WAIT)
            .get(WAIT.toMillis(), TimeUnit.MILLISECONDS));
        assertEquals(0, c.outstanding());
    }

    /**
     * A caller that cancels its call before the answer comes: the reader's result (which could hold a pooled
     * buffer) goes to the reader's discard hook, once; a result the future takes never does; the client goes on.
     */
    @Test
    void aResultTheCancelledFutureDidNotTakeGoesToTheReadersDiscard() throws Exception {
        RpcServer s = server(cfg());
        RpcClient c = client(cfg());
        List<byte[]> discarded = new java.util.concurrent.CopyOnWriteArrayList<>();
        AtomicInteger reads = new AtomicInteger();
        RpcResponseReader<byte[]> reader = RpcResponseReader.of(b -> {
            reads.incrementAndGet();
            byte[] a = new byte[b.remaining()];
            b.get(a);
            return a;
        }, discarded::add);
        CompletableFuture<byte[]> cancelled = c.callAsync(s.address(), LATER, ByteBuffer.wrap(body(100, 3)), reader,
            WAIT);
        RpcCall call = held(); // the server holds it: no answer can have come yet
        assertTrue(cancelled.cancel(false));
        call.respond(call.request());
        Blocking.awaitTrue("the cancelled call's result discarded", () -> !discarded.isEmpty(), WAIT);
        assertArrayEquals(body(100, 3), discarded.get(0));
        assertEquals(1, reads.get());
        assertArrayEquals(body(200, 4), c.callAsync(s.address(), ECHO, ByteBuffer.wrap(body(200, 4)), reader, WAIT)
            .get(WAIT.toMillis(), TimeUnit.MILLISECONDS));
        assertEquals(2, reads.get());
        assertEquals(1, discarded.size(), "a result the future took is not discarded");
        assertEquals(0, c.outstanding());
    }

    @Test
    void aFailingRequestBodyFailsThatCallOnlyNamingTheServer() throws Exception {
        RpcServer s = server(cfg());
        RpcClient c = client(cfg());
        for (int size : new int[] {100, recordBody(true) + 1}) {
            long handled = s.callsHandled();
            RpcException e = assertThrows(RpcException.class,
                () -> c.call(s.address(), ECHO, failingBody(size), WAIT));
            assertTrue(e.getMessage().contains(s.name()) && e.getMessage().contains("bad body of length " + size),
                e.getMessage());
            assertInstanceOf(java.io.IOException.class, e.getCause());
            if (size > recordBody(true)) {
                assertEquals(handled, s.callsHandled(), "a body larger than a record fails before anything is sent");
            } else {
                // its frame went out zero-filled and the server answers it (the call has failed either way, whether
                // that answer reaches the client before the call is failed or is dropped as late after it)
                Blocking.awaitTrue("zero-filled request answered", () -> s.callsHandled() == handled + 1, WAIT);
            }
            assertArrayEquals(body(size, 1), c.call(s.address(), ECHO, ByteBuffer.wrap(body(size, 1)), WAIT));
        }
        RpcException fewer = assertThrows(RpcException.class, () -> c.call(s.address(), ECHO, new RpcBody() {
            @Override
            public int length() {
                return 10;
            }

            @Override
            public void writeTo(ByteBuffer dst) {
                dst.put((byte) 1);
            }
        }, WAIT));
        assertTrue(fewer.getMessage().contains("wrote 1 of its length=10"), fewer.getMessage());
        assertEquals(0, s.protocolErrors());
        assertEquals(0, c.outstanding());
    }

    @Test
    void aResponseReaderThatThrowsFailsThatCallOnlyNamingTheServer() throws Exception {
        RpcServer s = server(cfg());
        RpcClient c = client(cfg());
        for (int size : new int[] {10, 3 * RING}) {
            RpcException e = assertThrows(RpcException.class, () -> c.call(s.address(), ECHO,
                bodyOf(ByteBuffer.wrap(body(size, 2))), b -> {
                    throw new IllegalStateException("cannot decode " + b.remaining());
                }, WAIT));
            assertTrue(e.getMessage().contains(s.name()) && e.getMessage().contains("cannot decode " + size),
                e.getMessage());
            assertInstanceOf(IllegalStateException.class, e.getCause());
            assertArrayEquals(body(size, 3), c.call(s.address(), ECHO, ByteBuffer.wrap(body(size, 3)), WAIT));
        }
        assertEquals(0, c.outstanding());
    }

    /**
     * A response reader that throws an {@link Error}: that call fails naming the server, the error its cause, and
     * the client reads on (the error escaped the reading thread, and a call taken from the table was never
     * completed: a caller parked behind it waited with no bound).
     */
    @Test
    void aResponseReaderThatThrowsAnErrorFailsThatCallOnly() throws Exception {
        RpcServer s = server(cfg());
        RpcClient c = client(cfg());
        for (int size : new int[] {10, 3 * RING}) {
            RpcException e = assertThrows(RpcException.class, () -> c.call(s.address(), ECHO,
                bodyOf(ByteBuffer.wrap(body(size, 2))), b -> {
                    throw new AssertionError("cannot decode " + b.remaining());
                }, WAIT));
            assertTrue(e.getMessage().contains(s.name()) && e.getMessage().contains("cannot decode " + size),
                e.getMessage());
            assertInstanceOf(AssertionError.class, e.getCause());
            assertArrayEquals(body(size, 3), c.call(s.address(), ECHO, ByteBuffer.wrap(body(size, 3)), WAIT));
        }
        assertEquals(0, c.outstanding());
    }

    /**
     * A handler that throws an {@link Error}, on a handler thread or on the server's reader thread: the caller
     * gets it as a remote exception naming its class, within its timeout, and the server serves on (the error
     * was not answered, and on the reader thread it ended the server's reading).
     */
    @Test
    void aHandlerThatThrowsAnErrorAnswersItAndTheServerServesOn() throws Exception {
        RpcServer s = server(cfg());
        RpcClient c = client(cfg());
        Duration shortWait = Duration.ofSeconds(5);
        RemoteRpcException e = assertThrows(RemoteRpcException.class,
            () -> c.call(s.address(), ERROR, intBody(7), shortWait));
        assertEquals("java.lang.AssertionError", e.className());
        assertEquals("handler assert 7", e.remoteMessage());
        RemoteRpcException onReader = assertThrows(RemoteRpcException.class,
            () -> c.call(s.address(), ERROR_ON_READER, intBody(8), shortWait));
        assertEquals("java.lang.AssertionError", onReader.className());
        assertEquals("reader assert 8", onReader.remoteMessage());
        for (int i = 0; i < 3; i++) {
            assertArrayEquals(body(100, i), c.call(s.address(), ECHO, ByteBuffer.wrap(body(100, i)), shortWait));
        }
        assertEquals(0, c.timedOut());
    }

    @Test
    void aFailingResponseBodyIsAnErrorAnswerOrAZeroFilledBody() throws Exception {
        RpcServer s = server(cfg());
        RpcClient c = client(cfg());
        int large = recordBody(false) + 1;
        RemoteRpcException e = assertThrows(RemoteRpcException.class,
            () -> c.call(s.address(), BAD_BODY, intBody(large), WAIT));
        assertEquals(RpcException.class.getName(), e.className());
        assertTrue(e.getMessage().contains("bad body of length " + large) && e.getMessage().contains(c.name()),
            e.getMessage());
        // one record: its frame was claimed before the writer failed; it goes out with a zero-filled body
        assertArrayEquals(new byte[100], c.call(s.address(), BAD_BODY, intBody(100), WAIT));
        // counted by the answering thread once its send returned, which may be after the client has the frame
        Blocking.awaitTrue("the zero-filled answer counted as dropped", () -> s.responsesDropped() == 1, WAIT);
        assertArrayEquals(body(5, 5), c.call(s.address(), ECHO, ByteBuffer.wrap(body(5, 5)), WAIT));
    }

    @Test
    void aRequestWaitingForRingSpaceTimesOutNamingTheServer() throws Exception {
        RpcServer s = server(cfg());
        RpcClient c = client(cfg());
        CompletableFuture<byte[]> blocker = c.callAsync(s.address(), BLOCK_READER, intBody(0), WAIT);
        // the server's reader is held: a request larger than the ring cannot get all its space
        RpcTimeoutException e = assertThrows(RpcTimeoutException.class, () -> c.call(s.address(), ECHO,
            ByteBuffer.wrap(body(4 * RING, 1)), Duration.ofMillis(300)));
        assertTrue(e.getMessage().contains(s.name()) && e.getMessage().contains("not sent within its timeout"),
            e.getMessage());
        release.countDown();
        assertEquals(0, blocker.get(WAIT.toSeconds(), TimeUnit.SECONDS).length);
    }

    /**
     * A request given up halfway (its deadline passed while the server's reader was held, some fragments sent):
     * the client sends an ABORT for it, and the server drops what it held of it. Before, each such message held
     * up to its length on the server for the connection's life, and two of them here made the server refuse every
     * later multi-fragment message of this client ("partial messages ... twice maxMessageBytes").
     */
    @Test
    void aRequestGivenUpHalfwayIsDroppedByTheServer() throws Exception {
        RpcConfig small = RpcConfig.builder().maxMessageBytes(300_000).build();
        RpcServer s = server(small);
        RpcClient c = client(small);
        for (int i = 0; i < 2; i++) {
            release = new CountDownLatch(1);
            CompletableFuture<byte[]> blocker = c.callAsync(s.address(), BLOCK_READER, intBody(i), WAIT);
            assertThrows(RpcTimeoutException.class, () -> c.call(s.address(), ECHO,
                ByteBuffer.wrap(body(4 * RING, 1)), Duration.ofMillis(300)));
            release.countDown();
            assertEquals(0, blocker.get(WAIT.toSeconds(), TimeUnit.SECONDS).length);
        }
        byte[] big = body(100_000, 5);
        assertArrayEquals(big, c.call(s.address(), ECHO, ByteBuffer.wrap(big), WAIT));
        assertEquals(0, s.protocolErrors());
    }

    @Test
    void manyThreadsManyOutstandingCallsAreMatchedByCallId() throws Exception {
        RpcServer s = server(RpcConfig.builder().handlerThreads(4).build());
        RpcClient c = client(cfg());
        int threads = 8;
        int calls = 300;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Long>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                done.add(pool.submit(() -> {
                    long bytes = 0;
                    List<CompletableFuture<byte[]>> async = new ArrayList<>();
                    List<byte[]> asyncReq = new ArrayList<>();
                    for (int i = 0; i < calls; i++) {
                        int size = i % 50 == 0 ? 60_000 + i : 16 + (i * 37) % 2000;
                        byte[] req = body(size, thread * 100_000 + i);
                        if (i % 3 == 0) {
                            asyncReq.add(req);
                            async.add(c.callAsync(s.address(), ECHO, ByteBuffer.wrap(req), WAIT));
                        } else {
                            byte[] resp = c.call(s.address(), ECHO, ByteBuffer.wrap(req), WAIT);
                            assertArrayEquals(req, resp, "thread " + thread + " call " + i);
                        }
                        bytes += size;
                    }
                    for (int i = 0; i < async.size(); i++) {
                        assertArrayEquals(asyncReq.get(i), async.get(i).get(WAIT.toSeconds(), TimeUnit.SECONDS));
                    }
                    return bytes;
                }));
            }
            for (Future<Long> f : done) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals((long) threads * calls, s.callsHandled());
        assertEquals(0, c.lateResponses());
        assertEquals(0, c.outstanding());
    }

    /**
     * The calling thread of a small synchronous call allocates its future and nothing else (measured, not timed:
     * bytes allocated by the thread per call, after warm-up). Prints the reader thread's share for the cost note.
     */
    @Test
    void aSmallSyncCallAllocatesLittleOnTheCallingThread() throws Exception {
        RpcServer s = server(cfg());
        RpcClient c = client(cfg());
        ByteBuffer req = ByteBuffer.wrap(body(16, 1));
        String address = s.address();
        for (int i = 0; i < 5_000; i++) {
            c.call(address, ECHO, req, WAIT);
        }
        com.sun.management.ThreadMXBean mx =
            (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        Thread reader = Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.getName().equals("rdmx-rpc-client-" + c.name())).findFirst().orElseThrow();
        int calls = 2_000;
        long perCall = Long.MAX_VALUE;
        long readerPerCall = Long.MAX_VALUE;
        // the least of five rounds: on a loaded machine the JIT may still be compiling the call path in one
        for (int round = 0; round < 5; round++) {
            long readerBefore = mx.getThreadAllocatedBytes(reader.getId());
            long before = mx.getThreadAllocatedBytes(Thread.currentThread().getId());
            for (int i = 0; i < calls; i++) {
                c.call(address, ECHO, req, WAIT);
            }
            perCall = Math.min(perCall, (mx.getThreadAllocatedBytes(Thread.currentThread().getId()) - before) / calls);
            readerPerCall = Math.min(readerPerCall, (mx.getThreadAllocatedBytes(reader.getId()) - readerBefore)
                / calls);
        }
        System.out.println(getClass().getSimpleName() + ": bytes allocated per 16-byte call: caller " + perCall
            + ", client reader thread " + readerPerCall);
        if (!io.rdmx.transport.internal.Sleeper.futexes() && fabric().name().equals("shm")) {
            // without futexes (Java 17-21) a mapped writer wakes a sleeping reader with a doorbell SEND, posted by
            // the calling thread through the stream transport, which allocates
            org.junit.jupiter.api.Assumptions.abort("shm without futexes: doorbell SENDs are posted by the calling"
                + " thread (" + perCall + " bytes per call here); not rpc's to bound");
        }
        if (writePathAllocates()) {
            org.junit.jupiter.api.Assumptions.abort(fabric().name() + ": the provider's write path allocates on the"
                + " posting thread (" + perCall + " bytes per call here); not rpc's to bound");
        }
        // the future is ~80 bytes; whether the caller also allocates the blocking wait's node (CompletableFuture's
        // Signaller) depends on whether the answer came before it waited, so the bound leaves room for that and
        // still catches a copy of the body or a per-call buffer (the figure is printed above)
        assertTrue(perCall <= 512, "caller thread allocated " + perCall + " bytes per call (the future is ~80)");
    }

    @Test
    void aSlowHandlerPastTheTimeoutFailsThatCallAndItsLateAnswerIsDropped() throws Exception {
        RpcServer s = server(cfg());
        RpcClient c = client(cfg());
        assertEquals(4, c.call(s.address(), ECHO, intBody(0), WAIT).length); // connected: the timeout is the answer's
        RpcTimeoutException e = assertThrows(RpcTimeoutException.class,
            () -> c.call(s.address(), SLOW, intBody(1), Duration.ofMillis(300)));
        assertTrue(e.getMessage().contains(s.name()) && e.getMessage().contains("300 ms"), e.getMessage());
        assertEquals(1, c.timedOut());
        Blocking.awaitTrue("slow handler entered", () -> slowEntered.get() == 1, WAIT);
        release.countDown();
        Blocking.awaitTrue("late answer dropped and counted", () -> c.lateResponses() == 1, WAIT);
        assertArrayEquals(body(10, 1), c.call(s.address(), ECHO, ByteBuffer.wrap(body(10, 1)), WAIT));
        assertEquals(0, c.outstanding());
    }

    /**
     * Synchronous callers only (no asynchronous call keeps the reader thread reading): the reader role goes from
     * caller to caller; none is left parked with its response unread (it would time out).
     */
    @Test
    void manySyncCallersPassTheReaderRoleOnAndNoneIsStranded() throws Exception {
        RpcServer s = server(RpcConfig.builder().handlerThreads(4).build());
        RpcClient c = client(cfg());
        int threads = 6;
        int calls = 400;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                done.add(pool.submit(() -> {
                    for (int i = 0; i < calls; i++) {
                        byte[] req = body(1 + (i * 131) % 3000, thread * 100_000 + i);
                        assertArrayEquals(req, c.call(s.address(), ECHO, ByteBuffer.wrap(req), WAIT));
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(0, c.timedOut());
        assertEquals(0, c.followers());
        assertEquals(0, c.outstanding());
        assertTrue(c.callerReads() > 0, "callers read responses themselves");
    }

    /** A lone synchronous caller reads its own response: no hand-off from a reader thread, every call. */
    @Test
    void aLoneSyncCallerReadsItsOwnResponse() throws Exception {
        RpcServer s = server(cfg());
        RpcClient c = client(cfg());
        int calls = 200;
        for (int i = 0; i < calls; i++) {
            byte[] b = body(1 + i, i);
            assertArrayEquals(b, c.call(s.address(), ECHO, ByteBuffer.wrap(b), WAIT));
        }
        assertEquals(calls, c.callerReads(), "calls whose caller read its own response");
        assertEquals(0, c.followers());
    }

    /**
     * A caller that read for others leaves once its own response came; a caller still parked behind it gets its
     * answer (the reader thread takes over), well within its timeout.
     */
    @Test
    void aCallerParkedBehindAReaderThatLeftIsAnswered() throws Exception {
        RpcServer s = server(cfg());
        RpcClient c = client(cfg());
        assertEquals(4, c.call(s.address(), ECHO, intBody(0), WAIT).length);
        long before = c.callerReads();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<byte[]> leader = pool.submit(() -> c.call(s.address(), SLOW, intBody(1), WAIT));
            Blocking.awaitTrue("slow handler entered", () -> slowEntered.get() == 1, WAIT);
            // the server can enter the handler before the first caller's thread reaches the reader role: wait
            // until it holds it, so the second caller is the one to find it taken
            Blocking.awaitTrue("the first caller took the reader role", () -> c.callerReads() == before + 1, WAIT);
            long reads = c.callerReads();
            Future<byte[]> follower = pool.submit(() -> c.call(s.address(), LATER, intBody(2), WAIT));
            RpcCall later = held();
            Blocking.awaitTrue("the second caller parked behind the first", () -> c.followers() == 1, WAIT);
            assertEquals(reads, c.callerReads(), "the second caller found the reader role taken");
            release.countDown();
            assertEquals(4, leader.get(WAIT.toMillis(), TimeUnit.MILLISECONDS).length);
            later.respond(ByteBuffer.wrap(body(33, 3)));
            assertArrayEquals(body(33, 3), follower.get(WAIT.toMillis(), TimeUnit.MILLISECONDS));
            assertEquals(0, c.timedOut());
            assertEquals(0, c.followers());
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * A caller asleep behind another that reads (a follower in its wait loop) is interrupted: it ends its wait with
     * an {@link InterruptedException} long before its timeout, out of the followers' queue, and the reader and
     * later calls go on.
     */
    @Test
    void aCallerAsleepBehindAReaderEndsOnInterrupt() throws Exception {
        RpcServer s = server(cfg());
        RpcClient c = client(cfg());
        assertEquals(4, c.call(s.address(), ECHO, intBody(0), WAIT).length);
        long before = c.callerReads();
        ExecutorService pool = Executors.newFixedThreadPool(1);
        try {
            Future<byte[]> leader = pool.submit(() -> c.call(s.address(), SLOW, intBody(1), WAIT));
            Blocking.awaitTrue("slow handler entered", () -> slowEntered.get() == 1, WAIT);
            Blocking.awaitTrue("the first caller took the reader role", () -> c.callerReads() == before + 1, WAIT);
            CompletableFuture<Throwable> ended = new CompletableFuture<>();
            Thread follower = new Thread(() -> {
                try {
                    c.call(s.address(), LATER, intBody(2), Duration.ofMinutes(10));
                    ended.complete(null);
                } catch (Throwable e) {
                    ended.complete(e);
                }
            }, "interrupted-follower");
            follower.start();
            RpcCall later = held();
            Blocking.awaitTrue("the second caller asleep behind the first", () -> c.followers() == 1, WAIT);
            follower.interrupt();
            assertInstanceOf(InterruptedException.class, ended.get(WAIT.toMillis(), TimeUnit.MILLISECONDS));
            assertEquals(0, c.followers());
            release.countDown();
            assertEquals(4, leader.get(WAIT.toMillis(), TimeUnit.MILLISECONDS).length);
            later.respond(ByteBuffer.wrap(body(33, 3)));
            assertEquals(4, c.call(s.address(), ECHO, intBody(3), WAIT).length);
        } finally {
            pool.shutdownNow();
        }
    }

    private RpcCall held() throws InterruptedException {
        RpcCall call = held.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertTrue(call != null, "no LATER call reached its handler");
        return call;
    }

    @Test
    void anAsyncHandlerAnswersLaterFromAnotherThread() throws Exception {
        RpcServer s = server(cfg());
        RpcClient c = client(cfg());
        byte[] big = body(3 * RING + 5, 9);
        CompletableFuture<byte[]> first = c.callAsync(s.address(), LATER, intBody(1), WAIT);
        CompletableFuture<byte[]> second = c.callAsync(s.address(), LATER, intBody(2), WAIT);
        CompletableFuture<byte[]> third = c.callAsync(s.address(), LATER, intBody(3), WAIT);
        RpcCall a = held();
        RpcCall b = held();
        RpcCall d = held();
        assertEquals(java.util.Set.of("rdmx-rpc-server-" + s.name()), laterThreads, "taken on the reader thread");
        assertFalse(first.isDone() || second.isDone() || third.isDone(), "nothing answered yet");
        // answered out of order, from this thread and another one, one larger than the ring, one an error
        assertTrue(d.respondError("com.example.Later", "no " + d.request().getInt(0)));
        Blocking.Call<Boolean> other = Blocking.start("answerer", () -> b.respond(ByteBuffer.wrap(big)));
        assertTrue(other.result().get(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertTrue(a.respond(a.request()));
        assertEquals(1, ByteBuffer.wrap(first.get(WAIT.toSeconds(), TimeUnit.SECONDS)).getInt(0));
        assertArrayEquals(big, second.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        ExecutionException e = assertThrows(ExecutionException.class,
            () -> third.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        RemoteRpcException r = assertInstanceOf(RemoteRpcException.class, e.getCause());
        assertEquals("com.example.Later", r.className());
        assertEquals("no 3", r.remoteMessage());
        assertTrue(a.isAnswered());
        IllegalStateException twice = assertThrows(IllegalStateException.class, () -> a.respond(intBody(9)));
        assertTrue(twice.getMessage().contains("call id=" + a.callId()) && twice.getMessage().contains(a.peer()),
            twice.getMessage());
        // answered on the reader thread itself, small and larger than a ring record
        assertArrayEquals(body(10, 3), c.call(s.address(), LATER_NOW, ByteBuffer.wrap(body(10, 3)), WAIT));
        assertArrayEquals(big, c.call(s.address(), LATER_NOW, ByteBuffer.wrap(big), WAIT));
        assertEquals(5, s.callsHandled());
        assertEquals(0, s.responsesDropped());
        assertEquals(0, c.outstanding());
    }

    @Test
    void anAsyncHandlerThatThrowsBeforeAnsweringFailsThatCallOnly() throws Exception {
        RpcServer s = server(cfg());
        RpcClient c = client(cfg());
        RemoteRpcException e = assertThrows(RemoteRpcException.class,
            () -> c.call(s.address(), LATER_THROW, intBody(42), WAIT));
        assertEquals(IllegalArgumentException.class.getName(), e.className());
        assertEquals("later boom 42", e.remoteMessage());
        assertEquals(4, c.call(s.address(), ECHO, intBody(1), WAIT).length);
        RpcServer.Builder b = RpcServer.builder(engine(node("x"))).handle(1, RpcCall::request);
        IllegalArgumentException dup = assertThrows(IllegalArgumentException.class,
            () -> b.handleAsyncOnReader(1, call -> { }));
        assertTrue(dup.getMessage().contains("method=1"), dup.getMessage());
    }

    @Test
    void aLateAsyncAnswerAfterTheClientTimedOutIsDropped() throws Exception {
        RpcServer s = server(cfg());
        RpcClient c = client(cfg());
        assertEquals(4, c.call(s.address(), ECHO, intBody(0), WAIT).length); // connected: the timeout is the answer's
        RpcTimeoutException t = assertThrows(RpcTimeoutException.class,
            () -> c.call(s.address(), LATER, intBody(1), Duration.ofMillis(300)));
        assertTrue(t.getMessage().contains(s.name()), t.getMessage());
        RpcCall late = held();
        assertTrue(late.respond(late.request()), "written: the client is there, its call is gone");
        Blocking.awaitTrue("late answer dropped and counted", () -> c.lateResponses() == 1, WAIT);
        assertArrayEquals(body(10, 1), c.call(s.address(), ECHO, ByteBuffer.wrap(body(10, 1)), WAIT));
        assertEquals(0, c.outstanding());
        assertEquals(0, s.responsesDropped());
    }

    @Test
    void anAsyncAnswerOnALostConnectionIsDroppedAndOtherClientsGoOn() throws Exception {
        ChannelEngine se = engine(node("s"));
        RpcServer s = server(se, cfg());
        RpcClient lost = client(cfg());
        RpcClient other = client(cfg());
        CompletableFuture<byte[]> f = lost.callAsync(s.address(), LATER, intBody(1), WAIT);
        RpcCall call = held();
        RpcServer.closeConnection(se, call.peer());       // the connection to that client is lost
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertInstanceOf(RpcPeerException.class, e.getCause());
        Blocking.awaitTrue("server saw the connection go", () -> !s.hasClient(call.peer()), WAIT);
        assertFalse(call.respond(call.request()), "nobody to answer");
        assertEquals(1, s.responsesDropped());
        assertTrue(call.isAnswered());
        assertArrayEquals(body(10, 2), other.call(s.address(), LATER_NOW, ByteBuffer.wrap(body(10, 2)), WAIT));
    }

    @Test
    void anAsyncCallTimesOutToo() throws Exception {
        RpcServer s = server(cfg());
        RpcClient c = client(cfg());
        assertEquals(4, c.call(s.address(), ECHO, intBody(0), WAIT).length);
        CompletableFuture<byte[]> f = c.callAsync(s.address(), SLOW, intBody(1), Duration.ofMillis(200));
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertInstanceOf(RpcTimeoutException.class, e.getCause());
        release.countDown();
        Blocking.awaitTrue("late answer dropped", () -> c.lateResponses() == 1, WAIT);
    }

    @Test
    void theClientRefusesAnOversizedRequestAndFailsThatCallOnly() throws Exception {
        RpcServer s = server(cfg());
        RpcClient c = client(RpcConfig.builder().maxMessageBytes(50_000).build());
        RpcMessageTooLargeException e = assertThrows(RpcMessageTooLargeException.class,
            () -> c.call(s.address(), ECHO, ByteBuffer.wrap(new byte[50_001]), WAIT));
        assertTrue(e.getMessage().contains(s.address()) && e.getMessage().contains("50001")
            && e.getMessage().contains("rdmx.rpc.maxMessageBytes=50000"), e.getMessage());
        assertEquals(50_001, e.size());
        assertEquals(50_000, e.limit());
        assertEquals(0, s.callsHandled() + s.callsRefused(), "nothing was sent");
        assertEquals(50_000, c.call(s.address(), ECHO, ByteBuffer.wrap(new byte[50_000]), WAIT).length);
    }

    @Test
    void theServerAnswersAnOversizedRequestWithAnErrorAndServesOthers() throws Exception {
        RpcServer s = server(RpcConfig.builder().maxMessageBytes(40_000).build());
        RpcClient c = client(cfg());
        RpcClient other = client(cfg());
        CompletableFuture<byte[]> meanwhile = other.callAsync(s.address(), SLOW, intBody(3), WAIT);
        Blocking.awaitTrue("slow call of the other client running", () -> slowEntered.get() == 1, WAIT);
        for (int size : new int[] {40_001, 1 << 20}) {
            RemoteRpcException e = assertThrows(RemoteRpcException.class,
                () -> c.call(s.address(), ECHO, ByteBuffer.wrap(body(size, 1)), WAIT));
            assertEquals(RpcMessageTooLargeException.class.getName(), e.className());
            assertTrue(e.getMessage().contains(c.name()) && e.getMessage().contains(Integer.toString(size))
                && e.getMessage().contains("rdmx.rpc.maxMessageBytes=40000"), e.getMessage());
            assertArrayEquals(body(40_000, 2), c.call(s.address(), ECHO, ByteBuffer.wrap(body(40_000, 2)), WAIT));
        }
        release.countDown();
        assertEquals(4, meanwhile.get(WAIT.toSeconds(), TimeUnit.SECONDS).length);
        assertEquals(2, s.callsRefused());
        assertEquals(0, s.protocolErrors());
    }

    @Test
    void anOversizedResponseIsRefusedOnEachSide() throws Exception {
        RpcServer s = server(RpcConfig.builder().maxMessageBytes(100_000).build());
        RpcClient c = client(RpcConfig.builder().maxMessageBytes(30_000).build());
        RemoteRpcException server = assertThrows(RemoteRpcException.class,
            () -> c.call(s.address(), SIZED, intBody(100_001), WAIT));
        assertEquals(RpcMessageTooLargeException.class.getName(), server.className());
        assertTrue(server.getMessage().contains("100001") && server.getMessage().contains("100000"),
            server.getMessage());
        RpcMessageTooLargeException client = assertThrows(RpcMessageTooLargeException.class,
            () -> c.call(s.address(), SIZED, intBody(70_000), WAIT));
        assertTrue(client.getMessage().contains(s.name()) && client.getMessage().contains("70000")
            && client.getMessage().contains("30000"), client.getMessage());
        assertArrayEquals(body(30_000, 7), c.call(s.address(), SIZED, intBody(30_000), WAIT));
        assertEquals(0, c.lateResponses());
    }

    @Test
    void aFullHandlerQueueAnswersBusyAndTheQueuedCallsGoOn() throws Exception {
        RpcServer s = server(RpcConfig.builder().handlerThreads(1).handlerQueue(1).build());
        RpcClient c = client(cfg());
        CompletableFuture<byte[]> running = c.callAsync(s.address(), SLOW, intBody(1), WAIT);
        Blocking.awaitTrue("the one handler thread busy", () -> slowEntered.get() == 1, WAIT);
        CompletableFuture<byte[]> queued = c.callAsync(s.address(), ECHO, intBody(2), WAIT);
        // the same ring delivers in order: the queued call is in the queue before this one is read
        RemoteRpcException busy = assertThrows(RemoteRpcException.class,
            () -> c.call(s.address(), ECHO, intBody(3), WAIT));
        assertEquals(RpcConfig.BUSY_CLASS, busy.className());
        assertTrue(busy.remoteMessage().contains("rdmx.rpc.handlerQueue"), busy.remoteMessage());
        release.countDown();
        assertEquals(1, running.get(WAIT.toSeconds(), TimeUnit.SECONDS)[3]);
        assertEquals(2, queued.get(WAIT.toSeconds(), TimeUnit.SECONDS)[3]);
    }

    @Test
    void aRemoteExceptionCarriesClassAndMessageForThatCallOnly() throws Exception {
        RpcServer s = server(cfg());
        RpcClient c = client(cfg());
        CompletableFuture<byte[]> ok = c.callAsync(s.address(), SLOW, intBody(1), WAIT);
        RemoteRpcException e = assertThrows(RemoteRpcException.class,
            () -> c.call(s.address(), THROW, intBody(42), WAIT));
        assertEquals("java.lang.IllegalStateException", e.className());
        assertEquals("boom 42", e.remoteMessage());
        assertEquals(s.name(), e.server());
        RemoteRpcException none = assertThrows(RemoteRpcException.class,
            () -> c.call(s.address(), 99, intBody(1), WAIT));
        assertEquals(UnsupportedOperationException.class.getName(), none.className());
        assertTrue(none.remoteMessage().contains("method=99"), none.remoteMessage());
        release.countDown();
        assertEquals(1, ok.get(WAIT.toSeconds(), TimeUnit.SECONDS)[3]);
        assertEquals(2, s.errorsReturned());
    }

    @Test
    void aKilledServerFailsOnlyItsCalls() throws Exception {
        Node n1 = node("s1");
        RpcServer s1 = server(engine(n1), cfg());
        RpcServer s2 = server(cfg());
        RpcClient c = client(cfg());
        assertEquals(4, c.call(s1.address(), ECHO, intBody(1), WAIT).length);
        Blocking.Call<byte[]> onS1 = Blocking.start("call-s1",
            () -> c.call(s1.address(), SLOW, intBody(1), ENDED_BY_THE_CASE));
        CompletableFuture<byte[]> asyncOnS1 = c.callAsync(s1.address(), SLOW, intBody(2), ENDED_BY_THE_CASE);
        CompletableFuture<byte[]> onS2 = c.callAsync(s2.address(), SLOW, intBody(3), ENDED_BY_THE_CASE);
        Blocking.awaitTrue("three slow handlers running", () -> slowEntered.get() == 3, WAIT);
        Blocking.awaitBlockedIn(onS1, "RpcClient.call", WAIT);
        kill(n1);
        Throwable t = onS1.failure(WAIT);
        assertInstanceOf(RpcPeerException.class, t);
        assertEquals(s1.name(), ((RpcPeerException) t).peer());
        assertTrue(t.getMessage().contains(s1.name()), t.getMessage());
        ExecutionException e = assertThrows(ExecutionException.class,
            () -> asyncOnS1.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertInstanceOf(RpcPeerException.class, e.getCause());
        assertFalse(onS2.isDone(), "the call to the other server goes on");
        release.countDown();
        assertEquals(3, onS2.get(WAIT.toSeconds(), TimeUnit.SECONDS)[3]);
        assertEquals(4, c.call(s2.address(), ECHO, intBody(4), WAIT).length);
        RpcPeerException gone = assertThrows(RpcPeerException.class,
            () -> c.call(s1.address(), ECHO, intBody(5), Duration.ofMillis(300)));
        assertTrue(gone.getMessage().contains(s1.address()), gone.getMessage());
    }

    @Test
    void closingTheServerEngineFailsItsCallsNamingIt() throws Exception {
        ChannelEngine se = engine(node("s1"));
        RpcServer s1 = server(se, cfg());
        RpcServer s2 = server(cfg());
        RpcClient c = client(cfg());
        CompletableFuture<byte[]> onS1 = c.callAsync(s1.address(), SLOW, intBody(1), ENDED_BY_THE_CASE);
        CompletableFuture<byte[]> onS2 = c.callAsync(s2.address(), SLOW, intBody(2), ENDED_BY_THE_CASE);
        Blocking.awaitTrue("two slow handlers running", () -> slowEntered.get() == 2, WAIT);
        s1.close();
        se.close();
        ExecutionException e = assertThrows(ExecutionException.class,
            () -> onS1.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertInstanceOf(RpcPeerException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains(s1.name()), e.getCause().getMessage());
        assertFalse(onS2.isDone());
        release.countDown();
        assertEquals(2, onS2.get(WAIT.toSeconds(), TimeUnit.SECONDS)[3]);
    }

    @Test
    void aClientReconnectsAfterTheServerRestarts() throws Exception {
        NodeOptions.Builder opts = NodeOptions.builder().name(name("restart"));
        String address = reserveAddress(opts, scratch);
        Node first = node(opts);
        RpcServer s = server(engine(first), cfg());
        RpcClient c = client(cfg());
        assertEquals(address, s.address());
        assertArrayEquals(body(100, 1), c.call(address, ECHO, ByteBuffer.wrap(body(100, 1)), WAIT));
        assertTrue(c.connected(address));
        kill(first);
        // once the client saw the channel go down (a call racing that would go out on the dead channel and fail
        // naming the server), the next call dials again until the server is back, within its timeout
        Blocking.awaitTrue("the client saw the server go", () -> !c.connected(address), WAIT);
        Blocking.Call<byte[]> next = Blocking.start("next-call",
            () -> c.call(address, ECHO, ByteBuffer.wrap(body(50_000, 2)), Duration.ofSeconds(60)));
        Blocking.awaitBlockedIn(next, "connect", WAIT);
        NodeOptions.Builder again = NodeOptions.builder().name(opts.build().name());
        reserveAddress(again, scratch);
        if (opts.build().bindAddress() != null) {
            again.bindAddress(opts.build().bindAddress());
        }
        Node second = node(again);
        server(engine(second), cfg());
        assertArrayEquals(body(50_000, 2), next.result().get(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertArrayEquals(body(10, 3), c.call(address, ECHO, ByteBuffer.wrap(body(10, 3)), WAIT));
    }

    @Test
    void closeFailsOutstandingCallsAndLaterCalls() throws Exception {
        RpcServer s = server(cfg()); // three SLOW handlers at once: cfg() has four handler threads on any machine
        RpcClient c = client(cfg());
        Blocking.Call<byte[]> sync = Blocking.start("sync",
            () -> c.call(s.address(), SLOW, intBody(1), ENDED_BY_THE_CASE));
        CompletableFuture<byte[]> a1 = c.callAsync(s.address(), SLOW, intBody(2), ENDED_BY_THE_CASE);
        CompletableFuture<byte[]> a2 = c.callAsync(s.address(), SLOW, intBody(3), ENDED_BY_THE_CASE);
        Blocking.awaitTrue("three calls running", () -> slowEntered.get() == 3 || sync.result().isDone(), WAIT);
        if (sync.result().isDone()) {
            throw new AssertionError("the synchronous call ended before the close, " + slowEntered.get()
                + " calls running", sync.result().handle((v, t) -> t != null ? t : new AssertionError("returned"))
                .join());
        }
        Blocking.awaitBlockedIn(sync, "RpcClient.call", WAIT);
        c.close();
        Throwable t = sync.failure(WAIT);
        assertInstanceOf(RpcException.class, t);
        assertTrue(t.getMessage().contains("closed") && t.getMessage().contains(s.name()), t.getMessage());
        for (CompletableFuture<byte[]> f : List.of(a1, a2)) {
            ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(WAIT.toSeconds(),
                TimeUnit.SECONDS));
            assertTrue(e.getCause().getMessage().contains("closed"), e.getCause().getMessage());
        }
        assertEquals(0, c.outstanding());
        RpcException later = assertThrows(RpcException.class, () -> c.call(s.address(), ECHO, intBody(1), WAIT));
        assertTrue(later.getMessage().contains("closed"), later.getMessage());
        c.close();
        s.close();
        s.close();
    }

    /** Malformed frames a raw channel peer sends. */
    enum Garbage {
        BAD_VERSION("version=7"),
        WRONG_STREAM("stream id=9"),
        LENGTH_MISMATCH("beyond message length=10"),
        OUT_OF_ORDER("fragment out of order"),
        NO_FIRST_FRAGMENT("without its first fragment"),
        SHORT_HEADER("shorter than the header");

        final String reason;

        Garbage(String reason) {
            this.reason = reason;
        }
    }

    /** Writes a frame header with a body of {@code n} bytes, and commits it. */
    static void frame(ChannelWriter w, int stream, int version, int kind, boolean last, long callId, int total,
                      int offset, int n) throws Exception {
        int header = RpcFrameDescriptor.headerLength(kind);
        int at = w.claim(stream, header + n, 10, TimeUnit.SECONDS);
        RpcFrameDescriptor.putHeader(w.buffer(), at, kind, last, 1, callId, total, offset, 1, 2);
        w.buffer().put(at, (byte) version);
        w.commit();
    }

    static void garbage(ChannelWriter w, Garbage g, int kind, long callId) throws Exception {
        int s = RpcFrameDescriptor.STREAM_ID;
        switch (g) {
            case BAD_VERSION:
                frame(w, s, 7, kind, true, callId, 4, 0, 4);
                break;
            case WRONG_STREAM:
                frame(w, 9, 1, kind, true, callId, 4, 0, 4);
                break;
            case LENGTH_MISMATCH:
                frame(w, s, 1, kind, true, callId, 10, 0, 20);
                break;
            case OUT_OF_ORDER:
                frame(w, s, 1, kind, false, callId, 100, 0, 10);
                frame(w, s, 1, kind, false, callId, 100, 50, 10);
                break;
            case NO_FIRST_FRAGMENT:
                frame(w, s, 1, kind, true, callId, 100, 90, 10);
                break;
            default:
                int at = w.claim(s, 8, 10, TimeUnit.SECONDS);
                w.buffer().putLong(at, 1);
                w.commit();
                break;
        }
        w.flush();
    }

    @ParameterizedTest
    @EnumSource(Garbage.class)
    void malformedRequestsCloseThatClientOnly(Garbage g) throws Exception {
        RpcServer s = server(cfg());
        RpcClient good = client(cfg());
        assertEquals(4, good.call(s.address(), ECHO, intBody(1), WAIT).length);
        ChannelEngine raw = engine(node("raw"));
        PeerChannel p = raw.connect(s.address(), WAIT);
        garbage(p.writer(0, 0), g, RpcFrameDescriptor.KIND_REQUEST, 77);
        Blocking.awaitTrue("raw peer refused", () -> s.protocolErrors() == 1 && !p.isOpen(), WAIT);
        RpcProtocolException e = s.lastProtocolError();
        assertEquals(raw.node().name(), e.peer());
        assertTrue(e.getMessage().contains(raw.node().name()) && e.getMessage().contains(g.reason), e.getMessage());
        assertEquals(4, good.call(s.address(), ECHO, intBody(2), WAIT).length);
        assertEquals(0, s.callsRefused());
    }

    @ParameterizedTest
    @EnumSource(value = Garbage.class, names = {"BAD_VERSION", "LENGTH_MISMATCH", "OUT_OF_ORDER"})
    void malformedResponsesFailThatServersCallsOnly(Garbage g) throws Exception {
        RpcServer good = server(cfg());
        ChannelEngine raw = engine(node("rawserver"));
        RpcClient c = client(cfg());
        CompletableFuture<byte[]> onGood = c.callAsync(good.address(), SLOW, intBody(1), WAIT);
        CompletableFuture<byte[]> onRaw = c.callAsync(raw.node().address(), ECHO, intBody(1), WAIT);
        PeerChannel p = raw.accept(WAIT);
        AtomicLong callId = new AtomicLong(readCallId(raw));
        garbage(p.writer(0, 0), g, RpcFrameDescriptor.KIND_RESPONSE, callId.get());
        ExecutionException e = assertThrows(ExecutionException.class,
            () -> onRaw.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertInstanceOf(RpcProtocolException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains(raw.node().name())
            && e.getCause().getMessage().contains(g.reason), e.getCause().getMessage());
        Blocking.awaitTrue("raw server's channel closed", () -> !p.isOpen(), WAIT);
        assertFalse(onGood.isDone());
        release.countDown();
        assertEquals(4, onGood.get(WAIT.toSeconds(), TimeUnit.SECONDS).length);
        assertNull(good.lastProtocolError());
    }

    @Test
    void aServerCannotAnswerACallSentToAnotherServer() throws Exception {
        RpcServer good = server(cfg());
        ChannelEngine raw = engine(node("rawserver"));
        RpcClient c = client(cfg());
        CompletableFuture<byte[]> onGood = c.callAsync(good.address(), SLOW, intBody(1), WAIT);
        CompletableFuture<byte[]> onRaw = c.callAsync(raw.node().address(), ECHO, intBody(1), WAIT);
        PeerChannel p = raw.accept(WAIT);
        AtomicLong callId = new AtomicLong(readCallId(raw));
        // call ids are sequential: the raw server answers both neighbours of the id it saw, one of which is the call
        // outstanding at the good server, then its own call (the frames of one peer are handled in order)
        ChannelWriter w = p.writer(0, 0);
        frame(w, RpcFrameDescriptor.STREAM_ID, 1, RpcFrameDescriptor.KIND_RESPONSE, true, callId.get() - 1, 4, 0, 4);
        frame(w, RpcFrameDescriptor.STREAM_ID, 1, RpcFrameDescriptor.KIND_RESPONSE, true, callId.get() + 1, 4, 0, 4);
        frame(w, RpcFrameDescriptor.STREAM_ID, 1, RpcFrameDescriptor.KIND_RESPONSE, true, callId.get(), 4, 0, 4);
        w.flush();
        assertEquals(4, onRaw.get(WAIT.toSeconds(), TimeUnit.SECONDS).length, "its own call is answered");
        assertFalse(onGood.isDone(), "the call sent to the good server is not answered by another server");
        assertEquals(1, c.foreignResponses());
        assertEquals(1, c.lateResponses(), "the id nobody waits for is a late answer");
        assertTrue(p.isOpen());
        release.countDown();
        assertEquals(4, onGood.get(WAIT.toSeconds(), TimeUnit.SECONDS).length, "the good server's own answer");
    }

    /** A raw server reads the one request it was sent: its call id. */
    private static long readCallId(ChannelEngine raw) throws Exception {
        AtomicLong callId = new AtomicLong(-1);
        int n = raw.reader(0).read((stream, buf, off, len, src) ->
            callId.set(buf.order(ByteOrder.LITTLE_ENDIAN).getLong(off + RpcFrameDescriptor.CALL_ID_OFFSET)),
            1, WAIT.toSeconds(), TimeUnit.SECONDS);
        assertEquals(1, n);
        return callId.get();
    }
}
