package io.rdmx.channel;

import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RdmxTimeoutException;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.capability.RemoteMapping;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The setup and the end of one peer's channel: HELLO with our parameters, the checks of the peer's HELLO (a
 * mismatch is reported on both sides, so it waits until our HELLO was delivered), the {@link RingSet} built from
 * both, REGION with our pair region and the writers built from the peer's, then BYE when either side closes its
 * engine on purpose. The HELLO/REGION/BYE callbacks come from the thread that handles the peer's completions.
 */
final class PeerHandshake {
    /** Send slots of the control region: HELLO, REGION and BYE (0 and 1 are the notifier's). */
    static final int HELLO_SLOT = 2;
    static final int REGION_SLOT = 3;
    static final int BYE_SLOT = 4;

    private final PeerChannel peer;
    private final ChannelConfig cfg;
    private final boolean low;
    private final ByteBuffer sendView;
    private final CompletableFuture<PeerChannel> ready = new CompletableFuture<>();
    /** Completion thread: our HELLO has been delivered to the peer. */
    private boolean helloDelivered;
    /** Written by the completion thread: a configuration mismatch found before our HELLO was delivered. */
    private volatile RdmxException refusal;
    /** Written by the thread that started the handshake, applied by the completion thread. */
    private volatile ConnectionClosedException startFailure;
    /** The WRITEs in flight per ring, set from the peer's HELLO before the writers exist. */
    private volatile int window = 1;
    /** Set when either side closed its engine on purpose (our BYE posted, or the peer's received). */
    private volatile boolean closedCleanly;
    private volatile boolean byeDelivered;

    /**
     * @param peer the channel
     * @param low whether this node's name sorts first
     * @param sendView a view of the control region whose send slots this handshake writes
     */
    PeerHandshake(PeerChannel peer, boolean low, ByteBuffer sendView) {
        this.peer = peer;
        this.cfg = peer.engine().config();
        this.low = low;
        this.sendView = sendView;
    }

    private boolean wantsMapped() {
        return cfg.mapped() && peer.connection().capability(RemoteMapping.class).isPresent();
    }

    /**
     * Sends our HELLO. It goes first: the peer answers it with REGION, which must not overtake it.
     *
     * @throws RdmxException the SEND was refused
     */
    void sendHello() throws RdmxException {
        int at = HELLO_SLOT * NotificationDescriptor.MESSAGE_SLOT;
        int len = ControlMessages.hello(sendView, at, cfg.workers(), cfg.ringCapacity(), cfg.notification(),
            wantsMapped());
        peer.postHandshake(at, len, WrIdDescriptor.HELLO);
    }

    /**
     * The connection went down while the handshake was posted; the completion thread applies it
     * ({@link #applyStartFailure()}) after the completions already queued, so a mismatch the peer's HELLO tells
     * is still the reason reported.
     *
     * @param e the failure
     */
    void deferStartFailure(ConnectionClosedException e) {
        startFailure = e;
    }

    /** Completion thread: fails the peer with a deferred start failure, if any. */
    void applyStartFailure() {
        ConnectionClosedException e = startFailure;
        if (e != null) {
            startFailure = null;
            peer.fail(e);
        }
    }

    /** @return a configuration mismatch that is the reason the channel goes down, whatever closed it, or null */
    RdmxException refusal() {
        return refusal;
    }

    /**
     * Completion thread: one of our handshake SENDs was delivered.
     *
     * @param which {@link WrIdDescriptor#HELLO} (HELLO or REGION) or {@link WrIdDescriptor#BYE}
     */
    void onSent(int which) {
        if (which == WrIdDescriptor.BYE) {
            byeDelivered = true;
        } else if (!helloDelivered) {
            // the first handshake SEND is our HELLO: now the peer can tell a mismatch on its own
            helloDelivered = true;
            if (refusal != null) {
                peer.fail(refusal);
            }
        }
    }

    /**
     * Completion thread: the peer's HELLO. Checks it against our configuration and queue depths, builds the ring
     * set and answers with REGION.
     *
     * @param workers the peer's worker count
     * @param capacity the peer's ring capacity
     * @param mode the peer's notification mode ordinal
     * @param flags the peer's flags
     * @throws RdmxException a second HELLO, a mismatch found after our HELLO was delivered, too small queues
     */
    void onHello(int workers, int capacity, int mode, int flags) throws RdmxException {
        String name = peer.name();
        if (peer.rings() != null) {
            throw new RdmxException("peer '" + name + "' sent HELLO twice");
        }
        boolean imm = cfg.notification() == ChannelConfig.Notification.WRITE_WITH_IMM;
        String tooMany = imm && mode == cfg.notification().ordinal() && workers >= 1
            ? ImmediateDescriptor.validateRings(cfg.workers(), workers) : null;
        if (capacity != cfg.ringCapacity() || mode != cfg.notification().ordinal() || tooMany != null) {
            RdmxException e = new RdmxException("channel configuration mismatch with '" + name + "': "
                + (tooMany != null ? tooMany : "ringCapacity local=" + cfg.ringCapacity() + " peer=" + capacity
                + ", notification local=" + cfg.notification() + " peer="
                + (mode >= 0 && mode < 2 ? ChannelConfig.Notification.values()[mode] : mode)));
            if (helloDelivered) {
                throw e;
            }
            // closing now could flush our HELLO undelivered, and the peer would only see the connection drop:
            // fail once our HELLO has reached it, so both sides name the mismatch
            refusal = e;
            return;
        }
        if (workers < 1 || workers > cfg.maxPeerWorkers()) {
            throw new RdmxException("peer '" + name + "' announced workers=" + workers + ", outside [1, "
                + ChannelConfig.MAX_PEER_WORKERS_PROP + "=" + cfg.maxPeerWorkers() + "]");
        }
        int rings = cfg.workers() * workers;
        int sq = peer.engine().node().options().sendQueueDepth();
        int rq = peer.engine().node().options().recvQueueDepth();
        int sendSlots = PeerChannel.SEND_SLOTS;
        if (sq < 2 * rings + sendSlots) {
            throw new RdmxException("sendQueueDepth=" + sq + " too small for " + rings + " rings to '" + name
                + "' (needs " + (2 * rings + sendSlots) + ")");
        }
        window = PeerChannel.writesInFlight(cfg, rings, sq);
        int recvs = PeerChannel.BASE_RECVS + (imm ? rings : 0);
        if (rq < recvs) {
            throw new RdmxException("recvQueueDepth=" + rq + " too small for " + rings + " rings from '" + name
                + "' (needs " + recvs + ")");
        }
        boolean mapped = wantsMapped() && (flags & NotificationDescriptor.FLAG_MAPPED) != 0;
        RingSet set = new RingSet(peer, low, workers, mapped);
        peer.attach(set);
        if (imm) {
            peer.postImmediateReceives(rings);
        }
        int at = REGION_SLOT * NotificationDescriptor.MESSAGE_SLOT;
        int len = ControlMessages.region(sendView, at, set.descriptor());
        peer.postHandshake(at, len, WrIdDescriptor.HELLO);
    }

    /**
     * Completion thread: the peer's REGION. Builds the writers (into the peer's mapped memory if both sides
     * map) and makes the channel ready.
     *
     * @param remotePair the peer's pair region
     * @throws RdmxException REGION before HELLO or twice, a wrong length, a region that cannot be mapped
     */
    void onRegion(RemoteRegion remotePair) throws RdmxException {
        String name = peer.name();
        RingSet set = peer.rings();
        if (set == null) {
            throw new RdmxException("peer '" + name + "' sent REGION before HELLO");
        }
        if (set.connected()) {
            throw new RdmxException("peer '" + name + "' sent REGION twice");
        }
        if (remotePair.length() != set.regionLength()) {
            throw new RdmxException("peer '" + name + "' pair region length=" + remotePair.length() + " != expected="
                + set.regionLength());
        }
        ByteBuffer peerMemory = null;
        if (set.mapped()) {
            RemoteMapping mapping = peer.connection().capability(RemoteMapping.class).orElse(null);
            peerMemory = mapping == null ? null : mapping.mapRemote(remotePair);
            if (peerMemory == null) {
                throw new RdmxException("cannot map the pair region of peer '" + name + "' although both sides "
                    + "announced mapped=true");
            }
        }
        set.connect(remotePair, peerMemory, window);
        ready.complete(peer);
    }

    /** @return the WRITEs in flight per ring (after the peer's HELLO) */
    int window() {
        return window;
    }

    /** The peer sent BYE: it closes its engine on purpose. */
    void onBye() {
        closedCleanly = true;
    }

    /**
     * Engine closing: tells a ready peer that this side closes on purpose (a BYE after everything sent), so
     * neither side takes the end of the connection for a failure. Any thread; see {@link #goodbyeDone()}. Throws
     * {@link IllegalStateException} if the node freed the control region under the engine (verbs, after the node
     * died): the engine's close fails the peer then.
     *
     * @param reason why this side closes, when that is another peer's failure (the BYE carries it), or null
     */
    void sayGoodbye(String reason) {
        closedCleanly = true;
        RingSet set = peer.rings();
        if (!peer.isOpen() || set == null || !set.connected()) {
            return;
        }
        int at = BYE_SLOT * NotificationDescriptor.MESSAGE_SLOT;
        int len = ControlMessages.bye(sendView, at, reason);
        try {
            peer.postHandshake(at, len, WrIdDescriptor.BYE);
        } catch (RdmxException e) {
            peer.fail(e);
        }
    }

    /** @return true once our BYE was delivered, or there is no one left to deliver it to */
    boolean goodbyeDone() {
        RingSet set = peer.rings();
        return byeDelivered || !peer.isOpen() || set == null || !set.connected();
    }

    /** @return true if the channel ended because either side closed its engine, not by a failure */
    boolean closedCleanly() {
        return closedCleanly;
    }

    /**
     * The channel went down: anyone awaiting the handshake gets the failure.
     *
     * @param failure why
     */
    void failed(ConnectionClosedException failure) {
        ready.completeExceptionally(failure);
    }

    /**
     * Waits for the handshake; without a network thread this thread runs the engine's duty cycle meanwhile.
     *
     * @param timeout how long
     * @return the ready channel
     * @throws RdmxException timed out (the channel is failed), interrupted, or the handshake failed
     */
    PeerChannel await(Duration timeout) throws RdmxException {
        String name = peer.name();
        ChannelEngine engine = peer.engine();
        try {
            if (!cfg.engineThread()) {
                long deadline = System.nanoTime() + timeout.toNanos();
                while (!ready.isDone()) {
                    if (engine.doWork() == 0) {
                        try {
                            ready.get(Math.min(ChannelEngine.AGENT_SLEEP_NANOS, Math.max(1,
                                deadline - System.nanoTime())), TimeUnit.NANOSECONDS);
                        } catch (TimeoutException again) {
                            if (System.nanoTime() - deadline >= 0) {
                                throw again;
                            }
                        }
                    }
                }
            }
            return ready.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            RdmxTimeoutException t = new RdmxTimeoutException("channel handshake with '" + name + "' timed out after "
                + timeout.toMillis() + " ms");
            peer.fail(t);
            throw t;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RdmxException("interrupted during the channel handshake with '" + name + "'");
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            String msg = "channel handshake with '" + name + "' failed: " + c.getMessage();
            throw new ConnectionClosedException(name, msg, ChannelErrors.distinctCause(msg, c));
        }
    }
}
