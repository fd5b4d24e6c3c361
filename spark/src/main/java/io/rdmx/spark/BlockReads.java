package io.rdmx.spark;

import io.rdmx.rpc.RemoteRpcException;
import io.rdmx.rpc.RpcConfig;
import io.rdmx.transport.Access;
import io.rdmx.transport.Completion;
import io.rdmx.transport.Connection;
import io.rdmx.transport.Node;
import io.rdmx.transport.Post;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Region;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.WorkRequest;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The reading side of block fetch by one-sided READ, on one provider: a node of its own (its completion queue
 * drained by one thread here, not by a channel engine), connected to the peers' READ nodes
 * ({@link MapOutputGrants}), and a pool of registered buffers the READs land in. A READ's answer looks like a
 * fetch answer ({@link FetchProtocol}: the size, big-endian, then the bytes), so the {@link BlockFetcher} takes it
 * as it takes an RPC answer, and gives its buffer back through {@link #release}.
 *
 * <p>A READ whose future has completed already (timed out) keeps its buffer until its completion comes (or the
 * node closes): no later READ lands in a buffer a consumer reads. Thread-safe.
 */
final class BlockReads implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(BlockReads.class);

    /** A registered buffer and its big-endian view (the one handed out: its identity finds the region). */
    private record Slot(Region region, ByteBuffer view) {
    }

    private record Pending(Slot slot, int length, CompletableFuture<ByteBuffer> future, String what) {
    }

    private final Node node;
    private final int bufferSize;
    private final ArrayBlockingQueue<Slot> free;
    private final Map<ByteBuffer, Slot> lent = new IdentityHashMap<>();
    private final Map<Long, Pending> pending = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();
    private final AtomicLong reads = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();
    private final Thread poller;
    private volatile boolean closed;

    /**
     * @param node the node READs are posted from, taken by this object (closed with it)
     * @param bufferSize bytes of each buffer: the largest answer, header included
     * @param keep buffers kept for reuse at most
     */
    BlockReads(Node node, int bufferSize, int keep) {
        this.node = node;
        this.bufferSize = bufferSize;
        this.free = new ArrayBlockingQueue<>(keep);
        this.poller = new Thread(this::poll, "blocks-fetch-reads-" + node.name());
        poller.setDaemon(true);
        poller.start();
    }

    /** @return the node's name (location requests carry it) */
    String nodeName() {
        return node.name();
    }

    /** @return the provider */
    String provider() {
        return node.fabric().name();
    }

    private void poll() {
        while (!closed) {
            try {
                node.completionQueue().await(this::completed, 64, 100, TimeUnit.MILLISECONDS);
            } catch (RdmxException e) {
                return; // closed
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                LOG.error("rdmx shuffle: READ completions of node {}", node.name(), e);
            }
        }
    }

    private void completed(Completion c) {
        Pending p = pending.remove(c.wrId());
        if (p == null) {
            return;
        }
        if (c.ok()) {
            ByteBuffer v = p.slot().view().clear().limit(FetchProtocol.ANSWER_HEADER + p.length());
            if (!p.future().complete(v)) {
                release(v); // timed out meanwhile: nobody reads it
            }
            reads.incrementAndGet();
            bytes.addAndGet(p.length());
        } else {
            release(p.slot().view());
            p.future().completeExceptionally(new IOException("READ of " + p.what() + " failed: "
                + c.error().getMessage()));
        }
    }

    /**
     * Connects to a peer's READ node (or returns the connection), blocking up to the timeout.
     *
     * @param address the peer's READ node
     * @param timeout the bound
     * @return the connection
     * @throws RdmxException if it cannot be reached
     */
    Connection connect(String address, Duration timeout) throws RdmxException {
        return node.connect(address, timeout);
    }

    /**
     * READs part of a block into a pooled buffer, as a fetch answer.
     *
     * @param via the connection to the peer's READ node
     * @param src the map output's region
     * @param srcOffset where the part starts in it
     * @param size the block's exact size (the answer's header)
     * @param length bytes to read (0: the header alone)
     * @param what the block and the peer, for errors
     * @param timeout the bound of the READ (its buffer is kept until its completion comes, even after)
     * @return the answer, its buffer to {@link #release} once read
     */
    CompletableFuture<ByteBuffer> read(Connection via, RemoteRegion src, long srcOffset, long size, int length,
                                       String what, Duration timeout) {
        if (closed) {
            return CompletableFuture.failedFuture(new IllegalStateException("rdmx shuffle READs closed"));
        }
        Slot s;
        try {
            s = take();
        } catch (RdmxException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        ByteBuffer v = s.view();
        v.clear();
        v.putLong(0, size);
        CompletableFuture<ByteBuffer> f = new CompletableFuture<>();
        if (length == 0) {
            f.complete(v.limit(FetchProtocol.ANSWER_HEADER));
            return f;
        }
        long id = ids.incrementAndGet();
        pending.put(id, new Pending(s, length, f, what));
        int posted;
        try {
            posted = via.post(WorkRequest.read(s.region(), FetchProtocol.ANSWER_HEADER, length, src, srcOffset)
                .wrId(id));
        } catch (RdmxException | RuntimeException e) {
            pending.remove(id);
            release(v);
            return CompletableFuture.failedFuture(new IOException("READ of " + what + " failed to post: " + e, e));
        }
        if (posted != Post.OK) {
            pending.remove(id);
            release(v);
            // a full send queue is the READ's "busy": the fetcher asks again after a pause, as for a busy server
            return CompletableFuture.failedFuture(new RemoteRpcException(via.peerName(), RpcConfig.BUSY_CLASS,
                "READ of " + what + ": " + Post.name(posted)));
        }
        return f.orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    private Slot take() throws RdmxException {
        Slot s = free.poll();
        if (s == null) {
            Region r = node.register(bufferSize, Access.LOCAL_WRITE);
            s = new Slot(r, r.buffer().order(ByteOrder.BIG_ENDIAN));
        }
        synchronized (lent) {
            lent.put(s.view(), s);
        }
        return s;
    }

    private void giveBack(Slot s) {
        if (closed || !free.offer(s)) {
            s.region().release();
        }
    }

    /**
     * Gives back a buffer a READ answered with, once.
     *
     * @param b the buffer
     * @return false if it is not one of these (the caller gives it back elsewhere)
     */
    boolean release(ByteBuffer b) {
        Slot s;
        synchronized (lent) {
            s = lent.remove(b);
        }
        if (s == null) {
            return false;
        }
        giveBack(s);
        return true;
    }

    /** @return READs completed */
    long reads() {
        return reads.get();
    }

    /** @return bytes READ */
    long bytesRead() {
        return bytes.get();
    }

    /** Releases the pooled buffers and closes the node (outstanding READs fail, flushed). Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        List<Slot> all = new ArrayList<>();
        free.drainTo(all);
        synchronized (lent) {
            all.addAll(lent.values());
            lent.clear();
        }
        for (Pending p : pending.values()) {
            p.future().completeExceptionally(new IOException("READ of " + p.what() + ": executor stopping"));
        }
        pending.clear();
        for (Slot s : all) {
            s.region().release();
        }
        node.close();
        try {
            poller.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
