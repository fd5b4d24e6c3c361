package io.rdmx.channel;

import io.rdmx.transport.capability.InputFollowing;
import io.rdmx.transport.internal.Sleeper;
import io.rdmx.transport.internal.WaitLoop;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.Post;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RdmxTimeoutException;
import io.rdmx.transport.Region;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.WorkRequest;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The outgoing circular buffer from one local worker to one remote worker. One writer thread at a time.
 *
 * <p>The writer serializes records straight into the buffer ({@link #tryClaim} / {@link #commit()}). Once
 * {@link ChannelConfig#batchThreshold()} bytes wait, or on {@link #flush()}, the writer posts the WRITE of the
 * unsent range itself, to the same offsets of the peer's mirror buffer, while fewer than the window's WRITEs of
 * this buffer are in flight ({@link ChannelConfig#writesInFlight()}); with the window full the thread that learns
 * of a completion posts the rest. Free space is computed from the last
 * credit heard of; a writer with no space blocks (parks) until a credit arrives, the peer fails, or a timeout.
 *
 * <p>Mapped ({@link SharedRing}, both ends can map each other's memory): the buffer IS the peer's incoming ring,
 * mapped in this process, so claim and commit write where the reader reads. Where the WRITE path posts a WRITE
 * ({@link ChannelConfig#mappedBatchThreshold()}, flush, flush interval), the mapped path publishes the head in shared memory (a release store) and
 * rings the reader's doorbell (a notification SEND) only if the reader sleeps. Free space comes from the
 * reader's credit in shared memory; a writer that must wait for space says so there, and the reader rings its
 * doorbell when it publishes a credit.
 *
 * <p>{@link #finish} ends the stream: an end-of-stream record ({@link RecordDescriptor#TYPE_END}) after the last
 * data, delivered to the reader's {@link RecordHandler#onEndOfStream}.
 */
public final class ChannelWriter implements Notifier.Notifiable {
    /** {@link #tryClaim} result: the buffer is full until the reader's credit arrives. */
    public static final int BACK_PRESSURED = -1;
    /** {@link #tryClaim} result: the peer connection is down. */
    public static final int CLOSED = -2;

    private final PeerChannel peer;
    private final int index;
    private final int peerWorker;
    private final RingBuffer ring;
    private final Region region;
    private final int base;
    private final RemoteRegion remote;
    private final long mask;
    /** Who posts the unsent range: the writer thread or, after a completion, the network thread. */
    private final SendGate gate;
    private final AtomicBoolean queued = new AtomicBoolean();
    private final AtomicLong pendingData = new AtomicLong(-1);
    /** The position the notifier last took ({@link #drainInto}); written and read by the notifier's holder. */
    private long drained = -1;
    private final WorkRequest first = new WorkRequest();
    private final WorkRequest last = new WorkRequest();
    private long records;
    private long bytes;
    private long scanHead = -1;
    /** Whether the head moved between the last two scans (the thread that scans only). */
    private boolean scanMoved = true;
    private final WaitLoop wait = new WaitLoop(this);
    private final Claim waiting;
    /** Writer thread: the flag value it parks with once known ({@link #parkValue()}), else 0. */
    private long parkValue;
    /** Writer thread: the end of stream was committed ({@link #finish}); nothing may be claimed after it. */
    private boolean finished;
    private volatile ChannelReader creditListener;
    /** The shared words of the peer's ring when mapped, else null. */
    private final SharedRing shared;

    ChannelWriter(PeerChannel peer, int index, int peerWorker, Region region, int base, RemoteRegion remote,
                  ChannelConfig cfg, ByteBuffer peerMemory, SharedRing shared, int window) {
        this.peer = peer;
        this.waiting = new Claim();
        this.index = index;
        this.peerWorker = peerWorker;
        this.region = region;
        this.base = base;
        this.remote = remote;
        int threshold = shared != null ? cfg.mappedBatchThreshold() : cfg.batchThreshold();
        this.gate = new SendGate(threshold, window, new SendGate.Sender() {
            @Override
            public long committedAcquire() {
                return ring.headAcquire();
            }

            @Override
            public boolean open() {
                return ChannelWriter.this.peer.isOpen();
            }

            @Override
            public boolean send(long from, long to) {
                if (ChannelWriter.this.shared == null) {
                    post(from, to);
                    return true;
                }
                publish(to);
                return false;
            }
        });
        this.shared = shared;
        ByteBuffer mem = shared != null ? peerMemory.duplicate() : region.buffer();
        mem.position(base).limit(base + cfg.ringCapacity());
        this.ring = new RingBuffer(mem, cfg.maxRecordPayload());
        if (shared != null && Sleeper.futexes()) {
            // a reader's FUTEX_WAKE on the writer-parked word ends a sleep
            wait.sleeper().sharedWords(new long[] {shared.writerParkedAddress()}, SharedRing.PARKED_FUTEX);
        }
        this.mask = cfg.ringCapacity() - 1;
        first.opcode(Opcode.WRITE).signaled(false);
        boolean imm = cfg.notification() == ChannelConfig.Notification.WRITE_WITH_IMM;
        // SEND mode: the WRITE stays unsignaled; the completion of the notification SEND that announces it
        // (posted after it on the same reliable connection) completes it too, saving a completion per WRITE.
        last.opcode(imm ? Opcode.WRITE_WITH_IMM : Opcode.WRITE).signaled(imm)
            .wrId(peer.wrId(WrIdDescriptor.KIND_WRITE, index));
    }

    /** @return the shared words of the peer's ring when mapped, else null (tests) */
    SharedRing shared() {
        return shared;
    }

    /** @return the ring in this node's pair region (tests) */
    RingBuffer ring() {
        return ring;
    }

    /**
     * Holds what is posted to this writer's peer from now until {@link #uncork} (this writer's WRITEs and those of
     * the other writers to the same peer), to hand it to the medium together: one system call on a socket
     * ({@link io.rdmx.transport.capability.Corking}). Nests; every cork needs its uncork, in a finally block, and
     * nothing may wait in between. A thread that flushes several rings to one peer calls it around the flushes.
     */
    public void cork() {
        if (shared == null) {
            peer.cork(); // a mapped ring posts nothing to hold
        }
    }

    /** @return whether {@link #cork} holds anything (false on a mapped ring: it posts nothing) */
    public boolean corks() {
        return shared == null;
    }

    /** Ends a {@link #cork}: at the last one, what it held goes out now. */
    public void uncork() {
        if (shared == null) {
            peer.uncork();
        }
    }

    /** @return the receiving node */
    public String peerName() {
        return peer.name();
    }

    /** @return the receiving worker */
    public int peerWorker() {
        return peerWorker;
    }

    /** @return the largest record payload */
    public int maxPayload() {
        return ring.maxPayload();
    }

    /** @return the buffer that {@link #tryClaim} indexes refer to (little endian) */
    public ByteBuffer buffer() {
        return ring.buffer();
    }

    /**
     * Reserves space for a record; write the payload at the returned index of {@link #buffer()}, then
     * {@link #commit()}.
     *
     * @param streamId the stream (0..65535)
     * @param length payload bytes, at most {@link #maxPayload()}
     * @return the payload index, {@link #BACK_PRESSURED} or {@link #CLOSED}
     * @throws IllegalStateException after {@link #finish} (names the peer and worker)
     */
    public int tryClaim(int streamId, int length) {
        return tryClaim(streamId, length, true);
    }

    /**
     * @param forListener whether a mapped writer out of space arms the writer-parked word for its credit
     *                    listener; not in {@link #claim}, which arms it for itself
     */
    private int tryClaim(int streamId, int length, boolean forListener) {
        if (finished) {
            throw finishedException();
        }
        if (!peer.isOpen()) {
            return CLOSED;
        }
        int at = ring.tryClaim(streamId, length);
        return at >= 0 ? at : shared != null ? tryClaimMappedOrBackPressured(streamId, length, forListener)
            : BACK_PRESSURED;
    }

    /**
     * Mapped, out of space by the credit last seen: takes the reader's published credit and tries again. With a
     * credit listener, a writer that still finds no space says it waits, so the reader rings when it frees some.
     */
    private int tryClaimMappedOrBackPressured(int streamId, int length, boolean forListener) {
        int at = tryClaimMapped(streamId, length, forListener);
        return at >= 0 ? at : BACK_PRESSURED;
    }

    private int tryClaimMapped(int streamId, int length, boolean forListener) {
        int at = refreshCredit() ? ring.tryClaim(streamId, length) : RingBuffer.INSUFFICIENT_SPACE;
        if (at >= 0 || !forListener || creditListener == null) {
            return at;
        }
        shared.writerParkedVolatile(SharedRing.PARKED_DOORBELL);
        at = refreshCredit() ? ring.tryClaim(streamId, length) : RingBuffer.INSUFFICIENT_SPACE;
        if (at >= 0) {
            shared.writerParkedVolatile(SharedRing.AWAKE);
        }
        return at;
    }

    /**
     * Mapped: the reader's published credit (acquire load) into the ring's tail.
     *
     * @return true if the tail moved
     */
    private boolean refreshCredit() {
        long c = shared.creditAcquire();
        if (c <= ring.tailAcquire()) {
            return false;
        }
        // bound by the committed head, not by sent: another thread may have published a head and not yet
        // recorded it in sent, and the reader may already have consumed it
        long committed = ring.headAcquire();
        if (c > committed) {
            peer.fail(new RdmxException("peer '" + peer.name() + "' published credit=" + c + " in ring=" + index
                + ", beyond what was written there (head=" + committed + ")"));
            return false;
        }
        ring.tailRelease(c);
        return true;
    }

    /**
     * Reserves space, blocking while the buffer is full (unsent data is flushed first so credits can come).
     *
     * @param streamId the stream
     * @param length payload bytes
     * @param timeout how long to wait for space
     * @param unit unit of timeout
     * @return the payload index
     * @throws ConnectionClosedException if the peer is gone (names it)
     * @throws RdmxTimeoutException if no space came in time
     * @throws InterruptedException if interrupted
     */
    public int claim(int streamId, int length, long timeout, TimeUnit unit)
        throws ConnectionClosedException, RdmxTimeoutException, InterruptedException {
        int at = tryClaim(streamId, length, false);
        // the fast path stays small enough to be inlined into the caller's loop; waiting is out of line
        return at >= 0 ? at : claimWaiting(streamId, length, timeout, unit, at);
    }

    /** {@link #claim} once the first try found no space ({@code at}: {@link #BACK_PRESSURED} or {@link #CLOSED}). */
    private int claimWaiting(int streamId, int length, long timeout, TimeUnit unit, int at)
        throws ConnectionClosedException, RdmxTimeoutException, InterruptedException {
        if (at == CLOSED) {
            throw peer.closedException();
        }
        ChannelReader.bindWorker(peer.engine());
        flush();
        long start = System.nanoTime();
        peer.engine().counters.writerBlocked();
        waiting.streamId = streamId;
        waiting.length = length;
        try {
            at = wait.await(waiting, start + unit.toNanos(timeout), peer.engine().config().spinsBeforePark(),
                ChannelReader.SPINS_PER_INPUT_LOOK);
            if (at == WaitLoop.NOT_YET) {
                throw new RdmxTimeoutException("no space in the buffer to '" + peer.name() + "' worker "
                    + peerWorker + " within " + unit.toMillis(timeout) + " ms (length=" + length + ")");
            }
            return at;
        } finally {
            peer.engine().counters.writerBlockedNanos(System.nanoTime() - start);
        }
    }

    /** The writer's wait for space ({@link #claimWaiting}): space, or the peer's loss, ends it. Writer thread. */
    private final class Claim implements WaitLoop.Waiting<ConnectionClosedException> {
        /** No network thread: the waiting thread runs the engine's duty cycle, and sleeps a little at a time. */
        private final boolean agent = !peer.engine().config().engineThread();
        private int streamId;
        private int length;

        @Override
        public int check() throws ConnectionClosedException {
            int at = tryClaim(streamId, length, false);
            if (at == CLOSED) {
                throw peer.closedException();
            }
            return at >= 0 ? at : WaitLoop.NOT_YET;
        }

        @Override
        public boolean work() throws ConnectionClosedException {
            try {
                return agent && peer.engine().doWork() > 0;
            } catch (RdmxException e) {
                throw peer.closedException();
            }
        }

        /** The engine's sole peer's socket, which brings the credits: a spinning writer reads it now and then. */
        @Override
        public InputFollowing spinInput() {
            return agent ? null : peer.engine().solePeer();
        }

        /**
         * Leader/follower: a writer out of space waits on the sole peer's socket, which brings the credits, and
         * handles what comes on its own thread, instead of sleeping until the I/O thread has read the credit and
         * woken it. The completions it reads (the ACK of the notification that covers its WRITEs) then post the
         * data committed meanwhile from this thread too: the writer, not the I/O thread, writes its own data, as a
         * blocking socket writer does. Only a sole peer's, as for the reader: a socket a follower held stays
         * unwatched by the I/O thread for up to {@code rdmx.io.followGraceMicros} after it, and beside other peers
         * no reader would take it over meanwhile. Not a mapped ring's writer: its credits come through shared
         * memory, and the reader's wake-up is a futex on the writer-parked word, which a wait on the socket would
         * not see.
         */
        @Override
        public InputFollowing followInput() {
            return shared == null ? spinInput() : null;
        }

        /** Hands the sole peer's socket back to the I/O thread if waiting threads hold it: this one will sleep. */
        @Override
        public boolean prepare() {
            InputFollowing sole = spinInput();
            return sole != null && sole.releaseInput() > 0;
        }

        /** (Re-)arms the shared writer-parked word (a wake-up disarms it) before the re-check. */
        @Override
        public void armed() {
            if (shared != null) {
                shared.writerParkedVolatile(parkValue());
            }
        }

        @Override
        public void disarmed() {
            if (shared != null) {
                shared.writerParkedVolatile(SharedRing.AWAKE);
            }
        }

        @Override
        public long sleepNanos(long remaining) {
            return agent ? Math.min(ChannelEngine.AGENT_SLEEP_NANOS, remaining) : remaining;
        }

        @Override
        public String waiter() {
            return "blocked writer to '" + peer.name() + "'";
        }
    }

    /**
     * Publishes the claimed record; posts a WRITE if the batching threshold is reached.
     *
     * @throws IllegalStateException if nothing is claimed
     */
    public void commit() {
        long before = ring.position();
        int len = ring.commit();
        // single-writer counters, read racily by metrics snapshots
        records++;
        bytes += len;
        gate.committed(ring.position());
        if (before == gate.postedEnd()) {
            // this commit left unposted data where there was none: an idle network thread must scan again
            peer.engine().kickIfIdle();
        }
    }

    /**
     * Gives the open claim up: nothing of it is published, and the next claim may start. For a writer whose
     * filling of a claimed record failed (a serializer that threw). No effect without an open claim.
     */
    public void abort() {
        ring.abort();
    }

    /** @return true if committed data is not posted yet (a scan would flush it) */
    boolean hasUnposted() {
        return ring.headAcquire() > gate.postedEnd();
    }

    /**
     * Copies a record in, blocking while the buffer is full.
     *
     * @param streamId the stream
     * @param src the payload (remaining bytes; position unchanged)
     * @param timeout how long to wait for space
     * @param unit unit
     * @throws ConnectionClosedException if the peer is gone
     * @throws RdmxTimeoutException if no space came in time
     * @throws InterruptedException if interrupted
     */
    public void write(int streamId, ByteBuffer src, long timeout, TimeUnit unit)
        throws ConnectionClosedException, RdmxTimeoutException, InterruptedException {
        int at = claim(streamId, src.remaining(), timeout, unit);
        ring.buffer().put(at, src, src.position(), src.remaining());
        commit();
    }

    /**
     * Copies a record in if there is space.
     *
     * @param streamId the stream
     * @param src the payload
     * @return true if written
     * @throws ConnectionClosedException if the peer is gone
     */
    public boolean offer(int streamId, ByteBuffer src) throws ConnectionClosedException {
        int at = tryClaim(streamId, src.remaining());
        if (at == CLOSED) {
            throw peer.closedException();
        }
        if (at < 0) {
            return false;
        }
        ring.buffer().put(at, src, src.position(), src.remaining());
        commit();
        return true;
    }

    /**
     * Ends this writer's stream: commits an end-of-stream marker ({@link RecordDescriptor#TYPE_END}) after
     * everything committed so far, and flushes. The marker travels in the ring like a record, so the reader's
     * {@link RecordHandler#onEndOfStream} sees it after every record of this writer, on every provider and
     * notification mode. After it, {@link #tryClaim}, {@link #claim}, {@link #offer} and {@link #write} throw
     * {@link IllegalStateException}. Idempotent: a second call does nothing. Blocks, like {@link #write}, while
     * the buffer has no space for the 8-byte marker; on timeout the writer is not finished and may try again.
     *
     * @param timeout how long to wait for space
     * @param unit unit of timeout
     * @throws ConnectionClosedException if the peer is gone
     * @throws RdmxTimeoutException if no space came in time
     * @throws InterruptedException if interrupted
     * @throws IllegalStateException if a claim is open (commit it first)
     */
    public void finish(long timeout, TimeUnit unit)
        throws ConnectionClosedException, RdmxTimeoutException, InterruptedException {
        if (finished) {
            return;
        }
        // claim an empty record, then turn its header (ours until commit publishes it) into the end marker
        int at = claim(0, 0, timeout, unit);
        ring.buffer().put(at - RecordDescriptor.HEADER_LENGTH + RecordDescriptor.TYPE_OFFSET,
            (byte) RecordDescriptor.TYPE_END);
        finished = true;
        commit();
        flush();
    }

    /** @return true once {@link #finish} committed the end of stream */
    public boolean isFinished() {
        return finished;
    }

    private IllegalStateException finishedException() {
        return new IllegalStateException("the writer to peer '" + peer.name() + "' worker " + peerWorker
            + " is finished (end of stream sent): it takes no more records");
    }

    /** Posts whatever is committed and unsent now, or as soon as fewer WRITEs than the window are in flight. */
    public void flush() {
        gate.flush();
    }

    /** @return true when everything committed was written and announced, and nothing is in flight */
    boolean quiet() {
        return unsent() == 0 && !gate.inFlight() && pendingData.get() < 0 && !queued.get();
    }

    /** @return records committed (written by the writer thread only; a snapshot may lag) */
    long recordsWritten() {
        return records;
    }

    /** @return payload bytes committed */
    long bytesWritten() {
        return bytes;
    }

    /** @return committed bytes not yet posted */
    public long unsent() {
        return ring.headAcquire() - gate.sent();
    }

    /** Any thread: posts the unsent range if a WRITE is due and the window has room ({@link SendGate}). */
    void trySend() {
        gate.trySend();
    }

    /**
     * Mapped, holding the {@link SendGate} (one publisher at a time, so the head never goes back): publishes the
     * head, and rings the reader's doorbell if it sleeps.
     */
    private void publish(long to) {
        long taken = shared.publishHead(to);
        peer.engine().counters.writesPosted(1);
        int parked = SharedRing.kind(taken);
        if (parked == SharedRing.AWAKE) {
            return;
        }
        if (parked == SharedRing.PARKED_FUTEX && Sleeper.futexes()) {
            SharedRing.wakeByFutex(parked, shared.readerParkedAddress());
            peer.engine().counters.futexWake();
        } else if (parked == SharedRing.PARKED_BELL && peer.ringBell(SharedRing.bellSlot(taken))) {
            peer.engine().counters.bellWake();
        } else {
            pendingData.set(to);
            peer.notifier().mark(this);
            peer.engine().counters.doorbellWake();
        }
    }

    private void post(long from, long to) {
        int idx = (int) (from & mask);
        int len = (int) (to - from);
        int firstLen = Math.min(len, (int) (mask + 1) - idx);
        // the WRITE(s) and the notification SEND behind them leave together (one system call on a socket)
        peer.cork();
        try {
            postCorked(from, to, idx, len, firstLen);
        } finally {
            peer.uncork();
        }
    }

    private void postCorked(long from, long to, int idx, int len, int firstLen) {
        try {
            if (firstLen < len) {
                first.local(region, base + idx, firstLen).remote(remote, base + idx);
                check(peer.connection().post(first));
                last.local(region, base, len - firstLen).remote(remote, base);
            } else {
                last.local(region, base + idx, len).remote(remote, base + idx);
            }
            if (last.opcode() == Opcode.WRITE_WITH_IMM) {
                last.immediate(ImmediateDescriptor.encode(index, len));
            }
            check(peer.connection().post(last));
            peer.engine().counters.writesPosted(firstLen < len ? 2 : 1);
        } catch (RdmxException e) {
            peer.fail(e);
            return;
        }
        if (last.opcode() == Opcode.WRITE) {
            pendingData.set(to);
            peer.notifier().mark(this);
        }
    }

    private void check(int rc) throws RdmxException {
        if (rc != Post.OK) {
            throw new RdmxException("WRITE to '" + peer.name() + "' refused: " + Post.name(rc)
                + " (raise rdmx.sendQueueDepth)");
        }
    }

    /** Network thread: the oldest WRITE in flight completed (its own completion: WRITE_WITH_IMM). */
    void onWriteComplete() {
        if (shared != null) {
            return; // mapped: nothing is in flight
        }
        gate.completeOldest();
    }

    /**
     * Network thread: the notification SEND that announced data up to {@code end} completed, and with it (on a
     * reliable connection) every WRITE posted before it: the WRITEs in flight that end there or before.
     *
     * @param end the position the notification carried
     */
    void onWriteComplete(long end) {
        if (shared != null) {
            return; // mapped: the SEND that completed was a doorbell; nothing was in flight
        }
        gate.complete(end);
    }

    /** @return the most WRITEs of this ring that were in flight at once (tests) */
    int peakWritesInFlight() {
        return gate.peakInFlight();
    }

    /** @return the most WRITEs of this ring in flight at once here */
    int writesInFlightWindow() {
        return gate.window();
    }

    /** @return the position the notifier last took for a notification (the notifier's holder only) */
    long drained() {
        return drained;
    }

    /**
     * Network thread: the reader consumed up to this position.
     *
     * @param position the new tail
     * @return false (nothing changed) if the position is beyond what this writer committed: a broken peer
     */
    boolean onCredit(long position) {
        if (position > ring.headAcquire()) {
            return false;
        }
        if (position > ring.tailAcquire()) {
            ring.tailRelease(position);
        }
        wake();
        ChannelReader l = creditListener;
        if (l != null) {
            l.wakeup();
        }
        return true;
    }

    /**
     * Wakes a reader whenever a credit arrives for this buffer, so a worker that waits for rows and for space
     * at once (a blocked shuffle sender draining its inbox) sleeps in one place. Null to stop.
     *
     * @param reader the reader to wake, or null
     */
    public void wakeOnCredit(ChannelReader reader) {
        this.creditListener = reader;
        if (reader == null && shared != null) {
            shared.writerParkedVolatile(SharedRing.AWAKE); // no spare doorbell for a listener that is gone
        }
    }

    /** Network thread: flushes data that sat unsent for a whole scan interval. */
    void scan() {
        long h = ring.headAcquire();
        if (h > gate.postedEnd() && h == scanHead) {
            flush(); // posts now if the window has room, else when a WRITE in flight completes
        }
        scanMoved = h != scanHead;
        scanHead = h;
    }

    /** @return true if the writer committed between the last two scans (the thread that scans) */
    boolean movedAtLastScan() {
        return scanMoved;
    }

    void wake() {
        wait.wake();
    }

    /**
     * Writer thread, mapped: the flag value it parks with. Without futexes, its bell on the peer's connection
     * (opened on the first sleep: setup, once), so the reader that frees space wakes it with one byte, not a
     * doorbell message through this process's I/O and network threads.
     */
    private long parkValue() {
        long v = parkValue;
        if (v == 0) {
            int slot = wait.sleeper().bell(peer.connection());
            v = Sleeper.futexes() ? SharedRing.PARKED_FUTEX
                : slot >= 0 ? SharedRing.bellValue(slot) : SharedRing.PARKED_DOORBELL;
            parkValue = v;
        }
        return v;
    }

    /** Closes the sleeper's bells (the peer or the engine closed). Any thread. */
    void closeSleeper() {
        wait.sleeper().close();
    }

    @Override
    public AtomicBoolean queued() {
        return queued;
    }

    @Override
    public int drainInto(ByteBuffer b, int at, int i) {
        long p = pendingData.getAndSet(-1);
        if (p < 0) {
            return 0;
        }
        NotificationDescriptor.entry(b, at, i, NotificationDescriptor.KIND_DATA, index, p);
        drained = p;
        return 1;
    }

    @Override
    public String toString() {
        return "ChannelWriter{peer=" + peer.name() + ", peerWorker=" + peerWorker + ", ring=" + index + "}";
    }
}
