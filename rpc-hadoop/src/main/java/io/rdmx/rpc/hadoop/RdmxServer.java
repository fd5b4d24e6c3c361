package io.rdmx.rpc.hadoop;

import io.rdmx.channel.ChannelConfig;
import io.rdmx.channel.ChannelEngine;
import io.rdmx.rpc.RpcCall;
import io.rdmx.rpc.RpcConfig;
import io.rdmx.rpc.RpcServer;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.shm.ShmFabric;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.io.Writable;
import org.apache.hadoop.ipc.AlignmentContext;
import org.apache.hadoop.ipc.CallerContext;
import org.apache.hadoop.ipc.RdmxCountingServer;
import org.apache.hadoop.ipc.RdmxIpcBridge;
import org.apache.hadoop.ipc.RdmxServerCall;
import org.apache.hadoop.ipc.RpcConstants;
import org.apache.hadoop.ipc.protobuf.IpcConnectionContextProtos.IpcConnectionContextProto;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcKindProto;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcRequestHeaderProto;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcResponseHeaderProto;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcResponseHeaderProto.RpcErrorCodeProto;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcResponseHeaderProto.RpcStatusProto;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.SecretManager;
import org.apache.hadoop.security.token.TokenIdentifier;
import org.apache.hadoop.util.ProtoUtil;
import org.apache.hadoop.util.StringUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server {@link RdmxRpcEngine#getServer} returns: Hadoop's own {@code ProtobufRpcEngine2.Server} (its TCP
 * listener keeps serving stock clients) plus an rdmx listener whose calls go into the same call queue and are
 * run by the same handlers against the same protocol implementations. The listener is advertised on the TCP port
 * through {@link RdmxEndpoint}. It is left off, logged, under Kerberos/SASL (security enabled), with an
 * {@link AlignmentContext}, or with {@code rdmx.rpc.hadoop.provider=none}; clients then use
 * TCP. A call's answer is written once Hadoop counted the call in its RPC metrics ({@link RdmxCountingServer}), on
 * the thread that counted it or answered it, whichever is later.
 */
public final class RdmxServer extends RdmxCountingServer {
    private static final Logger LOG = LoggerFactory.getLogger(RdmxServer.class);
    /** rdmx method id of a Hadoop call. */
    static final int METHOD_CALL = 1;
    /** rdmx method id of the client's dial check: answered with an empty body. */
    static final int METHOD_PING = 0;
    private static final int CONTEXT_CACHE = 4096;
    /** Bytes of an rdmx request body before Hadoop's own request: the caller's host and connection context. */
    static final int PREFIX_ALLOWANCE = 1024;

    private final Configuration serverConf;
    private final HadoopRdmxConfig rcfg;
    private final int hadoopHandlers;
    private final AtomicBoolean stopped = new AtomicBoolean();
    private final Set<RdmxServerCall> pending = ConcurrentHashMap.newKeySet();
    private final ConcurrentHashMap<ByteBuffer, Context> contexts = new ConcurrentHashMap<>();
    private final LongAdder rdmxCalls = new LongAdder();
    private final String offReason;
    private Node node;
    private ChannelEngine engine;
    private volatile RpcServer rdmx;
    private long advertised;

    /** A caller's identity, decoded once per distinct prefix. */
    private static final class Context {
        final String protocol;
        final UserGroupInformation user;
        final InetAddress host;

        Context(String protocol, UserGroupInformation user, InetAddress host) {
            this.protocol = protocol;
            this.user = user;
            this.host = host;
        }
    }

    RdmxServer(Class<?> protocolClass, Object protocolImpl, Configuration conf, String bindAddress, int port,
        int numHandlers, int numReaders, int queueSizePerHandler, boolean verbose,
        SecretManager<? extends TokenIdentifier> secretManager, String portRangeConfig,
        AlignmentContext alignmentContext) throws IOException {
        super(protocolClass, protocolImpl, conf, bindAddress, port, numHandlers, numReaders, queueSizePerHandler,
            verbose, secretManager, portRangeConfig, alignmentContext);
        this.serverConf = conf;
        this.rcfg = HadoopRdmxConfig.of(conf);
        this.hadoopHandlers = Math.max(1, numHandlers);
        String off = null;
        // a secret manager alone (NameNode, ResourceManager in simple mode: delegation tokens) does not mean SASL;
        // with simple authentication a stock client does not negotiate SASL either
        if (UserGroupInformation.isSecurityEnabled()) {
            off = "Kerberos/SASL (hadoop.security.authentication=kerberos) needs Hadoop's TCP path";
        } else if (alignmentContext != null) {
            off = "an AlignmentContext (observer reads) needs Hadoop's TCP path";
        } else if (rcfg.provider.equals("none")) {
            off = HadoopRdmxConfig.PROVIDER_KEY + "=none";
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
        if (rcfg.provider.equals("shm")) {
            code = RdmxEndpoint.SHM;
            opts.bindAddress(ShmFabric.root().resolve(RdmxEndpoint.shmNodeName(tcp.getPort())).toString());
        } else {
            code = RdmxEndpoint.TCP;
            String host = tcp.getAddress() == null || tcp.getAddress().isAnyLocalAddress() ? "0.0.0.0"
                : tcp.getAddress().getHostAddress();
            opts.bindAddress(host + ":0");
        }
        node = Fabrics.get(rcfg.provider).open(opts.build());
        // every RPC frame is flushed by its sender: no timed flush (see RdmxClients)
        engine = ChannelEngine.open(node, ChannelConfig.builder(1).ringCapacity(rcfg.ringBytes)
            .flushInterval(Duration.ZERO).build());
        int port = code == RdmxEndpoint.SHM ? tcp.getPort() : portOf(node.address());
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
            long bound = Math.max((long) rcfg.maxDataLength + PREFIX_ALLOWANCE, rcfg.maxResponseLength);
            RpcConfig cfg = RpcConfig.builder().maxMessageBytes((int) Math.min(Integer.MAX_VALUE - 64, bound))
                .handlerThreads(threads).build();
            RpcServer.Builder b = RpcServer.builder(engine).handle(METHOD_PING, c -> ByteBuffer.allocate(0))
                .config(cfg);
            // queue: the rdmx reader decodes a call and queues it into Hadoop's call queue; the Hadoop handler
            // that runs it writes the answer (no rdmx handler thread in between); direct: an rdmx handler runs it;
            // reader: the rdmx reader runs it and writes the answer (no hand-off)
            rdmx = (rcfg.direct && !rcfg.onReader ? b.handleAsync(METHOD_CALL, this::serve)
                : b.handleAsyncOnReader(METHOD_CALL, this::serve)).build().start();
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
        if (engine != null) {
            engine.close();
        }
        if (node != null) {
            node.close();
        }
    }

    /**
     * rdmx reader thread (dispatch {@code queue}, {@code reader}) or rdmx handler thread ({@code direct}): decodes
     * one Hadoop call and queues it to Hadoop's call queue (or runs it); whichever thread completes its response (the Hadoop
     * handler once it counted the call in the metrics, or the thread that sends a postponed or deferred response)
     * writes the answer into the client's ring. The body
     * is: the caller's host (writeUTF), a delimited {@code IpcConnectionContextProto} (protocol, user), then
     * exactly what a stock client sends after the 4-byte length: a delimited {@code RpcRequestHeaderProto}, the
     * delimited {@code RequestHeaderProto} and the delimited request message.
     */
    private void serve(RpcCall rc) throws Exception {
        ByteBuffer body = rc.request();
        Context ctx = context(body, rc.peer());
        int dataLength = body.remaining();
        RpcRequestHeaderProto header = RdmxIpcBridge.readDelimited(RpcRequestHeaderProto.getDefaultInstance(), body);
        int callId = header.getCallId();
        int retry = header.getRetryCount();
        if (!header.hasRpcKind() || header.getRpcKind() != RpcKindProto.RPC_PROTOCOL_BUFFER
            || header.getRpcOp() != RpcRequestHeaderProto.OperationProto.RPC_FINAL_PACKET || callId < 0) {
            rc.respond(error(callId, retry, header, RpcStatusProto.FATAL, RpcErrorCodeProto.FATAL_INVALID_RPC_HEADER,
                new IOException("rdmx listener of " + getServerName() + " takes protobuf calls only: rpcKind="
                    + header.getRpcKind() + ", rpcOp=" + header.getRpcOp() + ", callId=" + callId + " from '"
                    + rc.peer() + "'")));
            return;
        }
        if (dataLength > rcfg.maxDataLength) {               // as the stock server: fatal, naming the sizes
            rc.respond(error(callId, retry, header, RpcStatusProto.FATAL, RpcErrorCodeProto.FATAL_INVALID_RPC_HEADER,
                new IOException("Requested data length " + dataLength + " is longer than maximum configured RPC "
                    + "length " + rcfg.maxDataLength + ".  RPC came from " + rc.peer() + " over rdmx")));
            return;
        }
        if (ctx.user == null) {
            rc.respond(error(callId, retry, header, RpcStatusProto.FATAL, RpcErrorCodeProto.FATAL_UNAUTHORIZED,
                new IOException("no user in the connection context of '" + rc.peer() + "'")));
            return;
        }
        Writable request;
        try {
            request = RdmxIpcBridge.readProtobufRequest(this, body, serverConf);
        } catch (IOException | RuntimeException e) {
            rc.respond(error(callId, retry, header, RpcStatusProto.FATAL,
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
                rc.respond(answer);
                return;
            }
            try {
                rc.respond(error(callId, retry, header, RpcStatusProto.ERROR, RpcErrorCodeProto.ERROR_RPC_SERVER,
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

    /** The context prefix, decoded once per distinct bytes (same client host, protocol and user). */
    private Context context(ByteBuffer body, String peer) throws IOException {
        int start = body.position();
        int end = prefixEnd(body, start, peer);
        ByteBuffer key = body.duplicate().position(start).limit(end);
        Context c = contexts.get(key);
        if (c != null) {                     // the usual case: no parsing, no copy
            body.position(end);
            return c;
        }
        DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(body.array(),
            body.arrayOffset() + start, body.remaining()));
        String host = in.readUTF();
        body.position(start + 2 + (body.getShort(start) & 0xFFFF));
        IpcConnectionContextProto icc = RdmxIpcBridge.readDelimited(IpcConnectionContextProto.getDefaultInstance(),
            body);
        UserGroupInformation ugi = ProtoUtil.getUgi(icc);
        InetAddress addr = null;
        try {
            addr = host.isEmpty() ? null : InetAddress.getByName(host);
        } catch (IOException e) {
            LOG.debug("rdmx caller '{}' sent an unparsable host '{}'", peer, host);
        }
        String protocol = icc.hasProtocol() ? icc.getProtocol() : null;
        if (ugi != null) {
            RdmxIpcBridge.authorize(this, ugi, protocol, addr);  // throws AuthorizationException: not cached
        }
        c = new Context(protocol, ugi, addr);
        if (contexts.size() >= CONTEXT_CACHE) {
            contexts.clear();
        }
        byte[] copy = new byte[key.remaining()];
        key.get(copy);
        contexts.put(ByteBuffer.wrap(copy), c);
        return c;
    }

    /**
     * Where the context prefix ends: after the host (2-byte length and its bytes) and the varint-delimited
     * connection context, checked against the body's bounds.
     */
    private static int prefixEnd(ByteBuffer body, int start, String peer) throws IOException {
        int limit = body.limit();
        if (limit - start < 2) {
            throw new IOException("rdmx request from '" + peer + "' is " + (limit - start) + " bytes, too short for"
                + " its context prefix");
        }
        int at = start + 2 + (body.getShort(start) & 0xFFFF);
        int len = 0;
        for (int shift = 0; ; shift += 7) {
            if (at >= limit || shift > 28) {
                throw new IOException("rdmx request from '" + peer + "' has a truncated or malformed context prefix");
            }
            byte b = body.get(at++);
            len |= (b & 0x7F) << shift;
            if (b >= 0) {
                break;
            }
        }
        if (len < 0 || len > limit - at) {
            throw new IOException("rdmx request from '" + peer + "' has a connection context of " + len
                + " bytes, past its end");
        }
        return at + len;
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
