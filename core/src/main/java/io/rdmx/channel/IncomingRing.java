package io.rdmx.channel;

import io.rdmx.transport.internal.Sleeper;
import io.rdmx.transport.RdmxException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The incoming circular buffer from one remote worker to one local worker: written by the peer's WRITEs, its
 * head moved by the network thread on each data notification, read by the local worker's
 * {@link ChannelReader}, which reports consumption (credits) after {@link ChannelConfig#readNotifyThreshold()}.
 *
 * <p>Mapped ({@link SharedRing}): the peer's writer claims records here itself; the reader takes the head from
 * shared memory ({@link #pollMapped()}) and publishes its credit there, ringing the writer's doorbell only if
 * the writer sleeps.
 */
final class IncomingRing implements Notifier.Notifiable, RingBuffer.Handler, RecordSource {
    final PeerChannel peer;
    final int index;
    final int peerWorker;
    final int localWorker;
    final RingBuffer ring;
    final AtomicBoolean queuedForReader = new AtomicBoolean();
    private final AtomicBoolean queued = new AtomicBoolean();
    private final AtomicLong pendingCredit = new AtomicLong(-1);
    private final int creditThreshold;
    /**
     * WRITE path: a credit may wait for the next notification to the peer ({@link Notifier#markLazily}) while the
     * one before it was carried already; see {@link #read}.
     */
    private final boolean lazyCredits;
    /** Reader thread: a credit was queued lazily and this ring is in its reader's list ({@link #sendLazyCredit}). */
    boolean lazyQueued;
    private final SharedRing shared;
    private long credited;
    private RecordHandler handler;
    /** Reader thread: the writer's end of stream was read; anything after it is the peer's error. */
    private boolean ended;
    /** Reader thread: what the read threw came from the handler (not from the ring or its memory). */
    private boolean handlerThrew;
    /**
     * Reader thread: the reader reported the loss of this ring's peer and let go of the ring; its memory may be
     * released, so the reader drops it unread if it still finds it in its ready queue.
     */
    boolean dropped;

    IncomingRing(PeerChannel peer, int index, int peerWorker, int localWorker, ByteBuffer memory, ChannelConfig cfg,
                 SharedRing shared) {
        this.peer = peer;
        this.index = index;
        this.peerWorker = peerWorker;
        this.localWorker = localWorker;
        this.ring = new RingBuffer(memory, cfg.maxRecordPayload());
        this.creditThreshold = cfg.readNotifyThreshold();
        this.shared = shared;
        this.lazyCredits = shared == null;
    }

    /** @return the shared words of a mapped ring, or null */
    SharedRing shared() {
        return shared;
    }

    /**
     * Reader thread, mapped rings: takes the writer's published head (acquire load) into the local ring.
     *
     * @return true if published data is unread
     */
    boolean pollMapped() {
        long h = shared.headAcquire();
        long local = ring.headAcquire();
        if (h != local) {
            long t = ring.tailAcquire();
            if (h < local || h - t > ring.capacity()) {
                peer.fail(new RdmxException("peer '" + peer.name() + "' published head=" + h + " in ring=" + index
                    + " (head before=" + local + ", consumed=" + t + ", capacity=" + ring.capacity() + ")"));
                return false;
            }
            ring.headRelease(h);
        }
        return h > ring.tailAcquire();
    }

    /**
     * Network thread: data up to this position has landed.
     *
     * @param position the new head
     * @return false if the position is impossible (beyond one ring of unconsumed data)
     */
    boolean onData(long position) {
        long h = ring.headAcquire();
        if (position <= h) {
            return true;
        }
        if (position - ring.tailAcquire() > ring.capacity()) {
            return false;
        }
        ring.headRelease(position);
        return true;
    }

    /** @return true if published data is unread */
    boolean hasData() {
        return ring.headAcquire() > ring.tailAcquire();
    }

    /**
     * Reader thread: hands records over and sends a credit when enough was consumed.
     *
     * @param h the handler
     * @param limit most records
     * @return records read
     */
    int read(RecordHandler h, int limit) {
        handler = h;
        int n;
        try {
            n = ring.read(this, limit);
        } catch (RuntimeException | Error e) {
            if (handlerThrew || !(e instanceof IllegalStateException)) {
                handlerThrew = false;
                throw e; // the handler's: its caller sees it, and the record it was handling comes again
            }
            // the ring itself: nothing more can be read from it, and nothing is left to read (the reader's queue
            // would hand it back at once, for ever)
            ring.tailRelease(ring.headAcquire());
            RingSet rs = peer.rings();
            if (rs != null && !rs.live()) {
                // the node closed and released the ring's memory under the reader (verbs: the arena's accesses
                // now throw); the reader reports the closure (its peers fail with it)
                return 0;
            }
            // a corrupt ring (a header no writer of ours writes): the peer broke the protocol and fails, named,
            // as for an impossible position; its other rings and the other peers go on
            peer.fail(new RdmxException("peer '" + peer.name() + "' worker " + peerWorker + ": " + e.getMessage()
                + " (ring=" + index + ")"));
            return 0;
        } finally {
            handler = null;
        }
        long t = ring.tailAcquire();
        if (t - credited >= creditThreshold) {
            credited = t;
            // WRITE path: the credit message; mapped: the writer sleeps for space, wake it (futex or doorbell)
            long taken = shared == null ? SharedRing.PARKED_DOORBELL : shared.publishCredit(t);
            int parked = SharedRing.kind(taken);
            if (parked == SharedRing.AWAKE) {
                return n;
            }
            if (parked == SharedRing.PARKED_FUTEX && Sleeper.futexes()) {
                SharedRing.wakeByFutex(parked, shared.writerParkedAddress());
                peer.engine().counters.futexWake();
            } else if (parked == SharedRing.PARKED_BELL && peer.ringBell(SharedRing.bellSlot(taken))) {
                peer.engine().counters.bellWake();
            } else if (pendingCredit.getAndSet(t) < 0 && lazyCredits) {
                // the credit before this one went out (a notification drained it): this one rides on the next
                // notification to the peer (a data notification of a writer here, one system call with its WRITE)
                // instead of a SEND of its own. It goes at the latest when the reader next finds nothing to read
                // (ChannelReader.poll: the writer may be waiting for exactly this space), when the next threshold
                // finds it still pending (the writer never misses more than two thresholds), or at the engine's
                // scan and close (PeerChannel)
                lazyQueued = true;
                peer.notifier().markLazily(this);
            } else {
                peer.notifier().mark(this);
                if (shared != null) {
                    peer.engine().counters.doorbellWake();
                }
            }
        }
        return n;
    }

    /** Reader thread: sends the credit queued lazily, if still queued ({@link #read}). */
    void sendLazyCredit() {
        lazyQueued = false;
        peer.notifier().sendQueued();
    }

    @Override
    public void onRecord(int streamId, ByteBuffer buffer, int offset, int length) {
        if (ended) {
            afterEnd("a record");
            return;
        }
        try {
            handler.onRecord(streamId, buffer, offset, length, this);
        } catch (RuntimeException | Error e) {
            handlerThrew = true;
            throw e;
        }
    }

    @Override
    public void onEndOfStream() {
        if (ended) {
            afterEnd("a second end of stream");
            return;
        }
        ended = true;
        try {
            handler.onEndOfStream(this);
        } catch (RuntimeException | Error e) {
            handlerThrew = true;
            throw e;
        }
    }

    /** A broken peer wrote past its writer's end of stream: fails it (the record is not delivered). */
    private void afterEnd(String what) {
        peer.fail(new RdmxException("peer '" + peer.name() + "' worker " + peerWorker + " wrote " + what
            + " after its end of stream (ring=" + index + ")"));
    }

    @Override
    public String peerName() {
        return peer.name();
    }

    @Override
    public PeerChannel peerChannel() {
        return peer;
    }

    @Override
    public int peerWorker() {
        return peerWorker;
    }

    @Override
    public AtomicBoolean queued() {
        return queued;
    }

    @Override
    public int drainInto(ByteBuffer b, int at, int i) {
        long p = pendingCredit.getAndSet(-1);
        if (p < 0) {
            return 0;
        }
        NotificationDescriptor.entry(b, at, i, NotificationDescriptor.KIND_CREDIT, index, p);
        return 1;
    }
}
