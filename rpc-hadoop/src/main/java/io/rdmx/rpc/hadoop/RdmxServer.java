package io.rdmx.rpc.hadoop;

import io.rdmx.channel.ChannelConfig;
import io.rdmx.channel.ChannelEngine;
import io.rdmx.rpc.RpcBody;
import io.rdmx.rpc.RpcCall;
import io.rdmx.rpc.RpcConfig;
import io.rdmx.rpc.RpcRequestGate;
import io.rdmx.rpc.RpcServer;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import javax.security.sasl.SaslException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.io.Writable;
import org.apache.hadoop.ipc.AlignmentContext;
import org.apache.hadoop.ipc.CallerContext;
import org.apache.hadoop.ipc.RdmxCountingServer;
import org.apache.hadoop.ipc.RdmxIpcBridge;
import org.apache.hadoop.ipc.RdmxServerCall;
import org.apache.hadoop.ipc.RetriableException;
import org.apache.hadoop.ipc.RpcConstants;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcKindProto;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcRequestHeaderProto;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcResponseHeaderProto;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcResponseHeaderProto.RpcErrorCodeProto;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcResponseHeaderProto.RpcStatusProto;
import org.apache.hadoop.security.AccessControlException;
import org.apache.hadoop.security.SaslRpcServer.AuthMethod;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.SecretManager;
import org.apache.hadoop.security.token.TokenIdentifier;
import org.apache.hadoop.util.StringUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server {@link RdmxRpcEngine#getServer} returns: Hadoop's own {@code ProtobufRpcEngine2.Server} (its TCP
 * listener keeps serving stock clients) plus an rdmx listener whose calls go into the same call queue and are
 * run by the same handlers against the same protocol implementations. The listener is advertised on the TCP port
 * through {@link RdmxEndpoint}. Under Kerberos it takes calls of SASL sessions only: a client carries Hadoop's
 * SASL negotiation ({@code RpcSaslProto}, KERBEROS/GSSAPI) over rdmx first ({@link #METHOD_SASL}, state in a
 * {@link SaslSession} per caller), then names its session in each call ({@link #METHOD_SECURE_CALL}), and the
 * call runs as the user the SASL server authenticated, as on a stock connection; with the QOP integrity or privacy
 * ({@code hadoop.rpc.protection}) each call and answer of the session is wrapped by the negotiated SASL client and
 * server, as on a stock connection. A server with a secret manager also offers TOKEN (delegation tokens,
 * DIGEST-MD5 against its secret manager) before KERBEROS, in simple mode too, where calls without a session stay
 * simple ({@link SaslListener}). It is left off, logged, with an
 * {@link AlignmentContext}, or with {@code rdmx.rpc.hadoop.provider=none}; clients then use TCP. A call's answer is written once Hadoop counted the call in its RPC metrics ({@link RdmxCountingServer}), on
 * the thread that counted it or answered it, whichever is later.
 */
public final class RdmxServer extends RdmxCountingServer {
    private static final Logger LOG = LoggerFactory.getLogger(RdmxServer.class);
    /** rdmx method id of a Hadoop call. */
    static final int METHOD_CALL = 1;
    /** rdmx method id of the client's dial check: answered with an empty body. */
    static final int METHOD_PING = 0;
    /** rdmx method id of one message of Hadoop's SASL negotiation (Kerberized servers only). */
    static final int METHOD_SASL = 2;
    /** rdmx method id of a Hadoop call of an authenticated SASL session (Kerberized servers only). */
    static final int METHOD_SECURE_CALL = 3;
    /** The largest SASL message (session id, headers, token) a caller may send. */
    static final int SASL_MAX_BYTES = 128 * 1024;
    /** The most SASL messages of one negotiation before it must have succeeded (Kerberos needs three). */
    static final int SASL_MAX_ROUNDS = 8;
    /** The most SASL sessions one caller keeps; the least recently used one is forgotten beyond it. */
    static final int SASL_SESSIONS_PER_CALLER = 64;
    /** Bytes of an rdmx request body before Hadoop's own request: the caller's host and connection context. */
    static final int PREFIX_ALLOWANCE = 1024;
    /** Bytes a SASL token may add to what it wraps (a Kerberos wrap token adds tens of bytes). */
    static final int WRAP_ALLOWANCE = 1024;

    private final Configuration serverConf;
    private final HadoopRdmxConfig rcfg;
    private final int hadoopHandlers;
    private final AtomicBoolean stopped = new AtomicBoolean();
    private final Set<RdmxServerCall> pending = ConcurrentHashMap.newKeySet();
    private final Callers callers;
    /** Calls whose authorization or queueing may block, taken off the rdmx reader thread; null until started. */
    private volatile ThreadPoolExecutor slowPath;
    private final LongAdder rdmxCalls = new LongAdder();
    private final String offReason;
    /** Kerberos: calls are taken from authenticated SASL sessions only. */
    private final boolean kerberos;
    /** The methods offered and the negotiations (TOKEN with a secret manager, KERBEROS; SIMPLE alone answers). */
    private final SaslListener sasl;
    private Node node;
    private ChannelEngine engine;
    private volatile RpcServer rdmx;
    private long advertised;

    RdmxServer(Class<?> protocolClass, Object protocolImpl, Configuration conf, String bindAddress, int port,
        int numHandlers, int numReaders, int queueSizePerHandler, boolean verbose,
        SecretManager<? extends TokenIdentifier> secretManager, String portRangeConfig,
        AlignmentContext alignmentContext) throws IOException {
        super(protocolClass, protocolImpl, conf, bindAddress, port, numHandlers, numReaders, queueSizePerHandler,
            verbose, secretManager, portRangeConfig, alignmentContext);
        this.serverConf = conf;
        this.callers = new Callers(this, getServerName());
        this.rcfg = HadoopRdmxConfig.of(conf);
        this.hadoopHandlers = Math.max(1, numHandlers);
        String off = null;
        // a secret manager alone (NameNode, ResourceManager in simple mode: delegation tokens) does not mean SASL;
        // with simple authentication a stock client does not negotiate SASL either
        this.kerberos = UserGroupInformation.isSecurityEnabled();
        this.sasl = new SaslListener(getServerName(), conf, secretManager);
        if (alignmentContext != null) {
            off = "an AlignmentContext (observer reads) needs Hadoop's TCP path";
        } else if (rcfg.provider.equals(HadoopRdmxConfig.OFF)) {
            off = HadoopRdmxConfig.PROVIDER_KEY + "=" + HadoopRdmxConfig.OFF;
        }
        if (off == null) {
            try {
                openListener();
            } catch (RdmxException | RuntimeException e) {
                closeRdmx();
                off = "the rdmx " + rcfg.provider + " listener could not open: " + e.getMessage();
            }
        }
        offReason = off;
        if (off != null) {
            LOG.info("Hadoop RPC server {} on {}: no rdmx listener ({}); clients use TCP", getServerName(),
                getListenerAddress(), off);
        }
    }

    private void openListener() throws RdmxException {
        InetSocketAddress tcp = getListenerAddress();
        int code;
        NodeOptions.Builder opts = NodeOptions.builder().name("hadoop-ipc-" + tcp.getPort());
        if (rcfg.secret != null) {
            opts.secret(rcfg.secret);             // Hadoop's configuration (a credential store) first
        }
        Fabric fabric = rcfg.listenerFabric();
        code = RdmxEndpoint.kindOf(fabric.traits());
        if (code == RdmxEndpoint.LOCAL) {
            opts.bindAddress(fabric.addressOf(RdmxEndpoint.nodeName(tcp.getPort()), null));
        } else {
            String host = tcp.getAddress() == null || tcp.getAddress().isAnyLocalAddress() ? "0.0.0.0"
                : tcp.getAddress().getHostAddress();
            opts.bindAddress(host + ":0");
        }
        node = fabric.open(opts.build());
        // every RPC frame is flushed by its sender: no timed flush (see RdmxClients)
        engine = ChannelEngine.open(node, ChannelConfig.builder(1).ringCapacity(rcfg.ringBytes)
            .flushInterval(Duration.ZERO).build());
        int port = code == RdmxEndpoint.LOCAL ? tcp.getPort() : portOf(node.address());
        advertised = RdmxEndpoint.encode(code, port, rcfg.ringBytes);
        RdmxIpcBridge.advertise(this, RdmxEndpoint.class, advertised);
    }

    private static int portOf(String address) {
        int i = address.lastIndexOf(':');
        return Integer.parseInt(address.substring(i + 1));
    }

    /** @return the rdmx listener's address, or null when it is off */
    public String rdmxAddress() {
        RpcServer r = rdmx;
        return r == null ? null : r.address();
    }

    /** @return why there is no rdmx listener, or null when there is one */
    public String rdmxOffReason() {
        return offReason;
    }

    /** @return the channel configuration of the rdmx listener's engine, or null without one (tests) */
    ChannelConfig rdmxChannelConfig() {
        ChannelEngine e = engine;
        return e == null ? null : e.config();
    }

    /** @return requests the rdmx listener refused before reassembling them (too large), tests */
    long rdmxRequestsRefused() {
        RpcServer r = rdmx;
        return r == null ? 0 : r.callsRefused();
    }

    /** @return where the rdmx listener's secret comes from ({@code NodeOptions.secretSource()}), or null without one */
    String rdmxSecretSource() {
        Node n = node;
        return n == null ? null : n.options().secretSource();
    }

    /** @return SASL sessions authenticated over rdmx (Kerberos) */
    public long rdmxSaslSessions() {
        return sasl.established();
    }

    /** @return SASL negotiations over rdmx that ended in a refusal (or were given up by the client) */
    public long rdmxSaslRefused() {
        return sasl.refused();
    }

    /** @return Hadoop calls this server received over rdmx */
    public long rdmxCalls() {
        return rdmxCalls.sum();
    }

    @Override
    public synchronized void start() {
        super.start();
        if (engine != null && rdmx == null && !stopped.get()) {
            int threads = rcfg.handlerThreads > 0 ? rcfg.handlerThreads : Math.max(4, 2 * hadoopHandlers);
            // rdmx's bound applies to requests and responses alike: requests are checked exactly against
            // ipc.maximum.data.length in serve(); the rdmx bound leaves room for responses up to
            // ipc.maximum.response.length and for the context prefix
            long bound = Math.max((long) rcfg.maxDataLength + PREFIX_ALLOWANCE, rcfg.maxResponseLength)
                + (sasl.takesSessions() ? SaslSession.ID_BYTES + WRAP_ALLOWANCE : 0);
            RpcConfig cfg = RpcConfig.builder().maxMessageBytes((int) Math.min(Integer.MAX_VALUE - 64, bound))
                .handlerThreads(threads).build();
            slowPath = slowPathPool(threads, cfg.handlerQueue());
            RpcServer.Builder b = RpcServer.builder(engine).handle(METHOD_PING, c -> ByteBuffer.allocate(0))
                .config(cfg).gate(this::admit);
            // queue: the rdmx reader decodes a call and queues it into Hadoop's call queue; the Hadoop handler
            // that runs it writes the answer (no rdmx handler thread in between); direct: an rdmx handler runs it;
            // reader: the rdmx reader runs it and writes the answer (no hand-off)
            if (rcfg.direct && !rcfg.onReader) {
                b.handleAsync(METHOD_CALL, rc -> serve(rc, false));
            } else {
                b.handleAsyncOnReader(METHOD_CALL, rc -> serve(rc, true));
            }
            // SASL on an rdmx handler thread (GSSAPI may take a while); a SIMPLE-only listener answers SUCCESS
            b.handle(METHOD_SASL, rc -> sasl.handle(rc, callers.of(rc)));
            if (sasl.takesSessions()) {
                // calls of sessions as calls are served
                if (rcfg.direct && !rcfg.onReader) {
                    // wrapped calls must be unwrapped in the order they arrived: on the reader, then run by a
                    // pool thread of this server (bounded like the rdmx handlers; refused, retriable, when full)
                    b.handleAsyncOnReader(METHOD_SECURE_CALL, this::serveOffReader);
                } else {
                    b.handleAsyncOnReader(METHOD_SECURE_CALL, rc -> serve(rc, true));
                }
            }
            rdmx = b.build().start();
            LOG.info("Hadoop RPC server {}: rdmx {} listener {} beside TCP {} ({} rdmx handler threads, {} dispatch)",
                getServerName(), rcfg.provider, rdmx.address(), getListenerAddress(), threads,
                rcfg.onReader ? "reader" : rcfg.direct ? "direct" : "queue");
        }
    }

    @Override
    public synchronized void stop() {
        if (stopped.compareAndSet(false, true)) {
            if (engine != null) {
                RdmxIpcBridge.withdraw(this, RdmxEndpoint.class);
            }
            closeRdmx();
            IOException gone = new IOException("Hadoop RPC server " + getServerName() + " stopped");
            for (RdmxServerCall c : pending) {
                c.response().completeExceptionally(gone);       // answers nobody: the listener is closed
            }
            super.stop();               // Hadoop's own stop() is not idempotent (a second one throws NPE)
        }
    }

    /** Tests: the rdmx listener goes away but stays advertised, as behind a firewall that drops its port. */
    void closeRdmxListenerKeepingTheAdvertisement() {
        closeRdmx();
    }

    private void closeRdmx() {
        RpcServer r = rdmx;
        rdmx = null;
        if (r != null) {
            r.close();
        }
        ThreadPoolExecutor p = slowPath;
        if (p != null) {
            p.shutdownNow();
        }
        if (engine != null) {
            engine.close();
        }
        if (node != null) {
            node.close();
        }
    }

    /** The pool of {@link #slowPath}: bounded threads and queue; a call it cannot take is refused, retriable. */
    private ThreadPoolExecutor slowPathPool(int threads, int queue) {
        AtomicInteger n = new AtomicInteger();
        String name = "rdmx-hadoop-admit-" + getListenerAddress().getPort() + "-";
        ThreadPoolExecutor p = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(queue), r -> {
                Thread t = new Thread(r, name + n.incrementAndGet());
                t.setDaemon(true);
                return t;
            });
        p.allowCoreThreadTimeOut(true);
        return p;
    }

    /**
     * rdmx reader thread: a Hadoop call's first fragment, before anything of it is reassembled. Refuses a request
     * whose declared length, less the rdmx context prefix, is over {@code ipc.maximum.data.length}, exactly as the
     * stock server checks the length a call declares; a prefix not wholly in the fragment counts as none (the
     * whole declared length is checked).
     */
    private RpcRequestGate.Refusal admit(int method, String peer, String address, int length, ByteBuffer first) {
        if (method == METHOD_SASL) {
            return length <= SASL_MAX_BYTES ? null : new RpcRequestGate.Refusal(IOException.class.getName(),
                "SASL message of " + length + " bytes from rdmx caller '" + peer + "' (" + address + ") is longer"
                    + " than the " + SASL_MAX_BYTES + " bytes Hadoop RPC server " + getServerName() + " takes");
        }
        if (method != METHOD_CALL && method != METHOD_SECURE_CALL) {
            return null;
        }
        if (method == METHOD_SECURE_CALL) {
            Callers.Caller c = callers.known(peer);
            SaslSession s = c == null || first.limit() < SaslSession.ID_BYTES ? null
                : SaslListener.session(c, first.duplicate().position(0).limit(SaslSession.ID_BYTES));
            if (s != null && s.wraps()) {
                // wrapped: the plain length is checked exactly once unwrapped; the token may be a little longer
                long max = (long) SaslSession.ID_BYTES + PREFIX_ALLOWANCE + rcfg.maxDataLength + WRAP_ALLOWANCE;
                return length <= max ? null : new RpcRequestGate.Refusal(IOException.class.getName(), "Wrapped call"
                    + " of " + length + " bytes from rdmx caller '" + peer + "' (" + address + ") in a SASL session"
                    + " with QOP " + s.qop() + " is longer than the " + max + " bytes Hadoop RPC server "
                    + getServerName() + " takes (ipc.maximum.data.length " + rcfg.maxDataLength + ")");
            }
        }
        int prefix;
        try {
            prefix = Callers.prefixEnd(first, method == METHOD_SECURE_CALL ? SaslSession.ID_BYTES : 0, peer);
        } catch (IOException e) {
            prefix = 0;
        }
        long dataLength = (long) length - prefix;
        if (dataLength <= rcfg.maxDataLength) {
            return null;
        }
        return new RpcRequestGate.Refusal(IOException.class.getName(), "Requested data length " + dataLength
            + " is longer than maximum configured RPC length " + rcfg.maxDataLength + ".  RPC came from " + peer
            + " (" + address + ") over rdmx");
    }

    /**
     * rdmx reader thread (dispatch {@code queue}, {@code reader}; {@code onReader} true) or rdmx handler thread
     * ({@code direct}): one Hadoop call. The caller's address is the one its connection really comes from
     * ({@link RpcCall#callerAddress()}); a caller the transport cannot place is refused. Its context (protocol, user)
     * is authorized once per caller connection and prefix, and again after a refresh of the service ACLs or the
     * proxy-user rules; on the reader thread, a call that needs authorizing (group and host look-ups may block)
     * or finds Hadoop's call queue full goes to a pool thread of this server, so the reader never waits. Then the
     * call is queued to Hadoop's call queue (or run); whichever thread completes its response (the Hadoop handler
     * once it counted the call in the metrics, or the thread that sends a postponed or deferred response) writes
     * the answer into the client's ring. The body is: the host the client names (writeUTF; ignored), a delimited
     * {@code IpcConnectionContextProto} (protocol, user), then exactly what a stock client sends after the 4-byte
     * length: a delimited {@code RpcRequestHeaderProto}, the delimited {@code RequestHeaderProto} and the delimited
     * request message.
     */
    private void serve(RpcCall rc, boolean onReader) throws Exception {
        Callers.Caller caller = callers.of(rc);
        ByteBuffer request = rc.request();
        boolean inSession = rc.method() == METHOD_SECURE_CALL;
        if (kerberos && !inSession) {
            refuseSimple(rc, request);
            return;
        }
        // unwrapped here, in arrival order: this is the rdmx reader for METHOD_SECURE_CALL
        ByteBuffer body = inSession ? unwrapped(rc, caller, request) : request;
        if (body == null) {
            return;                           // did not unwrap: refused, the session is over
        }
        Callers.Context ctx = callers.cachedContext(caller, body, rc.peer(), inSession);
        if (ctx == null) {
            if (onReader) {
                offload(rc, () -> serveSlowly(rc, caller, body, inSession));
                return;
            }
            ctx = callers.authorize(caller, body, rc.peer(), inSession);
        }
        proceed(rc, body, ctx, onReader);
    }

    /**
     * rdmx reader thread, {@code direct} dispatch under Kerberos: unwraps a call of a wrapping session here (in
     * arrival order), then serves it on a pool thread of this server, as an rdmx handler thread would.
     */
    private void serveOffReader(RpcCall rc) throws Exception {
        Callers.Caller caller = callers.of(rc);
        ByteBuffer body = unwrapped(rc, caller, rc.request());
        if (body == null) {
            return;                           // did not unwrap: refused, the session is over
        }
        offload(rc, () -> {
            try {
                Callers.Context ctx = callers.cachedContext(caller, body, rc.peer(), true);
                proceed(rc, body, ctx != null ? ctx : callers.authorize(caller, body, rc.peer(), true), false);
            } catch (Exception e) {
                refuse(rc, e);
            }
        });
    }

    /** A slow-path pool thread: authorizes the caller's context, then queues (or runs) the call. */
    private void serveSlowly(RpcCall rc, Callers.Caller caller, ByteBuffer body, boolean inSession) {
        try {
            proceed(rc, body, callers.authorize(caller, body, rc.peer(), inSession), false);
        } catch (Exception e) {
            refuse(rc, e);
        }
    }

    /**
     * A call of a session with QOP integrity or privacy arrives as its session id, then the SASL token the client's
     * SASL client wrapped the rest into (host, connection context, headers, request): unwrapped here, in arrival
     * order (the rdmx reader thread, with every dispatch), as a stock reader unwraps a connection's
     * messages. A token that does not unwrap (tampered, replayed, out of order) ends that session only: the call is
     * refused, naming the caller, and the caller's next call negotiates again.
     *
     * @return the call's body (the session id, then the plain bytes), {@code request} itself for a session that
     *     does not wrap (or an unknown one: refused later), or null if the call was refused
     */
    private ByteBuffer unwrapped(RpcCall rc, Callers.Caller caller, ByteBuffer request) {
        int start = request.position();
        if (request.remaining() < SaslSession.ID_BYTES) {
            return request;
        }
        SaslSession session = SaslListener.session(caller,
            request.duplicate().position(start).limit(start + SaslSession.ID_BYTES));
        if (session == null || !session.wraps()) {
            return request;
        }
        byte[] token = new byte[request.remaining() - SaslSession.ID_BYTES];
        request.duplicate().position(start + SaslSession.ID_BYTES).get(token);
        byte[] plain;
        try {
            plain = session.unwrap(token, rc.peer());
        } catch (SaslException | RuntimeException e) {
            SaslListener.forget(caller, session);
            sasl.refusedOne();
            LOG.warn("Hadoop RPC server {}: a call of {} bytes of rdmx caller '{}' ({}) in its SASL session (QOP {})"
                + " did not unwrap; the session is over: {}", getServerName(), token.length, rc.peer(),
                caller.address, session.qop(), e.toString());
            refuse(rc, new SaslException("a call of " + token.length + " bytes of rdmx caller '" + rc.peer()
                + "' in its SASL session (QOP " + session.qop() + ") with Hadoop RPC server " + getServerName()
                + " did not unwrap (" + e.getMessage() + "); the session is over"));
            return null;
        }
        ByteBuffer body = ByteBuffer.allocate(SaslSession.ID_BYTES + plain.length);
        body.put(request.duplicate().position(start).limit(start + SaslSession.ID_BYTES)).put(plain).flip();
        return body;
    }

    /**
     * Answers a call: as is, or, in a session with QOP integrity or privacy, wrapped by its SASL server (and written
     * under the session's lock, so answers reach the client in the order they were wrapped). Never throws: an
     * answer that cannot be wrapped is answered with the error.
     */
    private static void answer(RpcCall rc, Callers.Context ctx, Object response) {
        SaslSession session = ctx.session;
        try {
            if (session == null || !session.wraps()) {
                if (response instanceof RpcBody) {
                    rc.respond((RpcBody) response);
                } else {
                    rc.respond((ByteBuffer) response);
                }
                return;
            }
            byte[] plain;
            if (response instanceof RpcBody) {
                RpcBody b = (RpcBody) response;
                ByteBuffer buf = ByteBuffer.allocate(b.length());
                b.writeTo(buf);
                plain = buf.array();
            } else {
                ByteBuffer b = ((ByteBuffer) response).duplicate();
                plain = new byte[b.remaining()];
                b.get(plain);
            }
            session.wrapAndSend(plain, rc.peer(), token -> rc.respond(ByteBuffer.wrap(token)));
        } catch (IOException | RuntimeException e) {
            refuse(rc, e);
        }
    }

    /** Answers a call the slow path could not serve, as the rdmx layer answers a handler that threw. */
    private static void refuse(RpcCall rc, Exception e) {
        if (!rc.isAnswered()) {
            try {
                rc.respondError(e.getClass().getName(), e.getMessage());
            } catch (IllegalStateException answered) {
                // answered meanwhile: nothing to add
            }
        }
    }

    /** Reader thread: runs work on the slow-path pool; refuses the call (retriable) if the pool is full. */
    private void offload(RpcCall rc, Runnable work) {
        ThreadPoolExecutor p = slowPath;
        try {
            if (p == null) {
                throw new RejectedExecutionException("stopped");
            }
            p.execute(work);
        } catch (RejectedExecutionException e) {
            refuse(rc, new RetriableException("Hadoop RPC server " + getServerName() + " is too busy for call of '"
                + rc.peer() + "' over rdmx: " + p.getQueue().size() + " calls wait for its " + p.getMaximumPoolSize()
                + " threads that authorize and queue calls"));
        }
    }

    /** After the context: decodes the call and queues it (or runs it); {@code onReader}: without blocking. */
    private void proceed(RpcCall rc, ByteBuffer body, Callers.Context ctx, boolean onReader) throws Exception {
        int dataLength = body.remaining();
        RpcRequestHeaderProto header = RdmxIpcBridge.readDelimited(RpcRequestHeaderProto.getDefaultInstance(), body);
        int callId = header.getCallId();
        int retry = header.getRetryCount();
        if (!header.hasRpcKind() || header.getRpcKind() != RpcKindProto.RPC_PROTOCOL_BUFFER
            || header.getRpcOp() != RpcRequestHeaderProto.OperationProto.RPC_FINAL_PACKET || callId < 0) {
            answer(rc, ctx, error(callId, retry, header, RpcStatusProto.FATAL,
                RpcErrorCodeProto.FATAL_INVALID_RPC_HEADER,
                new IOException("rdmx listener of " + getServerName() + " takes protobuf calls only: rpcKind="
                    + header.getRpcKind() + ", rpcOp=" + header.getRpcOp() + ", callId=" + callId + " from '"
                    + rc.peer() + "'")));
            return;
        }
        if (dataLength > rcfg.maxDataLength) {               // the gate refused it already; kept as a last check
            answer(rc, ctx, error(callId, retry, header, RpcStatusProto.FATAL,
                RpcErrorCodeProto.FATAL_INVALID_RPC_HEADER,
                new IOException("Requested data length " + dataLength + " is longer than maximum configured RPC "
                    + "length " + rcfg.maxDataLength + ".  RPC came from " + rc.peer() + " over rdmx")));
            return;
        }
        if (ctx.user == null) {
            answer(rc, ctx, error(callId, retry, header, RpcStatusProto.FATAL, RpcErrorCodeProto.FATAL_UNAUTHORIZED,
                new IOException("no user in the connection context of '" + rc.peer() + "'")));
            return;
        }
        Writable request;
        try {
            request = RdmxIpcBridge.readProtobufRequest(this, body, serverConf);
        } catch (IOException | RuntimeException e) {
            answer(rc, ctx, error(callId, retry, header, RpcStatusProto.FATAL,
                RpcErrorCodeProto.FATAL_DESERIALIZING_REQUEST,
                new IOException("IPC server unable to read call parameters: " + e.getMessage(), e)));
            return;
        }
        CallerContext cc = null;
        if (header.hasCallerContext()) {
            cc = new CallerContext.Builder(header.getCallerContext().getContext())
                .setSignature(header.getCallerContext().getSignature().toByteArray()).build();
        }
        RdmxServerCall call = new RdmxServerCall(this, callId, retry, header.getClientId().toByteArray(), cc,
            ctx.protocol, request, ctx.user, ctx.host);
        call.setPriorityLevel(RdmxIpcBridge.priorityLevel(this, call));
        pending.add(call);
        // runs on the thread that completes the response: it writes the answer itself
        call.response().whenComplete((answer, failure) -> {
            pending.remove(call);
            if (failure == null) {
                answer(rc, ctx, answer);
                return;
            }
            try {
                answer(rc, ctx, error(callId, retry, header, RpcStatusProto.ERROR, RpcErrorCodeProto.ERROR_RPC_SERVER,
                    failure instanceof IOException ? (IOException) failure : new IOException(failure)));
            } catch (IOException e) {
                rc.respondError(e.getClass().getName(), e.getMessage());
            }
        });
        if (stopped.get()) {
            call.response().completeExceptionally(new IOException("Hadoop RPC server " + getServerName()
                + " stopped"));
            return;
        }
        rdmxCalls.increment();
        RdmxRpcEngine.SERVER_CALLS.increment();
        if (rcfg.direct) {
            RdmxIpcBridge.runAsHandler(this, call);
            return;
        }
        if (onReader) {
            boolean queued;
            try {
                queued = RdmxIpcBridge.offerCall(this, call);
            } catch (IOException e) {         // the scheduler's back-off (RetriableException)
                call.response().completeExceptionally(e);
                return;
            }
            if (!queued) {                    // Hadoop's call queue is full: a pool thread waits for room
                offload(rc, () -> queue(call));
            }
            return;
        }
        queue(call);
    }

    /** Any thread but the rdmx reader: queues a call into Hadoop's call queue, waiting for room as a stock reader. */
    private void queue(RdmxServerCall call) {
        try {
            queueCall(call);
        } catch (IOException e) {             // the scheduler's back-off (RetriableException) or overflow
            call.response().completeExceptionally(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            call.response().completeExceptionally(new InterruptedIOException("Hadoop RPC server "
                + getServerName() + " stopping"));
        }
    }

    /**
     * Under Kerberos, a call without a SASL session (a client with simple authentication): refused as a stock
     * server refuses a connection whose method it does not take, with its words and error code.
     */
    private void refuseSimple(RpcCall rc, ByteBuffer body) throws IOException {
        int end = Callers.prefixEnd(body, body.position(), rc.peer());
        body.position(end);
        RpcRequestHeaderProto header = RdmxIpcBridge.readDelimited(RpcRequestHeaderProto.getDefaultInstance(), body);
        sasl.refusedOne();
        LOG.warn("Hadoop RPC server {}: rdmx caller '{}' ({}) refused: SIMPLE authentication is not enabled",
            getServerName(), rc.peer(), rc.callerAddress());
        rc.respond(error(header.getCallId(), header.getRetryCount(), header, RpcStatusProto.FATAL,
            RpcErrorCodeProto.FATAL_UNAUTHORIZED, new AccessControlException(AuthMethod.SIMPLE
                + " authentication is not enabled.  Available:" + sasl.available())));
    }

    private ByteBuffer error(int callId, int retry, RpcRequestHeaderProto header, RpcStatusProto status,
        RpcErrorCodeProto code, IOException e) throws IOException {
        String msg = StringUtils.stringifyException(e);
        String cls = e.getClass().getName();
        if (msg.startsWith(cls + ": ")) {
            msg = msg.substring(cls.length() + 2);
        }
        RpcResponseHeaderProto.Builder h = RpcResponseHeaderProto.newBuilder().setCallId(Math.max(callId, 0))
            .setStatus(status).setServerIpcVersionNum(RpcConstants.CURRENT_VERSION).setExceptionClassName(cls)
            .setErrorMsg(msg).setErrorDetail(code).setRetryCount(retry);
        if (header.hasClientId()) {
            h.setClientId(header.getClientId());
        }
        return RdmxIpcBridge.encodeResponse(h.build(), null);
    }
}
