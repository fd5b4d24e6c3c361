package io.rdmx.transport.internal;

import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.PeerNotListeningException;
import io.rdmx.transport.ProtocolException;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RdmxTimeoutException;
import io.rdmx.transport.RemoteRegion;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;

/**
 * The rdma_cm connection setup the RDMA providers share ({@code verbs} on librdmacm through FFM, {@code disni} on
 * DiSNI), from the first rdma_cm event to the teardown. The flow is here; the provider makes the calls: its
 * subclass of this class those on the rdma_cm id and the node (resolve, connect, accept, reject, the connection), its
 * {@link CmSetup} those on the queue pair's own resources (create, post, destroy).
 *
 * <pre>
 *   active side (connect)                                  passive side (listener)
 *   rdma_resolve_addr   -&gt; ADDR_RESOLVED
 *   rdma_resolve_route  -&gt; ROUTE_RESOLVED
 *   queue pair, rdma_connect  ---------------------------&gt; CONNECT_REQUEST: queue pair, rdma_accept
 *   ESTABLISHED
 *   without a secret: HELLO(regions, probe) -------------&gt;
 *                     &lt;----------------------------------- ACCEPT(regions, probe) or REFUSE(reason)
 *   under a secret:   HELLO(Nc) --------------------------&gt;
 *                     &lt;----------------------------------- CHALLENGE(Ns, the listener's proof)
 *                     PROVE(regions, probe, our proof) ---&gt;
 *                     &lt;----------------------------------- ACCEPT(regions, probe) or REFUSE(reason)
 * </pre>
 * ({@link SetupMessage} over the queue pair's SEND/RECV, {@link SetupAuth} for the proofs: under a secret nothing
 * about either side's memory goes out before the peer proved it knows the secret.)
 *
 * <p>The queue pair ({@link #createQueuePair}): what it needs of the node's completion queues, then its own
 * protection domain (keys registered there are honoured on this queue pair alone), the queue pair in it, its
 * control region (setup receive, setup send, keep-alive target; registered for remote WRITE so the peer can probe
 * it) and the first setup receive. The teardown ({@link #destroy}) undoes it in the reverse order: the queue pair
 * (and its CQ), the control region, the domain's registrations and the domain, the rdma_cm id.
 *
 * <p>Threads: rdma_cm events and the sweep run on the provider's rdma_cm thread; setup messages' completions on
 * whichever thread polls the queue pair's CQ, which defers failures to the rdma_cm thread ({@link #execute}).
 *
 * @param <S> the provider's setup (its queue pair)
 * @param <C> the provider's connection
 */
public abstract class RdmaCmFlow<S extends CmSetup<C>, C extends AbstractConnection> {
    /** {@code RDMA_CM_EVENT_ADDR_RESOLVED} (enum rdma_cm_event_type; DiSNI's {@code EventType} ordinals match). */
    public static final int ADDR_RESOLVED = 0;
    /** {@code RDMA_CM_EVENT_ROUTE_RESOLVED}. */
    public static final int ROUTE_RESOLVED = 2;
    /** {@code RDMA_CM_EVENT_CONNECT_REQUEST}. */
    public static final int CONNECT_REQUEST = 4;
    /** {@code RDMA_CM_EVENT_REJECTED}. */
    public static final int REJECTED = 8;
    /**
     * The status of a {@link #REJECTED} the CM itself sends when nothing listens at the port (InfiniBand CM reject
     * reason 8, invalid service id; rxe and RoCE NICs send it the same way).
     */
    static final int REJ_INVALID_SERVICE_ID = 8;
    /** {@code RDMA_CM_EVENT_ESTABLISHED}. */
    public static final int ESTABLISHED = 9;
    /** {@code RDMA_CM_EVENT_DISCONNECTED}. */
    public static final int DISCONNECTED = 10;
    /** {@code RDMA_CM_EVENT_DEVICE_REMOVAL}. */
    public static final int DEVICE_REMOVAL = 11;
    /** {@code RDMA_CM_EVENT_TIMEWAIT_EXIT}. */
    public static final int TIMEWAIT_EXIT = 15;
    /** The longest address or route resolution, in ms (within the connect timeout). */
    public static final int RESOLVE_MS = 5000;

    private final RdmaNode node;
    private final SetupAuth auth;
    private final String provider;
    private final Logger log;

    /**
     * @param node the provider's node
     * @param provider the provider's name, the prefix of its log lines
     * @param log the provider's logger
     */
    protected RdmaCmFlow(RdmaNode node, String provider, Logger log) {
        this.node = node;
        this.auth = new SetupAuth(node.options());
        this.provider = provider;
        this.log = log;
    }

    // ------------------------------------------------------------------ the provider's calls

    /** @return the node's setups, for {@link #sweep} (a concurrent view: {@link #destroy} removes from it) */
    protected abstract Iterable<S> setups();

    /** @return rdma_cm's name of an event type */
    protected abstract String eventName(int type);

    /** rdma_resolve_route. */
    protected abstract void resolveRoute(S s, int timeoutMs) throws Throwable;

    /** rdma_connect, with the node's retry counts. */
    protected abstract void connect(S s) throws Throwable;

    /** rdma_accept, with the node's retry counts. */
    protected abstract void accept(S s) throws Throwable;

    /** rdma_reject. */
    protected abstract void reject(S s) throws Throwable;

    /** @return a region's remote key in the queue pair's domain (registered there if it is not yet) */
    protected abstract int remoteKeyOf(S s, RegionImpl region) throws RdmxException;

    /**
     * A connection for the handshake's last message, not yet attached nor added to the node.
     *
     * @param s the setup
     * @param m the peer's HELLO (or PROVE) or ACCEPT: its name, regions and probe target
     * @param peerAddress the peer's address (dialed, or announced)
     * @return the connection
     */
    protected abstract C newConnection(S s, SetupMessage m, String peerAddress);

    /** Forgets the setup in the node's maps (the first step of its teardown). */
    protected abstract void forget(S s);

    // ------------------------------------------------------------------ the flow

    /** Runs a task on the rdma_cm thread, after what it is doing. */
    private void execute(Runnable task) {
        node.execute(task);
    }

    /**
     * The queue pair of a setup: completion queues, protection domain, queue pair, control region, setup receive.
     *
     * @param s the setup
     * @throws RdmxException naming the call that failed
     */
    public final void createQueuePair(S s) throws RdmxException {
        try {
            s.prepareQueues();
            s.allocateDomain();
            s.createQp();
            s.registerControl();
        } catch (RdmxException e) {
            throw e;
        } catch (Throwable t) {
            throw new RdmxException(provider + ": queue pair setup failed: " + t, t);
        }
        s.postSetupReceive();
    }

    /**
     * A connect request at the listener (rdma_cm thread): its queue pair and rdma_accept, or rdma_reject.
     *
     * @param s the passive setup, already in the node's setups
     * @param stopping whether the node is closing (the request is rejected)
     */
    public final void incoming(S s, boolean stopping) {
        try {
            if (stopping) {
                reject(s);
                destroy(s);
                return;
            }
            try {
                createQueuePair(s);
            } catch (RdmxException e) {
                try {
                    reject(s);
                } catch (Throwable ignored) {
                    // the id is destroyed next
                }
                setupFailed(s, e.getMessage());
                return;
            }
            accept(s);
            s.readyToSend();
        } catch (RdmxException e) {
            setupFailed(s, e.getMessage());
        } catch (Throwable t) {
            setupFailed(s, "accept failed: " + t);
        }
    }

    /**
     * An rdma_cm event of a known setup (rdma_cm thread).
     *
     * @param s the setup
     * @param type the event type
     * @param status the event's status
     */
    public final void onEvent(S s, int type, int status) {
        try {
            switch (type) {
                case ADDR_RESOLVED:
                    long left = (s.deadlineNanos - System.nanoTime()) / 1_000_000;
                    resolveRoute(s, (int) Math.max(1, Math.min(RESOLVE_MS, left)));
                    break;
                case ROUTE_RESOLVED:
                    createQueuePair(s);
                    connect(s);
                    break;
                case ESTABLISHED:
                    if (s.active) {
                        s.readyToSend(); // the passive side was after rdma_accept
                        hello(s);
                    }
                    break;
                case DISCONNECTED:
                case DEVICE_REMOVAL:
                    peerGone(s, eventName(type));
                    break;
                case TIMEWAIT_EXIT:
                    break;
                default:
                    // ADDR_ERROR, ROUTE_ERROR, CONNECT_ERROR, UNREACHABLE, REJECTED; a REJECTED whose status is the
                    // CM's "invalid service id" (nothing bound to that port, yet) is one a caller may try again
                    setupFailed(s, eventName(type) + " (status " + status + ")"
                        + (type == REJECTED ? ": no rdmx node listens there" : ""),
                        type == REJECTED && status == REJ_INVALID_SERVICE_ID);
                    break;
            }
        } catch (RdmxException e) {
            setupFailed(s, e.getMessage());
        } catch (Throwable t) {
            setupFailed(s, t.toString());
        }
    }

    /** The active side's first message, once established: under a secret our nonce only (nothing about memory). */
    private void hello(S s) throws RdmxException {
        if (auth.enabled()) {
            s.nonce = SetupAuth.nonce();
            send(s, new SetupMessage(SetupMessage.HELLO, node.name(), node.address(), List.of(), null, null, s.nonce));
        } else {
            send(s, new SetupMessage(SetupMessage.HELLO, node.name(), node.address(), exportedTo(s), null,
                s.probeTarget()));
        }
    }

    /**
     * Fails a setup: the caller's connect (or the connection, if the handshake made one) learns why, and the setup
     * is torn down. The rdma_cm thread.
     *
     * @param s the setup
     * @param why what failed
     */
    public final void setupFailed(S s, String why) {
        setupFailed(s, why, false);
    }

    /**
     * {@link #setupFailed} with the reason, saying whether nothing listened at the address: then a connect fails
     * with {@link PeerNotListeningException}, which callers that start nodes in any order try again (a shuffle's
     * ranks in two hosts, say).
     *
     * @param s the setup
     * @param why what failed
     * @param notListening whether the peer's CM said nothing listens there
     */
    public final void setupFailed(S s, String why, boolean notListening) {
        C c = s.connection();
        if (c != null) {
            c.fail(new ConnectionClosedException(c.peerName(), "connection from '" + node.name() + "' to peer '"
                + c.peerName() + "' failed: " + why, null));
            return;
        }
        if (s.future != null) {
            String message = "connect from '" + node.name() + "' to address=" + s.dialAddress + " failed: " + why;
            s.future.completeExceptionally(notListening ? new PeerNotListeningException(message)
                : new RdmxException(message));
        } else {
            log.debug("{}: node '{}' drops an incoming setup: {}", provider, node.name(), why);
        }
        destroy(s);
    }

    private void peerGone(S s, String event) {
        s.deliverPending(); // what the peer sent before it left is delivered, in order, before the flush
        C c = s.connection();
        if (c != null) {
            c.fail(new ConnectionClosedException(c.peerName(), "peer '" + c.peerName() + "' (" + c.peerAddress()
                + ") disconnected from '" + node.name() + "' (" + event + ")", null));
        } else {
            setupFailed(s, "the peer disconnected during setup (" + event + ")");
        }
    }

    /**
     * Times out the setups past their deadline (or whose caller gave up) and drives the keep-alive of the
     * connections. The rdma_cm thread, every few tens of ms.
     *
     * @param now {@code System.nanoTime()}
     */
    public final void sweep(long now) {
        for (S s : setups()) {
            if (s.connection() != null) {
                s.keepAlive(now);
                continue;
            }
            if (now - s.deadlineNanos > 0 || (s.future != null && s.future.isDone())) {
                if (s.future != null) {
                    s.future.completeExceptionally(new RdmxTimeoutException("connect from '" + node.name()
                        + "' to address=" + s.dialAddress + " timed out"));
                } else {
                    log.debug("{}: node '{}' drops a setup that did not finish in time", provider, node.name());
                }
                destroy(s);
            }
        }
    }

    /**
     * Tears a setup down once, in the order that undoes {@link #createQueuePair}; any later call does nothing.
     * The rdma_cm thread (or the closing thread once it stopped).
     *
     * @param s the setup
     */
    public final void destroy(S s) {
        if (!s.beginTeardown()) {
            return;
        }
        forget(s);
        try {
            s.destroyQueuePair();
            s.deregisterControl();
            s.destroyDomain();
            s.destroyId();
        } catch (Throwable t) {
            log.warn("{}: teardown at node '{}' of the connection to {} failed", provider, node.name(),
                s.peerLabel(), t);
        }
        s.tornDown();
    }

    // ------------------------------------------------------------------ setup messages

    /**
     * A setup message's completion (the thread polling the queue pair's CQ): a received one is decoded and
     * answered; a failed one fails the setup unless the handshake is over.
     *
     * @param s the setup
     * @param received whether it is the receive (else the send)
     * @param failure null if it succeeded, else the completion status's name
     * @param message the received bytes (receive only)
     */
    public final void onSetupCompletion(S s, boolean received, String failure, ByteBuffer message) {
        if (failure != null) {
            if (s.connection() == null) {
                execute(() -> setupFailed(s, "setup message " + (received ? "receive" : "send") + " failed: "
                    + failure));
            }
            return;
        }
        if (!received) {
            return;
        }
        SetupMessage m;
        try {
            m = SetupMessage.decode(message);
        } catch (ProtocolException e) {
            execute(() -> setupFailed(s, e.getMessage()));
            return;
        }
        if (s.active) {
            onAnswer(s, m);
        } else {
            onHello(s, m);
        }
    }

    private void send(S s, SetupMessage m) throws RdmxException {
        int len;
        try {
            len = m.encode(s.setupSendArea());
        } catch (ProtocolException e) {
            throw new RdmxException(e.getMessage());
        }
        s.postSetupSend(len);
    }

    /** The node-wide exported regions as the peer of one setup reaches them: each registered in its domain. */
    private List<RemoteRegion> exportedTo(S s) throws RdmxException {
        List<RegionImpl> live = node.exportedRegionList();
        List<RemoteRegion> out = new ArrayList<>(live.size());
        for (RegionImpl r : live) {
            try {
                out.add(new RemoteRegion(r.address(), r.length(), remoteKeyOf(s, r), r.name()));
            } catch (IllegalStateException released) {
                // released since it was listed: not exported
            }
        }
        return out;
    }

    /** The passive side: the peer's HELLO (or, under a secret, its PROVE after our CHALLENGE). */
    private void onHello(S s, SetupMessage msg) {
        String refusal = null;
        if (s.hello != null) {
            // under a secret: the peer's PROVE answers our CHALLENGE
            if (msg.kind != SetupMessage.PROVE) {
                refusal = "expected a proof after the challenge, got kind " + msg.kind;
            } else if (!auth.checkProve(s.hello.auth, s.nonce, s.hello, msg, node.name())) {
                refusal = "cluster secret mismatch: peer '" + s.hello.name + "' failed authentication with '"
                    + node.name() + "'";
            }
        } else if (msg.kind != SetupMessage.HELLO) {
            refusal = "expected a hello, got kind " + msg.kind;
        } else {
            refusal = auth.mismatch(node.name(), msg);
            if (refusal == null && auth.enabled()) {
                refusal = preCheck(msg);
                if (refusal == null) {
                    // our proof first, nothing about our memory: the peer proves itself before it learns a key
                    s.hello = msg;
                    s.nonce = SetupAuth.nonce();
                    try {
                        s.postSetupReceive(); // for its PROVE, posted before it can come
                        send(s, new SetupMessage(SetupMessage.CHALLENGE, node.name(), node.address(), List.of(), null,
                            null, auth.challenge(msg.auth, s.nonce, node.name(), msg.name, node.address())));
                    } catch (RdmxException e) {
                        execute(() -> setupFailed(s, e.getMessage()));
                    }
                    return;
                }
            }
        }
        if (refusal == null) {
            refusal = preCheck(msg);
        }
        if (refusal != null) {
            refuse(s, msg.name, refusal);
            return;
        }
        C c = newConnection(s, msg, msg.address);
        if (auth.enabled()) {
            c.trustAddress(); // the peer's proof covered the address it announced
        }
        if (!node.addConnection(c)) {
            refuse(s, msg.name, "a connection between '" + msg.name + "' and '" + node.name() + "' already exists");
            return;
        }
        try {
            send(s, new SetupMessage(SetupMessage.ACCEPT, node.name(), node.address(), exportedTo(s), null,
                s.probeTarget()));
        } catch (RdmxException e) {
            node.removeConnection(c);
            execute(() -> setupFailed(s, e.getMessage()));
            return;
        }
        s.attach(c);
        if (!node.offerAccepted(c)) {
            execute(() -> c.fail(new ConnectionClosedException(c.peerName(), "node '" + node.name()
                + "' accept backlog of " + node.options().acceptBacklog() + " is full", null)));
        }
    }

    /** What refuses a peer's HELLO whatever the secret: a duplicate, or this node closing; null if none. */
    private String preCheck(SetupMessage s) {
        if (!node.isOpen()) {
            return "node '" + node.name() + "' is closing";
        }
        if (node.connectionTo(s.name) != null) {
            return "a connection between '" + s.name + "' and '" + node.name() + "' already exists";
        }
        return null;
    }

    private void refuse(S s, String peer, String refusal) {
        try {
            send(s, new SetupMessage(SetupMessage.REFUSE, node.name(), node.address(), List.of(), refusal));
            log.debug("{}: node '{}' refuses '{}': {}", provider, node.name(), peer, refusal);
            // the peer disconnects; the sweep destroys the setup if it does not
        } catch (RdmxException e) {
            execute(() -> setupFailed(s, e.getMessage()));
        }
    }

    /** The active side: the listener's answer (or, under a secret, its CHALLENGE first). */
    private void onAnswer(S s, SetupMessage m) {
        if (m.kind == SetupMessage.REFUSE) {
            s.future.completeExceptionally(new RdmxException("connect from '" + node.name() + "' to address="
                + s.dialAddress + " refused by '" + m.name + "': " + m.reason));
            execute(s::close);
            return;
        }
        if (auth.enabled() && !s.proved) {
            // under a secret the peer proves itself first, and learns our regions only from our proof on
            if (m.kind != SetupMessage.CHALLENGE) {
                execute(() -> setupFailed(s, "cluster secret mismatch: node '" + node.name() + "' has a secret, peer '"
                    + m.name + "' answered kind " + m.kind + " without proving it"));
                return;
            }
            if (!auth.checkChallenge(s.nonce, m, node.name())) {
                execute(() -> setupFailed(s, "cluster secret mismatch: peer '" + m.name + "' failed authentication"
                    + " with '" + node.name() + "'"));
                return;
            }
            s.proved = true;
            try {
                s.postSetupReceive(); // for its ACCEPT, posted before it can come
                send(s, new SetupMessage(SetupMessage.PROVE, node.name(), node.address(), exportedTo(s), null,
                    s.probeTarget(), auth.prove(s.nonce, SetupAuth.nonceOf(m), node.name(), m.name, node.address())));
            } catch (RdmxException e) {
                execute(() -> setupFailed(s, e.getMessage()));
            }
            return;
        }
        if (m.kind != SetupMessage.ACCEPT) {
            execute(() -> setupFailed(s, "expected an answer, got kind " + m.kind));
            return;
        }
        C c = newConnection(s, m, s.dialAddress);
        c.trustAddress(); // dialed there
        if (!node.isOpen() || !node.addConnection(c)) {
            s.future.completeExceptionally(new RdmxException("connect from '" + node.name() + "' to address="
                + s.dialAddress + ": a connection to '" + m.name + "' already exists"));
            execute(s::close);
            return;
        }
        s.attach(c);
        if (!s.future.complete(c)) {
            // the caller gave up (timeout) in the meantime
            execute(() -> c.fail(new ConnectionClosedException(m.name, "connect from '" + node.name() + "' to '"
                + m.name + "' was abandoned by its caller", null)));
        }
    }
}
