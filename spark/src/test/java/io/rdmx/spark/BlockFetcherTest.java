package io.rdmx.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.channel.ChannelConfig;
import io.rdmx.channel.ChannelEngine;
import io.rdmx.rpc.RemoteRpcException;
import io.rdmx.rpc.RpcClient;
import io.rdmx.rpc.RpcConfig;
import io.rdmx.rpc.RpcPeerException;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.loopback.LoopbackFabric;
import io.rdmx.transport.testsuite.Blocking;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The fetch path over a real block server and RPC client (loopback provider, one JVM). */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BlockFetcherTest {
    private static final int CHUNK = 8192;
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    /** Blocks in memory, keyed by name. */
    static final class MapSource implements BlockSource {
        final Map<String, byte[]> blocks = new HashMap<>();
        /** When set, reads wait for it (bounded): no answer leaves the server before the test opens it. */
        volatile CountDownLatch gate;
        /** The gate holds the blocks of this map id and above only. */
        volatile long gateFromMap;

        byte[] put(int shuffle, long map, int reduce, int size, long seed) {
            byte[] b = new byte[size];
            new Random(seed).nextBytes(b);
            blocks.put(FetchProtocol.blockName(shuffle, map, reduce), b);
            return b;
        }

        private byte[] get(int shuffleId, long mapId, int reduceId) throws IOException {
            byte[] b = blocks.get(FetchProtocol.blockName(shuffleId, mapId, reduceId));
            if (b == null) {
                throw new IOException("no block " + FetchProtocol.blockName(shuffleId, mapId, reduceId));
            }
            return b;
        }

        @Override
        public long size(int shuffleId, long mapId, int reduceId) throws IOException {
            return get(shuffleId, mapId, reduceId).length;
        }

        @Override
        public void read(int shuffleId, long mapId, int reduceId, long offset, ByteBuffer dst) throws IOException {
            CountDownLatch g = gate;
            try {
                if (g != null && mapId >= gateFromMap && !g.await(30, TimeUnit.SECONDS)) {
                    throw new IOException("the test's gate stayed closed");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted at the gate", e);
            }
            dst.put(get(shuffleId, mapId, reduceId), (int) offset, dst.remaining());
        }
    }

    private final Deque<AutoCloseable> closing = new ArrayDeque<>();
    private final MapSource source = new MapSource();
    private BlockServer server;
    private RpcClient client;
    private Node serverNode;

    @BeforeEach
    void start() throws Exception {
        LoopbackFabric fabric = new LoopbackFabric();
        serverNode = fabric.open(NodeOptions.builder().name("blocks-s").build());
        closing.push(serverNode);
        ChannelEngine se = ChannelEngine.open(serverNode, ChannelConfig.builder(1).ringCapacity(1 << 16).build());
        closing.push(se);
        server = BlockServer.start(se, source, CHUNK, 2);
        closing.push(server);
        Node cn = fabric.open(NodeOptions.builder().name("blocks-c").build());
        closing.push(cn);
        ChannelEngine ce = ChannelEngine.open(cn, ChannelConfig.builder(1).ringCapacity(1 << 16).build());
        closing.push(ce);
        client = RpcClient.open(ce, RpcConfig.builder().maxMessageBytes(CHUNK + FetchProtocol.ANSWER_HEADER).build());
        closing.push(client);
    }

    @AfterEach
    void stop() throws Exception {
        while (!closing.isEmpty()) {
            closing.pop().close();
        }
    }

    /**
     * The answer buffers lent to fetchers, as {@link RdmxEndpoints} lends them (off-heap, from a pool): each must
     * come back exactly once.
     */
    static final class Lent {
        final BlockBuffers pool = new BlockBuffers(CHUNK + FetchProtocol.ANSWER_HEADER, 64);
        final Set<ByteBuffer> out = Collections.newSetFromMap(new IdentityHashMap<>());
        final List<String> errors = new CopyOnWriteArrayList<>();

        synchronized ByteBuffer copyOf(ByteBuffer body) {
            ByteBuffer b = pool.copyOf(body);
            out.add(b);
            return b;
        }

        synchronized void release(ByteBuffer b) {
            if (!out.remove(b)) {
                errors.add("a buffer given back twice, or never lent: " + b);
            }
            pool.release(b);
        }

        synchronized int outstanding() {
            return out.size();
        }

        /** Every buffer lent came back, once. */
        void assertAllBack() throws InterruptedException {
            Blocking.awaitTrue("every answer buffer given back", () -> outstanding() == 0, TIMEOUT);
            assertEquals(List.of(), errors);
        }
    }

    private final Lent lent = new Lent();

    /** Calls through the client, counting requests outstanding at once. */
    final class Counting implements BlockFetcher.Caller {
        final AtomicInteger outstanding = new AtomicInteger();
        final AtomicInteger max = new AtomicInteger();
        final AtomicInteger calls = new AtomicInteger();

        @Override
        public CompletableFuture<ByteBuffer> call(String address, ByteBuffer request, Duration timeout) {
            calls.incrementAndGet();
            max.accumulateAndGet(outstanding.incrementAndGet(), Math::max);
            return client.callAsync(address, FetchProtocol.method(request), request, lent::copyOf, timeout)
                .whenComplete((b, e) -> outstanding.decrementAndGet());
        }
    }

    private FetchBlock block(int map, int reduce, long estimate) {
        return new FetchBlock("exec-1", server.address(), 0, map, map, reduce, estimate);
    }

    @Test
    void everyBlockArrivesWholeWhateverItsEstimatedSize() throws Exception {
        Map<String, byte[]> expected = new HashMap<>();
        List<FetchBlock> blocks = new ArrayList<>();
        int[] sizes = {1, 100, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 17, 40_000};
        for (int i = 0; i < sizes.length; i++) {
            expected.put(FetchProtocol.blockName(0, i, 2), source.put(0, i, 2, sizes[i], i));
            // the tracker's sizes are estimates: some too small, some too large
            blocks.add(block(i, 2, i % 2 == 0 ? Math.max(1, sizes[i] / 3) : sizes[i] * 2L));
        }
        try (BlockFetcher f = new BlockFetcher(new Counting(), lent::release, blocks, 1 << 20, 64, CHUNK, TIMEOUT)) {
            Map<String, byte[]> got = new HashMap<>();
            long total = 0;
            while (f.hasNext()) {
                FetchedBlock b = f.next();
                assertTrue(b.chunks().stream().allMatch(ByteBuffer::isDirect), "answers land off the heap");
                byte[] bytes = b.stream().readAllBytes();
                assertEquals(b.length(), bytes.length);
                total += bytes.length;
                got.put(b.block().name(), bytes);
                f.release(b);
                f.release(b); // a second release gives nothing back twice
            }
            assertEquals(expected.keySet(), got.keySet());
            for (String k : expected.keySet()) {
                assertArrayEquals(expected.get(k), got.get(k), k);
            }
            assertEquals(total, f.bytesFetched());
        }
        lent.assertAllBack();
        assertTrue(lent.pool.allocated() < 20, "buffers reused: " + lent.pool.allocated() + " allocated");
    }

    /**
     * Contiguous blocks of one map output (Spark's ShuffleBlockBatchId) are one range of its file: fetched with one
     * request for the whole range when it fits a chunk, and handed over as one block, their bytes in order.
     */
    @Test
    void contiguousBlocksOfOneMapOutputAreFetchedInOneRequest() throws Exception {
        java.io.ByteArrayOutputStream expected = new java.io.ByteArrayOutputStream();
        int[] sizes = {1000, 2500, 17, 3000};
        for (int r = 0; r < sizes.length; r++) {
            expected.write(source.put(0, 7, 3 + r, sizes[r], 70 + r));
        }
        FetchBlock range = new FetchBlock("exec-1", server.address(), 0, 7, 7, 3, 7,
            java.util.Arrays.stream(sizes).sum());
        assertEquals("shuffle_0_7_3_7", range.name());
        Counting counting = new Counting();
        try (BlockFetcher f = new BlockFetcher(counting, lent::release, List.of(range), 1 << 20, 64, CHUNK,
            TIMEOUT)) {
            FetchedBlock got = f.next();
            assertEquals(range, got.block());
            assertArrayEquals(expected.toByteArray(), got.stream().readAllBytes());
            f.release(got);
            assertEquals(1, counting.calls.get(), "requests sent for 4 contiguous blocks");
            assertEquals(1, server.requestsServed(), "requests served for 4 contiguous blocks");
        }
        lent.assertAllBack();
    }

    /**
     * A block above the to-disk threshold (Spark's spark.network.maxRemoteBlockSizeFetchToMem) goes to a file as it
     * arrives, with at most the window of maxBytesInFlight requested at once, and its buffers back at once: memory
     * does not hold it. It is handed over as the file, counted, whole, and the file is deleted at its release. A
     * block under the threshold stays in memory.
     */
    @Test
    void aBlockAboveTheThresholdGoesToDiskAWindowAtATime(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
        throws Exception {
        byte[] big = source.put(0, 1, 0, 9 * CHUNK + 123, 11);
        byte[] small = source.put(0, 2, 0, 500, 12);
        Counting counting = new Counting();
        AtomicInteger files = new AtomicInteger();
        // as Spark's temporary local blocks: a path whose file is not made yet
        BlockSpill spill = () -> dir.resolve("temp-" + files.incrementAndGet());
        // the big block's estimate is low (its end is asked for as the first chunks are written)
        List<FetchBlock> blocks = List.of(block(1, 0, 5L * CHUNK), block(2, 0, 500));
        try (BlockFetcher f = new BlockFetcher(counting, lent::release, blocks, 2 * CHUNK, 64, CHUNK, TIMEOUT,
            BlockSizeLimit.ABSOLUTE_ONLY, 4 * CHUNK, spill)) {
            Map<String, FetchedBlock> got = new HashMap<>();
            while (f.hasNext()) {
                FetchedBlock b = f.next();
                got.put(b.block().name(), b);
            }
            FetchedBlock onDisk = got.get("shuffle_0_1_0");
            assertTrue(onDisk.file() != null && java.nio.file.Files.exists(onDisk.file()), "no file");
            assertEquals(big.length, onDisk.length());
            assertArrayEquals(big, onDisk.stream().readAllBytes());
            assertArrayEquals(big, java.nio.file.Files.readAllBytes(onDisk.file()));
            FetchedBlock inMemory = got.get("shuffle_0_2_0");
            assertEquals(null, inMemory.file());
            assertArrayEquals(small, inMemory.stream().readAllBytes());
            assertEquals(1, f.blocksToDisk());
            assertEquals(big.length, f.bytesToDisk());
            // the window: maxBytesInFlight=2 chunks (the small block one more), never the whole block at once
            assertTrue(counting.max.get() <= 3, "requests outstanding at once: " + counting.max.get());
            // the big block's buffers went back as its chunks were written, before it was handed over
            assertTrue(lent.outstanding() <= 1, "buffers held: " + lent.outstanding());
            f.release(onDisk);
            f.release(inMemory);
            assertTrue(!java.nio.file.Files.exists(onDisk.file()), "the file stays after its release");
        }
        lent.assertAllBack();
        assertEquals(1, files.get());
    }

    /**
     * A block going to disk whose later chunks never come fails the fetch (the consumer's bound), and the fetcher,
     * closing, deletes its file.
     */
    @Test
    void aFailedFetchDeletesTheFileOfABlockGoingToDisk(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
        throws Exception {
        source.put(0, 1, 0, 6 * CHUNK, 11);
        Counting real = new Counting();
        BlockFetcher.Caller stuck = (address, request, timeout) ->
            FetchProtocol.offset(request) >= 2 * CHUNK ? new CompletableFuture<>() : real.call(address, request,
                timeout);
        AtomicInteger files = new AtomicInteger();
        BlockSpill spill = () -> java.nio.file.Files.createFile(dir.resolve("temp-" + files.incrementAndGet()));
        try (BlockFetcher f = new BlockFetcher(stuck, lent::release, List.of(block(1, 0, 6L * CHUNK)), 2 * CHUNK,
            64, CHUNK, Duration.ofMillis(200), BlockSizeLimit.ABSOLUTE_ONLY, CHUNK, spill)) {
            BlockFetchException e = assertThrows(BlockFetchException.class, f::next);
            assertTrue(e.getMessage().contains("no block arrived"), e.getMessage());
        }
        assertEquals(1, files.get(), "the block's file was made");
        try (java.util.stream.Stream<java.nio.file.Path> l = java.nio.file.Files.list(dir)) {
            assertEquals(List.of(), l.toList());
        }
        lent.assertAllBack();
    }

    /**
     * A server whose handler queue is full answers "busy": the fetcher asks again after a pause and every block
     * arrives whole. Reported as a failure, a busy (but live) executor would make Spark recompute its outputs.
     */
    @Test
    void aBusyServerIsAskedAgainNotReportedLost() throws Exception {
        Map<String, byte[]> expected = new HashMap<>();
        List<FetchBlock> blocks = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            expected.put(FetchProtocol.blockName(0, i, 1), source.put(0, i, 1, 2 * CHUNK + i, i));
            blocks.add(block(i, 1, 2 * CHUNK + i));
        }
        Counting real = new Counting();
        AtomicInteger busy = new AtomicInteger();
        BlockFetcher.Caller turnedAway = (address, request, timeout) -> {
            // every other request of the first twenty is turned away, as a server with a full queue answers
            if (real.calls.get() + busy.get() < 20 && (real.calls.get() + busy.get()) % 2 == 0) {
                busy.incrementAndGet();
                return CompletableFuture.failedFuture(new RemoteRpcException("blocks-s", RpcConfig.BUSY_CLASS,
                    "server 'blocks-s' is busy"));
            }
            return real.call(address, request, timeout);
        };
        try (BlockFetcher f = new BlockFetcher(turnedAway, lent::release, blocks, 1 << 20, 4, CHUNK, TIMEOUT)) {
            Map<String, byte[]> got = new HashMap<>();
            while (f.hasNext()) {
                FetchedBlock b = f.next();
                got.put(b.block().name(), b.stream().readAllBytes());
                f.release(b);
            }
            assertEquals(expected.keySet(), got.keySet());
            for (String k : expected.keySet()) {
                assertArrayEquals(expected.get(k), got.get(k), k);
            }
            assertTrue(busy.get() >= 5, "busy answers: " + busy.get());
            assertEquals(busy.get(), f.retries());
        }
        lent.assertAllBack();
    }

    /** A server that stays busy past the request timeout fails the fetch naming it (no endless asking). */
    @Test
    void aServerBusyPastTheTimeoutFailsTheFetchNamingIt() {
        source.put(0, 1, 1, 100, 1);
        BlockFetcher.Caller alwaysBusy = (address, request, timeout) -> CompletableFuture.failedFuture(
            new RemoteRpcException("blocks-s", RpcConfig.BUSY_CLASS, "server 'blocks-s' is busy"));
        try (BlockFetcher f = new BlockFetcher(alwaysBusy, lent::release, List.of(block(1, 1, 100)), 1 << 20, 4,
            CHUNK,
            Duration.ofMillis(300))) {
            BlockFetchException e = assertThrows(BlockFetchException.class, f::next);
            assertTrue(e.getMessage().contains("exec-1") && e.getMessage().contains("busy"), e.getMessage());
            assertTrue(f.retries() > 0, "never asked again");
        }
    }

    @Test
    void requestsInFlightStayWithinTheBound() throws Exception {
        List<FetchBlock> blocks = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            source.put(0, i, 0, 3000 + i, i);
            blocks.add(block(i, 0, 3000 + i));
        }
        Counting caller = new Counting();
        CountDownLatch gate = new CountDownLatch(1);
        source.gate = gate;
        try (BlockFetcher f = new BlockFetcher(caller, lent::release, blocks, 1 << 20, 3, CHUNK, TIMEOUT)) {
            // no answer can have come back yet: exactly the bound was sent
            assertEquals(3, caller.calls.get());
            gate.countDown();
            int n = 0;
            while (f.hasNext()) {
                f.next();
                n++;
            }
            assertEquals(40, n);
            assertEquals(40, caller.calls.get());
            assertTrue(caller.max.get() <= 3, "max outstanding=" + caller.max.get());
            assertTrue(f.maxReqsSeen() <= 3, "maxReqsSeen=" + f.maxReqsSeen());
        }
    }

    @Test
    void bytesInFlightStayWithinTheBoundAndALargeBlockStillPasses() throws Exception {
        List<FetchBlock> blocks = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            source.put(0, i, 0, 5000, i);
            blocks.add(block(i, 0, 5000));
        }
        source.put(0, 99, 0, 5 * CHUNK, 99);   // larger than the bound: admitted alone
        blocks.add(block(99, 0, 5 * CHUNK));
        Counting caller = new Counting();
        CountDownLatch gate = new CountDownLatch(1);
        source.gate = gate;
        try (BlockFetcher f = new BlockFetcher(caller, lent::release, blocks, 2 * CHUNK + 100, 64, CHUNK,
            TIMEOUT)) {
            // each 5000-byte block holds a chunk-sized answer buffer: two fit in two chunks' worth, a third not
            assertEquals(2, caller.calls.get(), "two 5000-byte blocks count a chunk each");
            gate.countDown();
            long total = 0;
            while (f.hasNext()) {
                total += f.next().length();
            }
            assertEquals(20 * 5000 + 5 * CHUNK, total);
            assertTrue(f.maxBytesSeen() <= 5 * CHUNK, "maxBytesSeen=" + f.maxBytesSeen());
        }
    }

    /**
     * Small blocks count a whole chunk each against the bytes in flight, since each answer lands in a chunk-sized
     * buffer: counted by their sizes, a bound of 48 MiB let thousands of 2 KB blocks in, holding a chunk each.
     */
    @Test
    void smallBlocksCountAWholeChunkEachSoTheBuffersTheyHoldStayWithinTheBound() throws Exception {
        List<FetchBlock> blocks = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            source.put(0, i, 0, 100, i);
            blocks.add(block(i, 0, 100));
        }
        Counting caller = new Counting();
        CountDownLatch gate = new CountDownLatch(1);
        source.gate = gate;
        try (BlockFetcher f = new BlockFetcher(caller, lent::release, blocks, 3L * CHUNK, 64, CHUNK, TIMEOUT)) {
            assertEquals(3, caller.calls.get(), "three 100-byte blocks hold three chunk buffers: the bound");
            gate.countDown();
            int n = 0;
            while (f.hasNext()) {
                FetchedBlock b = f.next();
                assertTrue(lent.outstanding() <= 4, "answer buffers held: " + lent.outstanding());
                f.release(b);
                n++;
            }
            assertEquals(40, n);
            assertTrue(f.maxBytesSeen() <= 3L * CHUNK, "maxBytesSeen=" + f.maxBytesSeen());
        }
        lent.assertAllBack();
    }

    @Test
    void everyChunkOfABlockIsRequestedWhenItIsAdmittedNotAfterItsFirstAnswer() throws Exception {
        byte[] big = source.put(0, 1, 0, 3 * CHUNK + 17, 1);
        Counting caller = new Counting();
        CountDownLatch gate = new CountDownLatch(1);
        source.gate = gate;
        try (BlockFetcher f = new BlockFetcher(caller, lent::release, List.of(block(1, 0, 3 * CHUNK + 17)), 1 << 20,
            64, CHUNK,
            TIMEOUT)) {
            // no answer can have come back yet: the four chunks were asked for together, by the constructor
            assertEquals(4, caller.calls.get());
            assertEquals(4, f.maxReqsSeen());
            gate.countDown();
            FetchedBlock got = f.next();
            assertArrayEquals(big, got.stream().readAllBytes());
            assertEquals(4, got.chunks().size());
            assertEquals(4, caller.calls.get(), "the consumer sent no further request");
            assertEquals(4, server.requestsServed());
        }
    }

    @Test
    void aChunkTheEstimateOverCountedIsAnsweredEmptyAndTheBlockArrivesWhole() throws Exception {
        byte[] b = source.put(0, 1, 0, CHUNK + 1, 1);
        byte[] exact = source.put(0, 2, 0, 2 * CHUNK, 2);
        Counting caller = new Counting();
        List<FetchBlock> blocks = List.of(block(1, 0, 3L * CHUNK), block(2, 0, 2L * CHUNK + 5));
        try (BlockFetcher f = new BlockFetcher(caller, lent::release, blocks, 1 << 20, 64, CHUNK, TIMEOUT)) {
            Map<String, byte[]> got = new HashMap<>();
            while (f.hasNext()) {
                FetchedBlock x = f.next();
                got.put(x.block().name(), x.stream().readAllBytes());
                f.release(x);
            }
            assertArrayEquals(b, got.get("shuffle_0_1_0"));
            assertArrayEquals(exact, got.get("shuffle_0_2_0"));
            assertEquals(3 + 3, caller.calls.get());
            assertEquals(0, server.errorsReturned(), "a request past the end is not an error");
            assertEquals(CHUNK + 1 + 2 * CHUNK, f.bytesFetched());
        }
        lent.assertAllBack(); // the answers past the end too
    }

    @Test
    void aBlockLargerThanItsEstimateIsCompletedByTheConsumer() throws Exception {
        byte[] b = source.put(0, 1, 0, 3 * CHUNK + 5, 1);
        Counting caller = new Counting();
        try (BlockFetcher f = new BlockFetcher(caller, lent::release, List.of(block(1, 0, CHUNK)), 1 << 20, 64, CHUNK,
            TIMEOUT)) {
            assertEquals(1, caller.calls.get());
            FetchedBlock got = f.next();
            assertArrayEquals(b, got.stream().readAllBytes());
            assertEquals(4, caller.calls.get(), "the three chunks past the estimate, once the size was known");
            assertEquals(4 * CHUNK, f.maxBytesSeen(), "counted at its exact size (in whole chunks) once known");
        }
    }

    @Test
    void aBlockOfMoreChunksThanTheRequestsLeftWaitsUntilTheyFit() throws Exception {
        source.put(0, 1, 0, 100, 1);
        source.put(0, 2, 0, 4 * CHUNK, 2);
        Counting caller = new Counting();
        CountDownLatch gate = new CountDownLatch(1);
        source.gate = gate;
        List<FetchBlock> blocks = List.of(block(1, 0, 100), block(2, 0, 4L * CHUNK));
        try (BlockFetcher f = new BlockFetcher(caller, lent::release, blocks, 1 << 20, 3, CHUNK, TIMEOUT)) {
            assertEquals(1, caller.calls.get(), "1 + 4 requests exceed the bound of 3");
            gate.countDown();
            assertEquals("shuffle_0_1_0", f.next().block().name());
            // nothing else in flight: the large block is admitted alone, all its chunks at once
            assertEquals(5, caller.calls.get());
            assertEquals(4 * CHUNK, f.next().length());
        }
    }

    /**
     * Closing a fetcher (a task that ends early, or fails) gives back every answer buffer: those of blocks queued for
     * the consumer, those of blocks partly in, and those of answers that arrive after the close.
     */
    @Test
    void closingGivesBackEveryAnswerBufferWhateverStateItsBlockIsIn() throws Exception {
        List<FetchBlock> blocks = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            source.put(0, i, 0, 2 * CHUNK + 1 + i, i); // three chunks each
            blocks.add(block(i, 0, 2 * CHUNK + 1 + i));
        }
        source.gateFromMap = 4; // blocks 0-3 arrive, 4-7 are held at the server until after the close
        CountDownLatch gate = new CountDownLatch(1);
        source.gate = gate;
        Counting caller = new Counting();
        BlockFetcher f = new BlockFetcher(caller, lent::release, blocks, 1 << 20, 64, CHUNK, TIMEOUT);
        try {
            FetchedBlock first = f.next();
            assertEquals(2 * CHUNK + 1 + first.block().mapIndex(), first.stream().readAllBytes().length);
            Blocking.awaitTrue("blocks 0-3 in", () -> lent.outstanding() >= 4 * 3, TIMEOUT);
            f.close();              // one block taken (the consumer's to release), three queued, four held
            f.release(first);
        } finally {
            gate.countDown();
        }
        Blocking.awaitTrue("every request answered", () -> caller.outstanding.get() == 0, TIMEOUT);
        lent.assertAllBack();
    }

    @Test
    void anUnknownBlockFailsNamingBlockExecutorAndReason() throws Exception {
        source.put(0, 1, 0, 100, 1);
        List<FetchBlock> blocks = List.of(block(1, 0, 100), block(2, 0, 100));
        try (BlockFetcher f = new BlockFetcher(new Counting(), lent::release, blocks, 1 << 20, 64, CHUNK, TIMEOUT)) {
            BlockFetchException e = assertThrows(BlockFetchException.class, () -> {
                while (f.hasNext()) {
                    f.next();
                }
            });
            assertEquals("shuffle_0_2_0", e.block().name());
            assertTrue(e.getMessage().contains("fetching shuffle_0_2_0 from executor exec-1 at " + server.address()),
                e.getMessage());
            assertTrue(e.getCause() instanceof RemoteRpcException r
                && r.remoteMessage().contains("no block shuffle_0_2_0"), String.valueOf(e.getCause()));
        }
    }

    @Test
    void aLostServerFailsTheFetchInsteadOfHanging() throws Exception {
        source.put(0, 1, 0, 100, 1);
        source.put(0, 2, 0, 3 * CHUNK, 2);   // none of its chunks can leave the server before the loss
        CountDownLatch gate = new CountDownLatch(1);
        source.gateFromMap = 2;
        source.gate = gate;
        List<FetchBlock> blocks = List.of(block(1, 0, 100), block(2, 0, 3 * CHUNK));
        Counting caller = new Counting();
        try (BlockFetcher f = new BlockFetcher(caller, lent::release, blocks, 1, 1, CHUNK, TIMEOUT)) {
            assertEquals("shuffle_0_1_0", f.next().block().name());
            serverNode.close();    // the executor holding the blocks is gone
            BlockFetchException e = assertThrows(BlockFetchException.class, f::next);
            assertEquals("shuffle_0_2_0", e.block().name());
            assertTrue(e.getCause() instanceof RpcPeerException, String.valueOf(e.getCause()));
            assertTrue(e.getMessage().contains("from executor exec-1"), e.getMessage());
            // block 2's three chunks were all asked for when it was admitted (before the loss); after the
            // failure nothing more is sent to the lost peer
            assertEquals(4, caller.calls.get());
        } finally {
            gate.countDown();
        }
    }

    @Test
    void anUnreachableAddressFailsWithinTheTimeout() throws Exception {
        List<FetchBlock> blocks = List.of(new FetchBlock("exec-9", LoopbackFabric.SCHEME + "nobody",
            0, 1, 1, 0, 10));
        try (BlockFetcher f = new BlockFetcher(new Counting(), lent::release, blocks, 1 << 20, 1, CHUNK,
            Duration.ofMillis(500))) {
            BlockFetchException e = assertThrows(BlockFetchException.class, f::next);
            assertTrue(e.getMessage().contains("executor exec-9"), e.getMessage());
        }
    }

    @Test
    void aMalformedRequestIsAnsweredWithAnErrorAndTheServerGoesOn() throws Exception {
        source.put(0, 1, 0, 100, 1);
        RemoteRpcException e = assertThrows(RemoteRpcException.class, () -> client.call(server.address(),
            FetchProtocol.METHOD_FETCH, FetchProtocol.request(0, 1, 0, 0, CHUNK + 1), TIMEOUT));
        assertTrue(e.remoteMessage().contains("length=" + (CHUNK + 1) + " out of range"), e.remoteMessage());
        byte[] ok = client.call(server.address(), FetchProtocol.METHOD_FETCH, FetchProtocol.request(0, 1, 0, 90, 50),
            TIMEOUT);
        assertEquals(8 + 10, ok.length);
        assertEquals(100, FetchProtocol.answerSize(ok));
        assertEquals(1, server.errorsReturned());
    }

    /** A block server's source that lies about a block's size: it claims {@code claimed} bytes and serves zeros. */
    static final class LyingSource implements BlockSource {
        volatile long claimed;

        @Override
        public long size(int shuffleId, long mapId, int reduceId) {
            return claimed;
        }

        @Override
        public void read(int shuffleId, long mapId, int reduceId, long offset, ByteBuffer dst) {
            dst.put(new byte[dst.remaining()]);
        }
    }

    private final LyingSource lying = new LyingSource();
    private String liar;

    /** Starts (once) a second block server whose source lies about sizes; returns its address. */
    private String lyingServer() throws Exception {
        if (liar != null) {
            return liar;
        }
        Node n = new LoopbackFabric().open(NodeOptions.builder().name("liar").build());
        closing.push(n);
        ChannelEngine e = ChannelEngine.open(n, ChannelConfig.builder(1).ringCapacity(1 << 16).build());
        closing.push(e);
        BlockServer server = BlockServer.start(e, lying, CHUNK, 2);
        closing.push(server);
        liar = server.address();
        return liar;
    }

    private BlockFetchException fetchFromLiar(long claimed, long estimate, BlockSizeLimit limit,
                                              Counting caller) throws Exception {
        lying.claimed = claimed;
        String address = lyingServer();
        List<FetchBlock> blocks = List.of(new FetchBlock("exec-7", address, 0, 1, 1, 0, estimate));
        try (BlockFetcher f = limit == null
            ? new BlockFetcher(caller, lent::release, blocks, 1 << 20, 64, CHUNK, TIMEOUT)
            : new BlockFetcher(caller, lent::release, blocks, 1 << 20, 64, CHUNK, TIMEOUT, limit)) {
            BlockFetchException e = assertThrows(BlockFetchException.class, f::next,
                "a block claimed " + claimed + " bytes was handed over");
            assertEquals("shuffle_0_1_0", e.block().name());
            assertTrue(e.getMessage().contains("executor exec-7 at " + address), e.getMessage());
            assertTrue(e.getMessage().contains("size=" + claimed), e.getMessage());
            return e;
        } finally {
            lent.assertAllBack();
        }
    }

    /**
     * A server claiming a block far larger than the map output tracker said gets that block's fetch failed, naming
     * itself and the value, after its first answer: no request for the chunks it claims. The old fetcher asked for
     * every one of them (999 more here) and handed over 8 MB of the liar's zeros as a block of 100 bytes.
     */
    @Test
    void aServerClaimingMoreThanTheTrackerSaidFailsThatBlockNamingItAndTheValue() throws Exception {
        Counting caller = new Counting();
        BlockFetchException e = fetchFromLiar(1000L * CHUNK, 100, new BlockSizeLimit(0, 1L << 30), caller);
        assertTrue(e.getMessage().contains("limit=200 (the map output tracker's estimate=100 times 2"),
            e.getMessage());
        assertEquals(1, caller.calls.get(), "requests sent for the claimed size");
    }

    /**
     * Sizes no block has: over the absolute limit (whatever the estimate), past what an {@code int} counts in
     * chunks, Long.MAX_VALUE (whose chunk count overflowed to one in the old fetcher: a block handed over cut
     * short), negative. Each fails that block naming the peer and the value; nothing more is asked for and no
     * array of the claimed chunk count is made (the old fetcher sized one by it: 2^27 entries for 2^40 bytes).
     */
    @Test
    void aServerClaimingAHugeOrNegativeSizeFailsThatBlockAndNothingBigIsAllocated() throws Exception {
        for (long claimed : new long[] {RdmxShuffleConf.MAX_BLOCK_BYTES_DEFAULT + 1, 1L << 40,
            (1L << 31) * CHUNK + CHUNK, Long.MAX_VALUE, -5}) {
            Counting caller = new Counting();
            fetchFromLiar(claimed, 100, null, caller);
            assertEquals(1, caller.calls.get(), "requests sent for a block claimed " + claimed + " bytes");
        }
        assertTrue(lent.pool.allocated() <= 2, "answer buffers: " + lent.pool.allocated());
    }

    @Test
    void theLimitIsTheEstimateTimesTheMarginWithinTheFloorAndTheAbsoluteLimit() {
        BlockSizeLimit l = new BlockSizeLimit(1000, 1L << 20);
        assertEquals(1000, l.of(1));
        assertEquals(2000, l.of(1000));
        assertEquals(1L << 20, l.of(1L << 20));
        assertEquals(1L << 20, l.of(Long.MAX_VALUE), "no overflow");
    }
}
