package io.rdmx.channel;

import io.rdmx.transport.Access;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Region;
import io.rdmx.transport.RemoteRegion;
import java.nio.ByteBuffer;

/**
 * The rings between this node and one peer, both directions, in one registered pair region laid out by
 * {@link PairLayout}: the incoming rings (the peer's writers WRITE or, mapped, claim into them) exist from our
 * side of the handshake on; the outgoing writers from the peer's REGION on ({@link #connect}). Built by
 * {@link PeerHandshake}, used by {@link PeerChannel} to route completions and notifications.
 */
final class RingSet {
    private final PeerChannel peer;
    private final ChannelConfig cfg;
    private final boolean low;
    private final int peerWorkers;
    private final PairLayout layout;
    private final boolean mapped;
    private final Region pair;
    private final IncomingRing[] in;
    /** The writers, once the peer's REGION came: published to writer threads by the channel's ready future. */
    private volatile ChannelWriter[] out;

    /** Ring memory reserved for this peer in its engine ({@link RingMemory#reserve}). */
    private final long reserved;
    /** Set once {@link #release} gave {@link #reserved} back. */
    private boolean memoryReturned;

    /**
     * Registers the pair region and builds the incoming rings; mapped rings are handed to their readers, which
     * scan them from now on (the peer may write as soon as it has our REGION).
     *
     * @param peer the channel
     * @param low whether this node's name sorts first (its rings come first in the layout)
     * @param peerWorkers the peer's worker count
     * @param mapped whether records go straight into mapped memory (both HELLOs said so)
     * @throws RdmxException the region cannot be registered
     */
    RingSet(PeerChannel peer, boolean low, int peerWorkers, boolean mapped) throws RdmxException {
        ChannelEngine engine = peer.engine();
        this.peer = peer;
        this.cfg = engine.config();
        this.low = low;
        this.peerWorkers = peerWorkers;
        this.mapped = mapped;
        int workers = cfg.workers();
        int capacity = cfg.ringCapacity();
        this.layout = new PairLayout(low ? workers : peerWorkers, low ? peerWorkers : workers, capacity, mapped);
        long bytes = layout.regionLength();
        if (bytes > cfg.maxPeerMemory()) {
            throw new RdmxException("peer '" + peer.name() + "' announced workers=" + peerWorkers + ": with workers="
                + workers + " here and ringCapacity=" + capacity + " its rings need " + bytes + " bytes, beyond "
                + ChannelConfig.MAX_PEER_MEMORY_PROP + "=" + cfg.maxPeerMemory());
        }
        engine.ringMemory.reserve(peer.name(), bytes);
        try {
            // granted to this peer alone: its key is honoured on this connection only and never listed at setup
            this.pair = peer.connection().register(layout.regionLength(), Access.ALL);
        } catch (RdmxException | RuntimeException | OutOfMemoryError e) {
            engine.ringMemory.release(bytes);
            if (e instanceof OutOfMemoryError) {
                // direct memory ran out: this peer fails, the node and its other peers go on
                throw new RdmxException("cannot allocate " + bytes + " bytes of rings for peer '" + peer.name()
                    + "' at node '" + engine.node().name() + "': " + e.getMessage(), e);
            }
            throw e;
        }
        this.reserved = bytes;
        this.in = new IncomingRing[workers * peerWorkers];
        for (int b = 0; b < peerWorkers; b++) {
            for (int a = 0; a < workers; a++) {
                int idx = layout.ringIndex(!low, b, a);
                ByteBuffer mem = pair.buffer();
                int off = layout.offset(!low, idx);
                mem.position(off).limit(off + capacity);
                SharedRing shared = mapped ? new SharedRing(pair.buffer(), layout.ringHeaderOffset(!low, idx),
                    layout.readerHeaderOffset(low, a)) : null;
                in[idx] = new IncomingRing(peer, idx, b, a, mem, cfg, shared);
            }
        }
        if (mapped) {
            for (int a = 0; a < workers; a++) {
                IncomingRing[] mine = new IncomingRing[peerWorkers];
                for (int b = 0; b < peerWorkers; b++) {
                    mine[b] = in[layout.ringIndex(!low, b, a)];
                }
                engine.reader(a).addMapped(mine);
            }
        }
    }

    /** @return the length the peer's pair region must have */
    int regionLength() {
        return layout.regionLength();
    }

    /** @return the descriptor of our pair region, for our REGION message */
    RemoteRegion descriptor() {
        return pair.descriptor();
    }

    /** @return true once the writers exist (the peer's REGION came) */
    boolean connected() {
        return out != null;
    }

    /**
     * Builds the writers into the peer's pair region.
     *
     * @param remotePair the peer's pair region
     * @param peerMemory the peer's pair region mapped here, or null (records go by WRITE)
     * @param window the WRITEs in flight per ring
     */
    void connect(RemoteRegion remotePair, ByteBuffer peerMemory, int window) {
        ChannelWriter[] o = new ChannelWriter[cfg.workers() * peerWorkers];
        for (int a = 0; a < cfg.workers(); a++) {
            for (int b = 0; b < peerWorkers; b++) {
                int idx = layout.ringIndex(low, a, b);
                SharedRing shared = peerMemory == null ? null : new SharedRing(peerMemory,
                    layout.ringHeaderOffset(low, idx), layout.readerHeaderOffset(!low, b));
                o[idx] = new ChannelWriter(peer, idx, b, pair, layout.offset(low, idx), remotePair, cfg,
                    peerMemory, shared, window);
            }
        }
        out = o;
    }

    /** @return true if records go straight into mapped memory */
    boolean mapped() {
        return mapped;
    }

    /** @return the peer's worker count */
    int peerWorkers() {
        return peerWorkers;
    }

    /** @return the ring count per direction */
    int rings() {
        return in.length;
    }

    /**
     * @param ring an incoming ring index, below {@link #rings()}
     * @return that ring
     */
    IncomingRing in(int ring) {
        return in[ring];
    }

    /**
     * @param localWorker the receiving worker here
     * @return the incoming rings of that worker, one per worker of the peer (a new array)
     */
    IncomingRing[] incomingOf(int localWorker) {
        IncomingRing[] mine = new IncomingRing[peerWorkers];
        for (int b = 0; b < peerWorkers; b++) {
            mine[b] = incoming(localWorker, b);
        }
        return mine;
    }

    /**
     * @param localWorker the receiving worker here
     * @param peerWorker the writing worker of the peer
     * @return the incoming ring between them
     */
    IncomingRing incoming(int localWorker, int peerWorker) {
        return in[layout.ringIndex(!low, peerWorker, localWorker)];
    }

    /**
     * @param localWorker the writing worker here, checked by the caller
     * @param remoteWorker the receiving worker of the peer, checked by the caller
     * @return the writer between them, or null before {@link #connect}
     */
    ChannelWriter writer(int localWorker, int remoteWorker) {
        ChannelWriter[] o = out;
        return o == null ? null : o[layout.ringIndex(low, localWorker, remoteWorker)];
    }

    /**
     * @param ring an outgoing ring index
     * @return its writer, or null before {@link #connect} or for a ring that does not exist
     */
    ChannelWriter out(int ring) {
        ChannelWriter[] o = out;
        return o == null || ring < 0 || ring >= o.length ? null : o[ring];
    }

    /** @return records and bytes committed by the writers */
    long[] written() {
        long[] sum = new long[2];
        ChannelWriter[] o = out;
        if (o != null) {
            for (ChannelWriter w : o) {
                sum[0] += w.recordsWritten();
                sum[1] += w.bytesWritten();
            }
        }
        return sum;
    }

    /** Flushes every writer. */
    void flushAll() {
        ChannelWriter[] o = out;
        if (o != null) {
            for (ChannelWriter w : o) {
                w.flush();
            }
        }
    }

    /** @return true when every writer's data was delivered and announced */
    boolean quiet() {
        ChannelWriter[] o = out;
        if (o != null) {
            for (ChannelWriter w : o) {
                if (!w.quiet()) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Network thread: time-bound flush of idle unsent data. */
    void scan() {
        ChannelWriter[] o = out;
        if (o != null) {
            for (ChannelWriter w : o) {
                w.scan();
            }
        }
    }

    /** @return true if a writer to this peer has committed data not yet posted (network thread, {@link EngineIdle}) */
    boolean anyUnposted() {
        ChannelWriter[] o = out;
        if (o != null) {
            for (ChannelWriter w : o) {
                if (w.hasUnposted()) {
                    return true;
                }
            }
        }
        return false;
    }

    /** @return true if a writer to this peer committed between the last two scans or has unposted data */
    boolean anyActive() {
        ChannelWriter[] o = out;
        if (o != null) {
            for (ChannelWriter w : o) {
                if (w.movedAtLastScan() || w.hasUnposted()) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Wakes every blocked writer (the peer went down). */
    void wakeWriters() {
        ChannelWriter[] o = out;
        if (o != null) {
            for (ChannelWriter w : o) {
                w.wake();
            }
        }
    }

    /**
     * @return false once the pair region was released (the engine's close, or the node's: its memory may be gone,
     *         on verbs an FFM arena whose every access then throws)
     */
    boolean live() {
        return pair.refCnt() > 0;
    }

    /**
     * Closes the writers' sleepers and releases the pair region and its ring memory: the peer failed and nothing
     * holds them any more, or the engine closes. Once ({@link PeerChannel#release}).
     */
    void release() {
        ChannelWriter[] o = out;
        if (o != null) {
            for (ChannelWriter w : o) {
                w.closeSleeper();
            }
        }
        PeerChannel.releaseQuietly(pair);
        if (!memoryReturned) {
            memoryReturned = true;
            peer.engine().ringMemory.release(reserved);
        }
    }
}
