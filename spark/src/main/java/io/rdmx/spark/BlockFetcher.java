package io.rdmx.spark;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Fetches the remote blocks of one reduce task, bounded in flight, and hands them over in the order they
 * arrive.
 *
 * <p>The sizes Spark's map output tracker knows are estimates (compressed to a byte per block), so a block is
 * admitted by its estimate and asked for with one request of at most a chunk; the answer states the exact size
 * ({@link FetchProtocol}). A block larger than a chunk is then fetched as further requests, sent by the consumer,
 * and handed over whole once all its chunks are in. A block is admitted only while the bytes requested but not
 * yet handed over stay within {@code maxBytesInFlight} and the requests outstanding within
 * {@code maxReqsInFlight}; a block is admitted anyway when nothing else is in flight, so a large block never
 * waits forever. Bytes count against the bound until the consumer takes the block.
 *
 * <p>Threads: one consumer thread calls {@link #hasNext()}, {@link #next()} and {@link #close()}; it alone
 * sends requests (so no transport thread ever waits for ring space on its behalf). The transport's threads
 * complete chunks and publish whole blocks through a queue. Every wait is bounded: a request fails by itself
 * within the timeout (the RPC layer's bound), and the consumer gives up after the timeout plus a grace period
 * even if the transport never answers.
 */
public final class BlockFetcher implements AutoCloseable {
    /** Grace added to the request timeout before the consumer gives up waiting on its own. */
    static final Duration GRACE = Duration.ofSeconds(2);

    /** Sends one fetch request; the future completes with the answer or the failure, within {@code timeout}. */
    @FunctionalInterface
    public interface Caller {
        /**
         * @param address the peer's block server
         * @param request a {@link FetchProtocol} request
         * @param timeout the bound of the call
         * @return the answer's bytes
         */
        CompletableFuture<byte[]> call(String address, ByteBuffer request, Duration timeout);
    }

    /**
     * A block to fetch.
     *
     * @param executorId the executor holding it
     * @param address its block server's address
     * @param shuffleId the shuffle
     * @param mapId the map task's id
     * @param mapIndex the map task's index
     * @param reduceId the partition
     * @param size the block's estimated length (the map output tracker's), bytes, at least 1
     */
    public record Block(String executorId, String address, int shuffleId, long mapId, int mapIndex, int reduceId,
                        long size) {
        /** @return Spark's name of the block */
        public String name() {
            return FetchProtocol.blockName(shuffleId, mapId, reduceId);
        }
    }

    /**
     * A fetched block: views of the answers' payloads, not copies (each answer's bytes are read in place, behind
     * its header).
     *
     * @param block which
     * @param chunks its bytes, in order: each a heap buffer whose remaining bytes are a chunk's payload
     */
    public record Fetched(Block block, List<ByteBuffer> chunks) {
        /** @return the block's exact length, bytes */
        public long length() {
            long n = 0;
            for (ByteBuffer c : chunks) {
                n += c.remaining();
            }
            return n;
        }

        /** @return the block's bytes as one stream (reads the answers in place) */
        public InputStream stream() {
            if (chunks.size() == 1) {
                return open(chunks.get(0));
            }
            List<InputStream> parts = new ArrayList<>(chunks.size());
            for (ByteBuffer c : chunks) {
                parts.add(open(c));
            }
            return new SequenceInputStream(Collections.enumeration(parts));
        }

        private static InputStream open(ByteBuffer c) {
            return new ByteArrayInputStream(c.array(), c.arrayOffset() + c.position(), c.remaining());
        }
    }

    private record Failed(Block block, String message, Throwable cause) {
    }

    /** The first chunk of a block larger than a chunk: the consumer sends the rest. */
    private record First(Block block, ByteBuffer data, long size) {
    }

    private final Caller caller;
    private final ArrayDeque<Block> pending = new ArrayDeque<>();
    /** Admitted and not yet taken, in admission order. Consumer thread. */
    private final Set<Block> admitted = new LinkedHashSet<>();
    private final LinkedBlockingQueue<Object> arrived = new LinkedBlockingQueue<>();
    private final AtomicInteger reqsInFlight = new AtomicInteger();
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Set once any request failed: nothing more is sent (the consumer throws at its next take). */
    private volatile boolean failing;
    private final long maxBytesInFlight;
    private final int maxReqsInFlight;
    private final int chunkBytes;
    private final Duration timeout;
    private final int total;
    private long bytesInFlight;
    private int delivered;
    private long fetchWaitNanos;
    private long bytesFetched;
    private long maxBytesSeen;
    private int maxReqsSeen;

    /**
     * Starts fetching: the first blocks within the bounds are requested at once.
     *
     * @param caller sends requests
     * @param blocks the blocks, each of size at least 1; they are requested in this order
     * @param maxBytesInFlight bytes requested and not yet taken
     * @param maxReqsInFlight requests outstanding
     * @param chunkBytes the largest request
     * @param timeout the bound of each request
     */
    public BlockFetcher(Caller caller, List<Block> blocks, long maxBytesInFlight, int maxReqsInFlight,
                        int chunkBytes, Duration timeout) {
        this.caller = caller;
        this.maxBytesInFlight = maxBytesInFlight;
        this.maxReqsInFlight = maxReqsInFlight;
        this.chunkBytes = chunkBytes;
        this.timeout = timeout;
        for (Block b : blocks) {
            if (b.size() < 1) {
                throw new IllegalArgumentException("block " + b.name() + " size=" + b.size() + " must be >= 1");
            }
            pending.add(b);
        }
        this.total = blocks.size();
        fill();
    }

    /** Admits blocks while the bounds allow. Consumer thread. */
    private void fill() {
        while (!pending.isEmpty() && !closed.get() && !failing) {
            Block b = pending.peek();
            long estimate = Math.min(b.size(), chunkBytes);
            int reqs = reqsInFlight.get();
            boolean idle = reqs == 0 && bytesInFlight == 0;
            if (!idle && (bytesInFlight + estimate > maxBytesInFlight || reqs + 1 > maxReqsInFlight)) {
                return;
            }
            pending.poll();
            admitted.add(b);
            bytesInFlight += estimate;
            maxBytesSeen = Math.max(maxBytesSeen, bytesInFlight);
            maxReqsSeen = Math.max(maxReqsSeen, reqs + 1);
            sendFirst(b);
        }
    }

    private CompletableFuture<byte[]> call(Block b, long off, int len) {
        reqsInFlight.incrementAndGet();
        CompletableFuture<byte[]> f;
        try {
            f = caller.call(b.address(), FetchProtocol.request(b.shuffleId(), b.mapId(), b.reduceId(), off, len),
                timeout);
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        return f.whenComplete((bytes, err) -> reqsInFlight.decrementAndGet());
    }

    /** @return the answer's payload, in place (no copy) */
    private static ByteBuffer payload(byte[] answer) {
        return ByteBuffer.wrap(answer, FetchProtocol.ANSWER_HEADER, answer.length - FetchProtocol.ANSWER_HEADER)
            .slice();
    }

    /** @return null if the answer is good, else the failure to hand over */
    private Failed check(Block b, long off, int len, byte[] bytes, Throwable err) {
        if (err != null) {
            Throwable cause = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
            return new Failed(b, "fetching " + b.name() + " from executor " + b.executorId() + " at " + b.address()
                + " failed: " + cause, cause);
        }
        String bad = FetchProtocol.validateAnswer(bytes, off, len);
        if (bad != null) {
            return new Failed(b, "executor " + b.executorId() + " at " + b.address() + " answered badly for "
                + b.name() + ": " + bad, null);
        }
        return null;
    }

    private void sendFirst(Block b) {
        call(b, 0, chunkBytes).whenComplete((bytes, err) -> {
            if (closed.get()) {
                return;
            }
            Failed f = check(b, 0, chunkBytes, bytes, err);
            if (f != null) {
                failing = true;
                arrived.add(f);
                return;
            }
            long size = FetchProtocol.answerSize(bytes);
            ByteBuffer data = payload(bytes);
            arrived.add(size <= chunkBytes ? new Fetched(b, List.of(data)) : new First(b, data, size));
        });
    }

    /** Sends the rest of a block larger than a chunk. Consumer thread. */
    private void sendRest(First first) {
        Block b = first.block();
        int chunks = (int) ((first.size() + chunkBytes - 1) / chunkBytes);
        bytesInFlight += first.size() - Math.min(b.size(), chunkBytes);
        maxBytesSeen = Math.max(maxBytesSeen, bytesInFlight);
        maxReqsSeen = Math.max(maxReqsSeen, reqsInFlight.get() + chunks - 1);
        AtomicReferenceArray<ByteBuffer> parts = new AtomicReferenceArray<>(chunks);
        parts.set(0, first.data());
        AtomicInteger left = new AtomicInteger(chunks - 1);
        AtomicBoolean failed = new AtomicBoolean();
        for (int i = 1; i < chunks && !failing && !closed.get(); i++) {
            long off = (long) i * chunkBytes;
            int len = (int) Math.min(chunkBytes, first.size() - off);
            int index = i;
            call(b, off, len).whenComplete((bytes, err) -> {
                if (closed.get()) {
                    return;
                }
                Failed f = check(b, off, len, bytes, err);
                if (f == null && FetchProtocol.answerSize(bytes) != first.size()) {
                    f = new Failed(b, "executor " + b.executorId() + " at " + b.address() + " changed the size of "
                        + b.name() + " from " + first.size() + " to " + FetchProtocol.answerSize(bytes), null);
                }
                if (f != null) {
                    failing = true;
                    if (failed.compareAndSet(false, true)) {
                        arrived.add(f);
                    }
                    return;
                }
                parts.set(index, payload(bytes));
                if (left.decrementAndGet() == 0 && !failed.get()) {
                    List<ByteBuffer> all = new ArrayList<>(chunks);
                    for (int k = 0; k < chunks; k++) {
                        all.add(parts.get(k));
                    }
                    arrived.add(new Fetched(b, all));
                }
            });
        }
    }

    /** @return whether blocks remain to be handed over */
    public boolean hasNext() {
        return delivered < total;
    }

    /**
     * Takes the next block to arrive, waiting for it at most the request timeout plus a grace period.
     *
     * @return the block
     * @throws BlockFetchException if it failed, naming executor, address and block
     * @throws InterruptedException if the consumer was interrupted (the task was killed)
     */
    public Fetched next() throws BlockFetchException, InterruptedException {
        if (!hasNext()) {
            throw new NoSuchElementException("all " + total + " blocks were handed over");
        }
        if (closed.get()) {
            throw new IllegalStateException("block fetcher closed");
        }
        fill();
        Object o;
        while (true) {
            long t0 = System.nanoTime();
            o = arrived.poll(timeout.plus(GRACE).toNanos(), TimeUnit.NANOSECONDS);
            fetchWaitNanos += System.nanoTime() - t0;
            if (o instanceof First first) {
                sendRest(first);
                continue;
            }
            break;
        }
        if (o == null) {
            Block b = admitted.isEmpty() ? pending.peek() : admitted.iterator().next();
            close();
            throw new BlockFetchException(b, "no block arrived within " + timeout.plus(GRACE).toMillis()
                + " ms (" + reqsInFlight.get() + " requests outstanding, " + delivered + " of " + total
                + " blocks taken)", null);
        }
        if (o instanceof Failed f) {
            close();
            throw new BlockFetchException(f.block(), f.message(), f.cause());
        }
        Fetched got = (Fetched) o;
        admitted.remove(got.block());
        delivered++;
        long actual = got.length();
        // what was counted: the estimate up to a chunk, plus the rest once the exact size was known
        bytesInFlight -= actual > chunkBytes ? actual : Math.min(got.block().size(), chunkBytes);
        bytesFetched += actual;
        fill();
        return got;
    }

    /** @return nanoseconds the consumer waited for blocks */
    public long fetchWaitNanos() {
        return fetchWaitNanos;
    }

    /** @return bytes handed over */
    public long bytesFetched() {
        return bytesFetched;
    }

    /** @return the most bytes that were in flight at once */
    public long maxBytesSeen() {
        return maxBytesSeen;
    }

    /** @return the most requests that were outstanding at once (counted when sent) */
    public int maxReqsSeen() {
        return maxReqsSeen;
    }

    /** Stops: answers still to come are dropped. Idempotent. Consumer thread. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            pending.clear();
            arrived.clear();
        }
    }
}
