package io.rdmx.spark;

import java.nio.ByteBuffer;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The off-heap buffers an executor's fetched blocks land in: one per fetch answer, of one size (the largest answer
 * plus its header), reused from task to task.
 *
 * <p>Why not the heap: a reduce task holds its fetched blocks for seconds (as long as it takes to deserialize and
 * aggregate them), up to {@code spark.rdmx.maxBytesInFlight} at once. In heap arrays they outlived young
 * collections and filled the old generation: in GroupBy (20M pairs, two 1 GiB executors) G1's concurrent threads
 * used 0.9-3.6 s more CPU with rdmx than with Spark's default shuffle, whose Netty client keeps fetched blocks
 * off the heap too.
 *
 * <p>Bounded: a task's fetcher holds at most {@code maxBytesInFlight} plus the block its task reads; buffers come
 * back when the task is done with a block ({@link BlockFetcher#release}) and this pool keeps at most
 * {@code keep} of them for reuse (more are left to the garbage collector, which frees their memory). Thread-safe:
 * buffers are taken on the RPC client's reader thread and given back on task threads.
 */
final class BlockBuffers {
    private final int size;
    private final ArrayBlockingQueue<ByteBuffer> free;
    private final AtomicLong allocated = new AtomicLong();

    /**
     * @param size bytes of each buffer: the largest answer, header included
     * @param keep buffers kept for reuse at most
     */
    BlockBuffers(int size, int keep) {
        if (size < 1 || keep < 1) {
            throw new IllegalArgumentException("block buffers size=" + size + " keep=" + keep + " must be >= 1");
        }
        this.size = size;
        this.free = new ArrayBlockingQueue<>(keep);
    }

    /**
     * Copies an answer out of the ring into a buffer of this pool (a heap copy if it is larger than the pool's
     * buffers: such an answer is malformed and is refused by its check, then released).
     *
     * @param body the answer, from its position to its limit (position unchanged)
     * @return a buffer whose remaining bytes are a copy of the answer, to {@link #release} once read
     */
    ByteBuffer copyOf(ByteBuffer body) {
        int n = body.remaining();
        ByteBuffer b = n <= size ? take() : ByteBuffer.allocate(n);
        b.put(body.duplicate()).flip();
        return b;
    }

    private ByteBuffer take() {
        ByteBuffer b = free.poll();
        if (b == null) {
            allocated.incrementAndGet();
            return ByteBuffer.allocateDirect(size);
        }
        return b.clear();
    }

    /**
     * Gives a buffer back (a buffer not from this pool is ignored). Once only per {@link #copyOf}.
     *
     * @param b the buffer
     */
    void release(ByteBuffer b) {
        if (b != null && b.isDirect() && b.capacity() == size) {
            free.offer(b.clear());
        }
    }

    /** @return buffers allocated so far (a measure of how well they are reused) */
    long allocated() {
        return allocated.get();
    }

    /** @return buffers waiting for reuse */
    int pooled() {
        return free.size();
    }

    /** @return bytes of each buffer */
    int size() {
        return size;
    }
}
