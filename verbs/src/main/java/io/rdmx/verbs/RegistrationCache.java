package io.rdmx.verbs;

import io.rdmx.transport.Access;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.internal.AbstractNode.Allocation;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Memory registration with a cache. {@code ibv_reg_mr} pins pages and costs a system call, so released regions
 * that peers cannot reach (neither {@link Access#REMOTE_WRITE} nor {@link Access#REMOTE_READ}) keep their
 * registration and are handed out again, zeroed, to the next request of the same length. Remotely writable or
 * readable regions are always deregistered when released, so their remote key dies at once and a late WRITE or READ
 * from a peer is refused by the hardware.
 *
 * <p>The registration kept is the memory's home one, in the node's protection domain; the registrations in the
 * connections' domains ({@link Registrations}) are made per allocation and dropped at its release.
 *
 * <p>Bounded by {@value #BYTES_PROP} bytes (default 64 MiB); emptied when the node closes.
 */
public final class RegistrationCache {
    /** System property: bytes of released registrations kept for reuse. */
    public static final String BYTES_PROP = "rdmx.verbs.regCacheBytes";
    private static final long LIMIT = Long.getLong(BYTES_PROP, 64L << 20);

    private record Entry(Arena arena, MemorySegment memory, MemorySegment mr) {
    }

    private final VerbsNode node;
    private final Map<Long, ArrayDeque<Entry>> free = new HashMap<>();
    private long cachedBytes;
    private boolean closed;
    private final AtomicLong hits = new AtomicLong();
    private final AtomicLong registrations = new AtomicLong();

    RegistrationCache(VerbsNode node) {
        this.node = node;
    }

    Allocation allocate(int length, int access) throws RdmxException {
        boolean cacheable = (access & (Access.REMOTE_WRITE | Access.REMOTE_READ)) == 0;
        if (cacheable) {
            Entry e = take(length);
            if (e != null) {
                hits.incrementAndGet();
                e.memory().fill((byte) 0);
                return allocation(e, access, true);
            }
        }
        Arena arena = Arena.ofShared();
        MemorySegment mem;
        MemorySegment mr;
        try {
            mem = arena.allocate(length, 4096);
            mr = node.register(mem, access);
        } catch (RdmxException | RuntimeException e) {
            arena.close();
            throw e;
        }
        registrations.incrementAndGet();
        return allocation(new Entry(arena, mem, mr), access, cacheable);
    }

    private Allocation allocation(Entry e, int access, boolean cacheable) {
        // the registrations in the connections' protection domains are per allocation: a reused entry starts afresh
        Registrations regs = new Registrations(node, e.memory(), access, null, false);
        Runnable release = () -> {
            regs.release();
            if (!cacheable || !offer(e)) {
                node.deregister(e.mr());
                e.arena().close();
            }
        };
        return new Allocation(e.memory().asByteBuffer(), release, e.memory().address(), VerbsNode.localKey(e.mr()),
            VerbsNode.remoteKey(e.mr()), regs);
    }

    private synchronized Entry take(long length) {
        ArrayDeque<Entry> q = free.get(length);
        Entry e = q == null ? null : q.pollFirst();
        if (e != null) {
            cachedBytes -= length;
        }
        return e;
    }

    private synchronized boolean offer(Entry e) {
        long len = e.memory().byteSize();
        if (closed || cachedBytes + len > LIMIT) {
            return false;
        }
        free.computeIfAbsent(len, k -> new ArrayDeque<>()).addLast(e);
        cachedBytes += len;
        return true;
    }

    /** @return how many allocations were served from the cache */
    public long hits() {
        return hits.get();
    }

    /** @return how many times {@code ibv_reg_mr} was called for regions */
    public long registrations() {
        return registrations.get();
    }

    /** @return bytes of registered memory waiting for reuse */
    public synchronized long cachedBytes() {
        return cachedBytes;
    }

    /** Deregisters everything cached; later releases deregister at once. */
    synchronized void close() {
        closed = true;
        for (ArrayDeque<Entry> q : free.values()) {
            for (Entry e : q) {
                node.deregister(e.mr());
                e.arena().close();
            }
        }
        free.clear();
        cachedBytes = 0;
    }
}
