package io.rdmx.channel;

import io.rdmx.transport.capability.InputFollowing;
import io.rdmx.transport.internal.Sleeper;
import io.rdmx.transport.internal.WaitLoop;
import io.rdmx.spi.Platform;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.RdmxException;
import java.util.concurrent.TimeUnit;

/**
 * Everything sent to one local worker, from every remote worker of every peer. One reader thread at a time.
 * The network thread queues each ring that received data (once until read), so the reader never polls every
 * buffer; a reader with nothing to read blocks (parks) until data arrives, a peer fails, the engine closes, or
 * a timeout.
 *
 * <p>A failed peer is reported once: after the records that had arrived are read, the next read throws a
 * {@link ConnectionClosedException} naming that peer, and later reads go on with the other peers. Whether to
 * go on is the caller's decision (a query may abort, an RPC client fails only the calls to that peer).
 *
 * <p>Rings of mapped channels ({@link SharedRing}) are not announced: the reader scans them (one acquire load of
 * each ring's published head), Aeron-style, and before it parks it says so in the shared reader-parked word of
 * each mapped peer, so that a writer that publishes then wakes it: with one {@code FUTEX_WAKE} on that word where
 * both processes have futexes ({@link Sleeper}), else with a doorbell (a SEND) that this engine turns into a
 * local wake-up.
 */
public final class ChannelReader {
    private static final boolean BIND_WORKERS = Platform.hooks().bindWorkers();
    private final ChannelEngine engine;
    private final int worker;
    private final ReadyQueue ready = new ReadyQueue();
    /** The reader thread's wait: its sleeper, and leader/follower on the sole peer's socket. */
    private final WaitLoop wait = new WaitLoop(this);
    private final Sleeper sleeper = wait.sleeper();
    private final Read waiting;
    private volatile boolean wakeupRequested;
    private final PeerLosses losses = new PeerLosses();
    /** A loss taken while records were still there to read: reported by a later call (reader thread only). */
    private PeerLosses.Loss heldLoss;
    /** Incoming rings of mapped channels, copy on write (the network thread adds, the reader thread scans). */
    private volatile IncomingRing[] mapped = new IncomingRing[0];
    /** One ring per mapped peer: its shared reader-parked word is this reader's, for that peer. */
    private volatile IncomingRing[] parkWords = new IncomingRing[0];
    /** Reader thread: where the next scan of {@link #mapped} starts (fairness under a record limit). */
    private int cursor;
    /** Reader thread: the park words the sleeper's shared words were set for. */
    private IncomingRing[] sleepingOn = new IncomingRing[0];
    /** Reader thread: rings whose credit waits for a notification to carry it ({@link IncomingRing#lazyQueued}). */
    private IncomingRing[] lazyCredits = new IncomingRing[8];
    private int lazyCount;
    /** Reader thread: the flag value this reader parks with in each of {@link #sleepingOn} (futex, bell, doorbell). */
    private long[] parkValues = new long[0];
    /**
     * A spinning reader whose peer's rings are mapped reads its sole peer's socket (control messages only) once per
     * this many spins plus one (a power of two less 1); one whose input all comes through the socket reads it on
     * every spin, as a busy-polling socket reader does ({@link #inputLookMask}).
     */
    static final int SPINS_PER_INPUT_LOOK = 31;

    /**
     * Which spins of a spinning reader read its sole peer's socket: {@code (spins & mask) == 0}. (A spinning writer
     * waits for credits, which come a quarter ring at a time: it looks once per 32 spins.)
     *
     * @param socketOnly whether everything the spinner waits for comes through the socket (no mapped ring): a
     *                   spin that does not read the socket then cannot see it, and the time between looks is
     *                   added to the latency of every message (about a microsecond per look skipped on tcp)
     * @return 0 (every spin) or {@link #SPINS_PER_INPUT_LOOK}
     */
    static int inputLookMask(boolean socketOnly) {
        return socketOnly ? 0 : SPINS_PER_INPUT_LOOK;
    }

    /**
     * A worker thread about to wait (a reader, a writer): binds it as the platform hooks say, if they bind workers.
     *
     * @param engine the engine whose node's NIC the worker is near
     */
    static void bindWorker(ChannelEngine engine) {
        if (BIND_WORKERS) {
            Platform.hooks().bindCurrentThread("worker", engine.node().fabric().name(), engine.node().address());
        }
    }

    ChannelReader(ChannelEngine engine, int worker) {
        this.engine = engine;
        this.worker = worker;
        this.waiting = new Read();
    }

    /** @return the local worker this reader serves */
    public int worker() {
        return worker;
    }

    /**
     * Network thread: a ring has new data.
     *
     * @param r the ring
     */
    void signal(IncomingRing r) {
        ready.signal(r);
        wake();
    }

    /**
     * Network thread: the rings of one mapped peer that feed this reader; the reader scans them from now on.
     *
     * @param rings the rings (at least one, all of one peer)
     */
    synchronized void addMapped(IncomingRing[] rings) {
        IncomingRing[] m = java.util.Arrays.copyOf(mapped, mapped.length + rings.length);
        System.arraycopy(rings, 0, m, mapped.length, rings.length);
        IncomingRing[] w = java.util.Arrays.copyOf(parkWords, parkWords.length + 1);
        w[parkWords.length] = rings[0];
        parkWords = w;
        mapped = m;
        wake(); // a parked reader re-arms its parked words, this peer's included, before it parks again
    }

    /**
     * A peer failed; the reader throws it once, when it has read what had arrived, and then forgets the peer's
     * rings ({@link #forget}). Any thread.
     *
     * @param p the peer, whose memory this reader holds until then
     * @param e the failure naming the peer
     */
    void peerFailed(PeerChannel p, ConnectionClosedException e) {
        losses.add(p, e);
        wake();
    }

    /**
     * Reader thread, as it reports a peer's loss: lets go of every ring of that peer. Its rings leave the mapped
     * scan and the parked words (this thread's own sleep words too, so nothing touches the peer's memory when a
     * read ends or sleeps again), and its bell closes; any of its rings still in the ready queue, or signaled there
     * later by a completion handled as the peer failed, is dropped unread ({@link IncomingRing#dropped}). Then the
     * peer's memory may go once the other holders let go ({@link PeerChannel#readerDone}).
     *
     * @param p the lost peer
     */
    private void forget(PeerChannel p) {
        RingSet rs = p.rings();
        for (IncomingRing r : rs.incomingOf(worker)) {
            r.dropped = true;
        }
        if (rs.mapped()) {
            synchronized (this) {
                mapped = without(mapped, p);
                parkWords = without(parkWords, p);
            }
            IncomingRing[] words = sleepingOn;
            int keep = 0;
            for (IncomingRing w : words) {
                keep += w.peer == p ? 0 : 1;
            }
            if (keep < words.length) {
                IncomingRing[] w2 = new IncomingRing[keep];
                long[] v2 = new long[keep];
                long[] addresses = new long[Sleeper.futexes() ? keep : 0];
                for (int i = 0, j = 0; i < words.length; i++) {
                    if (words[i].peer != p) {
                        w2[j] = words[i];
                        v2[j] = parkValues[i];
                        if (addresses.length > 0) {
                            addresses[j] = words[i].shared().readerParkedAddress();
                        }
                        j++;
                    }
                }
                sleeper.sharedWords(addresses, SharedRing.PARKED_FUTEX);
                parkValues = v2;
                sleepingOn = w2;
            }
            sleeper.forgetBell(p.connection());
        }
        p.readerDone();
    }

    /** @return the rings without those of one peer (a new array) */
    private static IncomingRing[] without(IncomingRing[] rings, PeerChannel p) {
        return java.util.Arrays.stream(rings).filter(r -> r.peer != p).toArray(IncomingRing[]::new);
    }

    /**
     * Makes a blocked (or the next) {@link #read} return early, with what it has or 0. Any thread: used by
     * layers that feed the same worker from elsewhere (a same-process fast path) to wake it.
     */
    public void wakeup() {
        wakeupRequested = true;
        wake();
    }

    void wake() {
        wait.wake();
    }

    /**
     * Sleeps without reading, on the reader's own sleeper: for a caller that cannot take records now (its own
     * buffer is full) and waits for something it arranged to be woken for ({@link #wakeup}). Returns on that
     * wake-up, an arrival, a lost peer, the engine's close or the timeout, whichever comes first; may return
     * early. What arrived or failed is left for the next {@link #read}, which reports it.
     *
     * @param timeout the longest sleep
     * @param unit unit of timeout
     * @throws InterruptedException if interrupted
     */
    public void park(long timeout, TimeUnit unit) throws InterruptedException {
        long nanos = unit.toNanos(timeout);
        sleeper.arm();
        try {
            if (wakeupRequested) {
                wakeupRequested = false;
                return;
            }
            if (heldLoss != null || losses.pending() || !engine.isOpen() || nanos <= 0) {
                return;
            }
            sleeper.sleepOwn(nanos);
            if (Thread.interrupted()) {
                throw new InterruptedException("reader of worker " + worker);
            }
        } finally {
            sleeper.disarm();
            // a wake-up requested meanwhile ended this park (or its caller, who looks at its condition next,
            // learns it that way): it must not also end the next read or park at once
            wakeupRequested = false;
        }
    }

    /**
     * Reads what is there without blocking.
     *
     * @param handler receives each record
     * @param limit the most records
     * @return records read
     */
    public int poll(RecordHandler handler, int limit) {
        int n = 0;
        IncomingRing r;
        while (n < limit && (r = ready.poll()) != null) {
            if (r.dropped) {
                r.queuedForReader.set(false); // a ring of a peer whose loss this reader reported: not read again
                continue;
            }
            try {
                n += r.read(handler, limit - n);
                if (r.lazyQueued) {
                    listLazy(r);
                }
            } finally {
                // also when the handler threw: a ring left marked as being read would never be read again
                if (ready.doneReading(r)) {
                    wake();
                }
            }
        }
        IncomingRing[] m = mapped;
        for (int i = 0, len = m.length; i < len && n < limit; i++) {
            int c = cursor;
            cursor = c + 1 < len ? c + 1 : 0;
            IncomingRing mr = m[c < len ? c : 0];
            if (mr.pollMapped()) {
                n += mr.read(handler, limit - n);
            }
        }
        if (n > 0) {
            engine.counters.recordsRead(n);
        } else if (lazyCount > 0) {
            sendLazyCredits(); // nothing to read: a writer may be waiting for the space they report
        }
        return n;
    }

    private void listLazy(IncomingRing r) {
        for (int i = 0; i < lazyCount; i++) {
            if (lazyCredits[i] == r) {
                return;
            }
        }
        if (lazyCount == lazyCredits.length) {
            lazyCredits = java.util.Arrays.copyOf(lazyCredits, 2 * lazyCount);
        }
        lazyCredits[lazyCount++] = r;
    }

    private void sendLazyCredits() {
        for (int i = 0; i < lazyCount; i++) {
            IncomingRing r = lazyCredits[i];
            lazyCredits[i] = null;
            if (r.lazyQueued) {
                r.sendLazyCredit();
            }
        }
        lazyCount = 0;
    }

    /**
     * Reads what is there without blocking, and reports what {@link #read} reports: {@link #poll} that also says
     * when a peer was lost or the engine closed. Costs two volatile reads more than {@link #poll} when nothing
     * arrived and nothing failed.
     *
     * @param handler receives each record
     * @param limit the most records
     * @return records read; 0 if there were none
     * @throws ConnectionClosedException once per failed peer, when nothing else is left to read (names the
     *                                   peer); the next call goes on with the other peers
     * @throws RdmxException if the engine is closed
     */
    public int readNow(RecordHandler handler, int limit) throws RdmxException {
        int n = poll(handler, limit);
        return n > 0 ? n : checkFailure(handler, limit);
    }

    /**
     * Reads, blocking until at least one record arrives.
     *
     * @param handler receives each record
     * @param limit the most records
     * @param timeout how long to wait
     * @param unit unit of timeout
     * @return records read; 0 on timeout
     * @throws ConnectionClosedException once per failed peer, when nothing else is left to read (names the
     *                                   peer); the next read goes on with the other peers
     * @throws RdmxException if the engine is closed
     * @throws InterruptedException if interrupted
     */
    public int read(RecordHandler handler, int limit, long timeout, TimeUnit unit)
        throws RdmxException, InterruptedException {
        bindWorker(engine);
        int n = poll(handler, limit);
        if (n > 0) {
            return n;
        }
        n = checkFailure(handler, limit);
        if (n > 0) {
            return n;
        }
        long start = System.nanoTime();
        engine.counters.readerBlocked();
        waiting.handler = handler;
        waiting.limit = limit;
        try {
            n = wait.await(waiting, start + unit.toNanos(timeout), engine.config().spinsBeforePark(),
                inputLookMask(mapped.length == 0));
            if (n == WaitLoop.NOT_YET) {
                wakeupRequested = false;
                return 0;
            }
            return n;
        } finally {
            waiting.handler = null;
            engine.counters.readerBlockedNanos(System.nanoTime() - start);
        }
    }

    /**
     * The reader's wait ({@link #read}): records, a lost peer, a closed engine or a {@link #wakeup} end it. Reader
     * thread only; its handler and limit are the current read's.
     */
    private final class Read implements WaitLoop.Waiting<RdmxException> {
        /** No network thread: the waiting thread runs the engine's duty cycle, and sleeps a little at a time. */
        private final boolean agent = !engine.config().engineThread();
        private RecordHandler handler;
        private int limit;

        @Override
        public int check() throws RdmxException {
            int n = poll(handler, limit);
            if (n > 0) {
                return n;
            }
            n = checkFailure(handler, limit);
            if (n > 0) {
                return n;
            }
            if (wakeupRequested) {
                wakeupRequested = false;
                return 0;
            }
            return WaitLoop.NOT_YET;
        }

        @Override
        public boolean work() throws RdmxException {
            return agent && engine.doWork() > 0;
        }

        /**
         * A spinning reader of a sole peer looks at the socket itself (every spin, or now and then beside mapped
         * rings): readers that waited before hold its input (the I/O thread does not read it for a moment).
         */
        @Override
        public InputFollowing spinInput() {
            return agent ? null : engine.solePeer();
        }

        /** Leader/follower: wait on the sole peer's socket and handle its input here, not sleep until woken. */
        @Override
        public InputFollowing followInput() {
            return agent ? null : engine.solePeer();
        }

        /** The mapped peers' reader-parked words the sleeper sleeps on, set up again when the peers changed. */
        @Override
        public boolean prepare() {
            IncomingRing[] words = parkWords;
            if (words != sleepingOn) {
                sleepOn(words);
            }
            return false;
        }

        /** (Re-)arms the mapped peers' reader-parked words (a wake-up disarms them) before the re-check. */
        @Override
        public void armed() {
            parkWords(true);
        }

        @Override
        public void disarmed() {
            parkWords(false);
        }

        @Override
        public long sleepNanos(long remaining) {
            return agent ? Math.min(ChannelEngine.AGENT_SLEEP_NANOS, remaining) : remaining;
        }

        @Override
        public String waiter() {
            return "reader of worker " + worker;
        }
    }

    /**
     * Reader thread: says in every mapped peer's shared memory that this reader sleeps (or no longer does);
     * a volatile store and a full fence each, so the scan after it sees any head published before a writer
     * read the word.
     */
    private void parkWords(boolean parked) {
        IncomingRing[] words = sleepingOn;
        long[] values = parkValues;
        for (int i = 0; i < words.length; i++) {
            words[i].shared().readerParkedVolatile(parked ? values[i] : SharedRing.AWAKE);
        }
    }

    /**
     * Reader thread: the sleeper wakes on these peers' reader-parked words too (futexes), or on a bell to each
     * (no futexes: opened on the first sleep after the peer came, once); allocates, only on a change.
     */
    private void sleepOn(IncomingRing[] words) {
        long[] addresses = new long[Sleeper.futexes() ? words.length : 0];
        for (int i = 0; i < addresses.length; i++) {
            addresses[i] = words[i].shared().readerParkedAddress();
        }
        sleeper.sharedWords(addresses, SharedRing.PARKED_FUTEX);
        long[] values = new long[words.length];
        for (int i = 0; i < words.length; i++) {
            if (Sleeper.futexes()) {
                values[i] = SharedRing.PARKED_FUTEX;
            } else {
                int slot = sleeper.bell(words[i].peer.connection());
                values[i] = slot >= 0 ? SharedRing.bellValue(slot) : SharedRing.PARKED_DOORBELL;
            }
        }
        parkValues = values;
        sleepingOn = words;
    }

    /** @return the peers this reader's sleeper keeps a bell (or the attempt at one) of (tests) */
    int bellPeers() {
        return sleeper.bellPeers();
    }

    /** @return the mapped rings this reader scans (tests) */
    int mappedRings() {
        return mapped.length;
    }

    /** Closes the sleeper's bells (the engine closed). Any thread. */
    void closeSleeper() {
        sleeper.close();
    }

    /**
     * Reader thread, after a poll found nothing: reports the oldest peer loss, but only once nothing is left to
     * read. A peer that publishes its last records (its end of stream) and then closes can be seen closing after a
     * poll that ran just before those records were published, so a loss is followed by one more poll; if that
     * finds records they are returned and the loss is kept for a later call.
     *
     * @return records the extra poll read (0: nothing failed)
     */
    private int checkFailure(RecordHandler handler, int limit) throws RdmxException {
        PeerLosses.Loss f = heldLoss != null ? heldLoss : losses.take();
        if (f != null) {
            heldLoss = f; // kept if the poll finds records, or its handler throws
            int n = poll(handler, limit);
            if (n > 0) {
                return n;
            }
            heldLoss = null;
            forget(f.peer());
            throw ChannelErrors.forCaller(f.failure());
        }
        if (!engine.isOpen()) {
            throw new RdmxException("channel engine of node '" + engine.node().name() + "' is closed");
        }
        return 0;
    }
}
