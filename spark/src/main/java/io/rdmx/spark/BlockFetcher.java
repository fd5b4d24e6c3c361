package io.rdmx.spark;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Fetches the remote blocks of one reduce task, bounded in flight, and hands them over in the order they
 * arrive.
 *
 * <p>The sizes Spark's map output tracker knows are estimates (compressed to a byte per block; for up to 2000
 * partitions rounded up by at most 10%), so a block is admitted by its estimate and all the chunks the estimate
 * covers are requested at once, when it is admitted: a block of several chunks costs one round trip, overlapped
 * with whatever the consumer does meanwhile, not a second one the consumer waits for. Every answer states the
 * block's exact size ({@link FetchProtocol}); a chunk the estimate over-counted is answered empty, and a block
 * larger than its estimate is completed by further requests, sent by the consumer when it sees that. A block is
 * handed over whole once all its chunks are in. A block is admitted only while the bytes requested but not yet
 * handed over (counted in whole chunks: each answer holds a buffer of a chunk) stay within
 * {@code maxBytesInFlight} and the requests outstanding within {@code maxReqsInFlight}; a block is admitted anyway
 * when nothing else is in flight, so a large block never waits forever. Bytes count against the bound until the
 * consumer takes the block.
 *
 * <p>A block whose estimate is above {@code toDiskBytes} (Spark's {@code spark.network.maxRemoteBlockSizeFetchToMem})
 * is not held in memory: it goes to a temporary file ({@link BlockSpill}, Spark's temporary local blocks) chunk by
 * chunk, the consumer writing each answer as it takes it and giving its buffer back at once, with at most a window
 * of chunks requested at a time ({@code maxBytesInFlight}, at least one chunk), so a skewed partition cannot
 * exhaust memory. It is handed over as the file, which is deleted when the consumer releases it (or at
 * {@link #close()}).
 *
 * <p>Answers arrive in buffers the caller lends (off the heap: {@link BlockBuffers}); the fetcher gives each back
 * exactly once through its release hook: when the consumer is done with the block ({@link #release(FetchedBlock)}),
 * when the answer is not needed (late, past the block's end, of a failed block), or at {@link #close()}.
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
         * @return the answer: its bytes from the buffer's position to its limit, the buffer lent to the fetcher
         *         until it hands it to its release hook
         */
        CompletableFuture<ByteBuffer> call(String address, ByteBuffer request, Duration timeout);
    }

    private record Failed(FetchBlock block, String message, Throwable cause) {
    }

    /** An answer of a block that goes to disk: the consumer writes it to the block's file. */
    private record Piece(InFlight state, int index, ByteBuffer bytes) {
    }

    /** A block larger than its estimate: the consumer sends the chunks its estimate did not cover. */
    private record More(InFlight state) {
    }

    /**
     * A chunk the server turned away because its handler queue was full: the consumer asks again after a pause
     * (a busy executor is not a lost one; reporting it lost would make Spark recompute its map outputs).
     */
    private record Retry(InFlight state, int index, long due) {
    }

    /**
     * The chunks of one admitted block. Chunk answers complete on transport threads, so its fields are guarded by
     * its monitor (one short section per chunk answer); {@code counted} is the consumer's.
     */
    private final class InFlight {
        final FetchBlock block;
        /** Chunks requested: 0 .. requested - 1. */
        int requested;
        /** The exact size, from the first answer to arrive; -1 until then. */
        long size = -1;
        /** The answers in, by chunk index (lent buffers: given back when the block is released or fails). */
        ByteBuffer[] parts;
        /** Chunks of the exact size in: complete when it reaches {@link #needed()}. */
        int have;
        /** Handed to the queue (whole or failed): later answers are dropped. */
        boolean finished;
        /** Whether the chunks beyond the estimate were asked of the consumer. */
        boolean moreAsked;
        /** Bytes counted against the bound for it. Consumer thread. */
        long counted;
        /** When it was admitted: a busy server is asked again until the request timeout has passed since. */
        final long admittedNanos = System.nanoTime();
        /** Busy answers so far per chunk (they lengthen the pause before that chunk's next attempt). */
        int[] busyAnswers = new int[0];
        /** Its file, if it goes to disk ({@code toDiskBytes}) instead of memory; else null. */
        final BlockFile disk;

        InFlight(FetchBlock block, int requested, boolean disk) {
            this.block = block;
            this.requested = requested;
            this.disk = disk ? new BlockFile(spill) : null;
            this.parts = new ByteBuffer[disk ? 0 : requested];
        }

        /** Closes and deletes its file, if any. Consumer thread. */
        void deleteFile() {
            if (disk != null) {
                disk.delete();
            }
        }

        /** @return the chunks of the exact size (at least one: an empty block is one empty answer) */
        int needed() {
            return (int) Math.max(1, (size + chunkBytes - 1) / chunkBytes);
        }

        /** Takes chunk {@code index}'s answer (or failure). Transport thread. */
        void answered(int index, long off, int len, ByteBuffer bytes, Throwable err) {
            if (closed.get()) {
                giveBack(bytes);
                return;
            }
            Object publish = null;
            synchronized (this) {
                if (finished) {
                    giveBack(bytes);
                    return;
                }
                if (err != null && busy(err) && !failing
                    && System.nanoTime() - admittedNanos < timeout.toNanos()) {
                    if (busyAnswers.length <= index) {
                        busyAnswers = Arrays.copyOf(busyAnswers, index + 1);
                    }
                    // asked again by the consumer after a pause that doubles with each busy answer of this chunk
                    // (1 ms up to 64 ms), while it waits for other blocks
                    long pauseMs = Math.min(64, 1L << Math.min(6, busyAnswers[index]++));
                    publish = new Retry(this, index, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(pauseMs));
                } else {
                    publish = takeAnswer(this, index, off, len, bytes, err);
                }
            }
            if (publish != null) {
                arrived.add(publish);
                if (closed.get()) {
                    drainArrived(); // closed while this was being published: close() may have drained before it
                }
            }
        }

        /** Gives back the answers held, and takes no more. Under its monitor. */
        void drop() {
            finished = true;
            for (int i = 0; i < parts.length; i++) {
                giveBack(parts[i]);
                parts[i] = null;
            }
        }
    }

    /**
     * Takes an answer (or failure) of one chunk of {@code st}, under its monitor.
     *
     * @return what to hand to the consumer: the whole block, a failure, a request for more chunks, or null
     */
    private Object takeAnswer(InFlight st, int index, long off, int len, ByteBuffer bytes, Throwable err) {
        Failed f = check(st.block, off, len, bytes, err);
        if (f == null && st.size >= 0 && FetchProtocol.answerSize(bytes) != st.size) {
            f = new Failed(st.block, "executor " + st.block.executorId() + " at " + st.block.address()
                + " changed the size of " + st.block.name() + " from " + st.size + " to "
                + FetchProtocol.answerSize(bytes), null);
        }
        if (f == null && st.size < 0 && FetchProtocol.answerSize(bytes) > limit(st.block)) {
            f = new Failed(st.block, "executor " + st.block.executorId() + " at " + st.block.address()
                + " claims " + st.block.name() + " has size=" + FetchProtocol.answerSize(bytes) + " bytes, over the "
                + "limit=" + limit(st.block) + " (the map output tracker's estimate=" + st.block.size() + " times "
                + BlockSizeLimit.MARGIN + ", at least " + sizeLimit.floor() + ", at most "
                + RdmxShuffleConf.MAX_BLOCK_BYTES_KEY + "=" + sizeLimit.absolute() + ")", null);
        }
        if (f != null) {
            giveBack(bytes);
            st.drop();
            failing = true;
            return f;
        }
        if (st.size < 0) {
            st.size = FetchProtocol.answerSize(bytes); // within limit(st.block): needed() fits an int
        }
        if (st.disk != null) {
            if (index < st.needed() && st.disk.take(index)) {
                return new Piece(st, index, bytes); // the consumer writes it, then asks for the next chunk
            }
            giveBack(bytes); // past the block's end (answered empty), or a chunk answered twice
            return null;
        }
        int needed = st.needed();
        if (st.parts.length < needed) {
            st.parts = Arrays.copyOf(st.parts, needed);
        }
        if (index < needed && st.parts[index] == null) {
            st.parts[index] = bytes;
            st.have++;
        } else {
            giveBack(bytes); // past the block's end (answered empty), or a chunk answered twice
        }
        if (st.have == needed) {
            st.finished = true;
            FetchedBlock whole = new FetchedBlock(st.block, Arrays.copyOf(st.parts, needed));
            Arrays.fill(st.parts, null); // the FetchedBlock gives them back now
            return whole;
        }
        if (needed > st.requested && !st.moreAsked) {
            st.moreAsked = true;
            return new More(st);
        }
        return null;
    }

    private final Caller caller;
    private final Consumer<ByteBuffer> release;
    private final ArrayDeque<FetchBlock> pending = new ArrayDeque<>();
    /** Admitted and not yet taken, in admission order. Consumer thread. */
    private final Map<FetchBlock, InFlight> admitted = new LinkedHashMap<>();
    private final LinkedBlockingQueue<Object> arrived = new LinkedBlockingQueue<>();
    /** Chunks turned away busy, by when to ask again. Consumer thread. */
    private final java.util.PriorityQueue<Retry> delayed =
        new java.util.PriorityQueue<>(java.util.Comparator.comparingLong(Retry::due));
    private final AtomicInteger reqsInFlight = new AtomicInteger();
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Set once any request failed: nothing more is sent (the consumer throws at its next take). */
    private volatile boolean failing;
    private final long maxBytesInFlight;
    private final int maxReqsInFlight;
    private final int chunkBytes;
    private final Duration timeout;
    private final BlockSizeLimit sizeLimit;
    private final int total;
    /** Blocks whose estimate is above this many bytes go to disk. */
    private final long toDiskBytes;
    private final BlockSpill spill;
    private int blocksToDisk;
    private long bytesToDisk;
    private long bytesInFlight;
    private int delivered;
    private long fetchWaitNanos;
    private long bytesFetched;
    private long maxBytesSeen;
    private int maxReqsSeen;
    private int retries;

    /**
     * Starts fetching: the first blocks within the bounds are requested at once.
     *
     * @param caller sends requests
     * @param release takes back the answer buffers the caller lent, each once
     * @param blocks the blocks, each of size at least 1; they are requested in this order
     * @param maxBytesInFlight bytes requested and not yet taken
     * @param maxReqsInFlight requests outstanding
     * @param chunkBytes the largest request
     * @param timeout the bound of each request
     */
    public BlockFetcher(Caller caller, Consumer<ByteBuffer> release, List<FetchBlock> blocks, long maxBytesInFlight,
                        int maxReqsInFlight, int chunkBytes, Duration timeout) {
        this(caller, release, blocks, maxBytesInFlight, maxReqsInFlight, chunkBytes, timeout,
            BlockSizeLimit.ABSOLUTE_ONLY);
    }

    /**
     * Starts fetching: the first blocks within the bounds are requested at once.
     *
     * @param caller sends requests
     * @param release takes back the answer buffers the caller lent, each once
     * @param blocks the blocks, each of size at least 1; they are requested in this order
     * @param maxBytesInFlight bytes requested and not yet taken
     * @param maxReqsInFlight requests outstanding
     * @param chunkBytes the largest request
     * @param timeout the bound of each request
     * @param sizeLimit the largest size a server may claim for a block, from its estimate
     */
    public BlockFetcher(Caller caller, Consumer<ByteBuffer> release, List<FetchBlock> blocks, long maxBytesInFlight,
                        int maxReqsInFlight, int chunkBytes, Duration timeout, BlockSizeLimit sizeLimit) {
        this(caller, release, blocks, maxBytesInFlight, maxReqsInFlight, chunkBytes, timeout, sizeLimit,
            Long.MAX_VALUE, null);
    }

    /**
     * Starts fetching: the first blocks within the bounds are requested at once.
     *
     * @param caller sends requests
     * @param release takes back the answer buffers the caller lent, each once
     * @param blocks the blocks, each of size at least 1; they are requested in this order
     * @param maxBytesInFlight bytes requested and not yet taken
     * @param maxReqsInFlight requests outstanding
     * @param chunkBytes the largest request
     * @param timeout the bound of each request
     * @param sizeLimit the largest size a server may claim for a block, from its estimate
     * @param toDiskBytes a block whose estimate is above this goes to a file (Spark's
     *                    {@code spark.network.maxRemoteBlockSizeFetchToMem}); {@link Long#MAX_VALUE}: never
     * @param spill makes those files (null only with {@code toDiskBytes} {@link Long#MAX_VALUE})
     */
    public BlockFetcher(Caller caller, Consumer<ByteBuffer> release, List<FetchBlock> blocks, long maxBytesInFlight,
                        int maxReqsInFlight, int chunkBytes, Duration timeout, BlockSizeLimit sizeLimit,
                        long toDiskBytes, BlockSpill spill) {
        if (toDiskBytes < Long.MAX_VALUE && spill == null) {
            throw new IllegalArgumentException("toDiskBytes=" + toDiskBytes + " needs a spill");
        }
        this.toDiskBytes = toDiskBytes;
        this.spill = spill;
        this.caller = caller;
        this.release = release;
        this.maxBytesInFlight = maxBytesInFlight;
        this.maxReqsInFlight = maxReqsInFlight;
        this.chunkBytes = chunkBytes;
        this.timeout = timeout;
        this.sizeLimit = sizeLimit;
        for (FetchBlock b : blocks) {
            if (b.size() < 1) {
                throw new IllegalArgumentException("block " + b.name() + " size=" + b.size() + " must be >= 1");
            }
            pending.add(b);
        }
        this.total = blocks.size();
        fill();
    }

    /**
     * @param b a block
     * @return the largest size its server may claim: {@link BlockSizeLimit#of} its estimate, and no more chunks than an
     *         {@code int} counts
     */
    private long limit(FetchBlock b) {
        return Math.min(sizeLimit.of(b.size()), (Integer.MAX_VALUE - 1L) * chunkBytes);
    }

    /** Admits blocks while the bounds allow, requesting every chunk of each at once. Consumer thread. */
    private void fill() {
        while (!pending.isEmpty() && !closed.get() && !failing) {
            FetchBlock b = pending.peek();
            int chunks = (int) ((Math.min(b.size(), limit(b)) + chunkBytes - 1) / chunkBytes);
            boolean disk = b.size() > toDiskBytes;
            if (disk) {
                chunks = Math.min(chunks, window());
            }
            int reqs = reqsInFlight.get();
            boolean idle = reqs == 0 && bytesInFlight == 0;
            long charge = disk ? (long) chunks * chunkBytes : held(b.size());
            if (!idle && (bytesInFlight + charge > maxBytesInFlight || (long) reqs + chunks > maxReqsInFlight)) {
                return;
            }
            pending.poll();
            InFlight st = new InFlight(b, chunks, disk);
            admitted.put(b, st);
            st.counted = charge;
            bytesInFlight += st.counted;
            maxBytesSeen = Math.max(maxBytesSeen, bytesInFlight);
            maxReqsSeen = Math.max(maxReqsSeen, reqs + chunks);
            send(st, 0, chunks);
        }
    }

    /** @return the chunks of a block to disk requested and not yet written at most */
    private int window() {
        return (int) Math.max(1, Math.min(maxReqsInFlight, maxBytesInFlight / chunkBytes));
    }

    /**
     * Writes a chunk of a block to disk and gives its buffer back; asks for the next chunks within the window.
     * Consumer thread.
     *
     * @return the whole block once its last chunk is written, a failure, or null
     */
    private Object write(Piece p) {
        InFlight st = p.state();
        ByteBuffer bytes = p.bytes();
        try {
            st.disk.write(bytes.duplicate().position(bytes.position() + FetchProtocol.ANSWER_HEADER),
                (long) p.index() * chunkBytes);
        } catch (IOException | RuntimeException e) {
            synchronized (st) {
                st.drop();
            }
            failing = true;
            return new Failed(st.block, "writing " + st.block.name() + " from executor " + st.block.executorId()
                + " to disk (" + (st.disk.file() != null ? st.disk.file() : "no file") + ") failed: " + e, e);
        } finally {
            giveBack(bytes);
        }
        int written = st.disk.written();
        int needed;
        long size;
        synchronized (st) {
            needed = st.needed();
            size = st.size;
            if (written == needed) {
                st.finished = true;
            }
        }
        if (written == needed) {
            Path file;
            try {
                file = st.disk.finish(); // the FetchedBlock's now
            } catch (IOException e) {
                failing = true;
                return new Failed(st.block, "closing " + st.disk.file() + " of " + st.block.name() + " failed: " + e,
                    e);
            }
            blocksToDisk++;
            bytesToDisk += size;
            return new FetchedBlock(st.block, file, size);
        }
        int to = Math.min(needed, written + window());
        if (to > st.requested) {
            int from = st.requested;
            st.requested = to;
            send(st, from, to);
        }
        return null;
    }

    /** Requests chunks {@code from .. to - 1} of a block. Consumer thread. */
    private void send(InFlight st, int from, int to) {
        for (int i = from; i < to && !failing && !closed.get(); i++) {
            long off = (long) i * chunkBytes;
            int index = i;
            call(st.block, off, chunkBytes).whenComplete((bytes, err) -> st.answered(index, off, chunkBytes, bytes,
                err));
        }
    }

    /**
     * Asks again for the chunks turned away busy whose pause is over (not for a chunk whose block is finished, or
     * lies past the block's size). Consumer thread.
     */
    private void sendDueRetries() {
        long now = System.nanoTime();
        Retry r;
        while ((r = delayed.peek()) != null && r.due() - now <= 0) {
            delayed.poll();
            InFlight st = r.state();
            boolean skip;
            synchronized (st) {
                skip = st.finished || st.size >= 0 && r.index() >= st.needed();
            }
            if (!skip && !failing && !closed.get()) {
                retries++;
                send(st, r.index(), r.index() + 1);
            }
        }
    }

    /** @return what a request's future failed with, without the {@link CompletionException} around it */
    private static Throwable unwrap(Throwable err) {
        return err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
    }

    /** @return true if the failure is the RPC server's answer that its handler queue is full */
    static boolean busy(Throwable err) {
        Throwable c = unwrap(err);
        return c instanceof io.rdmx.rpc.RemoteRpcException r && io.rdmx.rpc.RpcConfig.BUSY_CLASS.equals(r.className());
    }

    private CompletableFuture<ByteBuffer> call(FetchBlock b, long off, int len) {
        reqsInFlight.incrementAndGet();
        CompletableFuture<ByteBuffer> f;
        try {
            f = caller.call(b.address(), FetchProtocol.request(b.shuffleId(), b.mapId(), b.reduceId(),
                b.endReduceId(), off, len), timeout);
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        return f.whenComplete((bytes, err) -> reqsInFlight.decrementAndGet());
    }

    /**
     * What a block of this many bytes holds while it is in flight: whole chunks, since every answer lands in a
     * buffer of a chunk (the lender's pool has one size), so a block of 2 KB holds as much as one of a chunk.
     * Counting estimates instead let thousands of small blocks in, each holding a chunk-sized buffer.
     *
     * @param bytes the block's (estimated or exact) size
     * @return bytes counted against {@code maxBytesInFlight}
     */
    private long held(long bytes) {
        return Math.max(1, (bytes + chunkBytes - 1) / chunkBytes) * chunkBytes;
    }

    /** Gives a lent answer buffer back (null: none). Any thread. */
    private void giveBack(ByteBuffer answer) {
        if (answer != null) {
            release.accept(answer);
        }
    }

    /**
     * Gives back a block's buffers, once (later calls do nothing). Consumer thread, when it is done reading it.
     *
     * @param f a block {@link #next()} returned
     */
    public void release(FetchedBlock f) {
        if (f != null) {
            f.release(this::giveBack);
        }
    }

    /** Gives back the whole blocks queued for the consumer. */
    private void drainArrived() {
        Object o;
        while ((o = arrived.poll()) != null) {
            if (o instanceof FetchedBlock f) {
                release(f);
            } else if (o instanceof Piece p) {
                giveBack(p.bytes());
            }
        }
    }

    /** @return null if the answer is good, else the failure to hand over */
    private Failed check(FetchBlock b, long off, int len, ByteBuffer bytes, Throwable err) {
        if (err != null) {
            Throwable cause = unwrap(err);
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

    /** Requests the chunks of a block its estimate did not cover, and counts its exact size. Consumer thread. */
    private void sendMore(InFlight st) {
        int from;
        int to;
        long size;
        synchronized (st) {
            if (st.finished) {
                return;
            }
            from = st.requested;
            to = st.needed();
            st.requested = to;
            size = st.size;
        }
        if (held(size) > st.counted) {
            bytesInFlight += held(size) - st.counted;
            st.counted = held(size);
            maxBytesSeen = Math.max(maxBytesSeen, bytesInFlight);
        }
        maxReqsSeen = Math.max(maxReqsSeen, reqsInFlight.get() + to - from);
        send(st, from, to);
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
    public FetchedBlock next() throws BlockFetchException, InterruptedException {
        if (!hasNext()) {
            throw new NoSuchElementException("all " + total + " blocks were handed over");
        }
        if (closed.get()) {
            throw new IllegalStateException("block fetcher closed");
        }
        fill();
        Object o;
        long deadline = System.nanoTime() + timeout.plus(GRACE).toNanos();
        while (true) {
            sendDueRetries();
            long t0 = System.nanoTime();
            long wait = deadline - t0;
            Retry first = delayed.peek();
            if (first != null) {
                wait = Math.min(wait, first.due() - t0); // wake for the next retry that comes due
            }
            o = wait > 0 ? arrived.poll(wait, TimeUnit.NANOSECONDS) : arrived.poll();
            fetchWaitNanos += System.nanoTime() - t0;
            if (o == null && !delayed.isEmpty() && System.nanoTime() - deadline < 0) {
                continue; // a retry came due
            }
            if (o instanceof More more) {
                sendMore(more.state());
            } else if (o instanceof Retry r) {
                delayed.add(r);
            } else if (!(o instanceof Piece p) || (o = write(p)) != null) {
                break; // a block, a failure, or nothing in time; else a chunk written to disk
            }
            deadline = System.nanoTime() + timeout.plus(GRACE).toNanos(); // progress: the wait starts again
        }
        if (o == null) {
            FetchBlock b = admitted.isEmpty() ? pending.peek() : admitted.keySet().iterator().next();
            close();
            throw new BlockFetchException(b, "no block arrived within " + timeout.plus(GRACE).toMillis()
                + " ms (" + reqsInFlight.get() + " requests outstanding, " + delivered + " of " + total
                + " blocks taken)", null);
        }
        if (o instanceof Failed f) {
            close();
            throw new BlockFetchException(f.block(), f.message(), f.cause());
        }
        FetchedBlock got = (FetchedBlock) o;
        InFlight st = admitted.remove(got.block());
        delivered++;
        long actual = got.length();
        bytesInFlight -= st.counted;
        bytesFetched += actual;
        fill();
        return got;
    }

    /** @return blocks written to disk (above {@code toDiskBytes}) and handed over */
    public int blocksToDisk() {
        return blocksToDisk;
    }

    /** @return bytes of the blocks written to disk */
    public long bytesToDisk() {
        return bytesToDisk;
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

    /** @return chunks asked again because their server answered busy */
    public int retries() {
        return retries;
    }

    /** @return the most requests that were outstanding at once (counted when sent) */
    public int maxReqsSeen() {
        return maxReqsSeen;
    }

    /**
     * Stops: answers still to come are given back as they arrive, those held now at once (blocks the consumer took
     * are its to release). Idempotent. Consumer thread.
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            pending.clear();
            delayed.clear();
            for (InFlight st : admitted.values()) {
                synchronized (st) {
                    st.drop();
                }
            }
            drainArrived();
            for (InFlight st : admitted.values()) {
                st.deleteFile();
            }
        }
    }
}
