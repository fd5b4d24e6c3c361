package io.rdmx.rpc.hadoop;

import io.rdmx.rpc.RemoteRpcException;
import io.rdmx.rpc.RpcBody;
import io.rdmx.rpc.RpcException;
import io.rdmx.rpc.RpcPeerException;
import io.rdmx.rpc.RpcResponseReader;
import io.rdmx.rpc.RpcTimeoutException;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.security.PrivilegedExceptionAction;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.SocketFactory;
import java.util.function.UnaryOperator;
import javax.security.sasl.Sasl;
import javax.security.sasl.SaslClient;
import javax.security.sasl.SaslException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonConfigurationKeysPublic;
import org.apache.hadoop.ipc.AlignmentContext;
import org.apache.hadoop.ipc.Client;
import org.apache.hadoop.ipc.ProtobufRpcEngine2;
import org.apache.hadoop.ipc.RPC;
import org.apache.hadoop.ipc.RdmxIpcBridge;
import org.apache.hadoop.ipc.RemoteException;
import org.apache.hadoop.ipc.RpcInvocationHandler;
import org.apache.hadoop.ipc.protobuf.ProtobufRpcEngine2Protos.RequestHeaderProto;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcRequestHeaderProto;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcResponseHeaderProto;
import org.apache.hadoop.net.NetUtils;
import org.apache.hadoop.security.SaslRpcClient;
import org.apache.hadoop.security.SaslRpcServer.AuthMethod;
import org.apache.hadoop.security.SecurityUtil;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.TokenInfo;
import org.apache.hadoop.security.token.TokenSelector;
import org.apache.hadoop.thirdparty.protobuf.CodedInputStream;
import org.apache.hadoop.thirdparty.protobuf.Message;
import org.apache.hadoop.thirdparty.protobuf.ServiceException;
import org.apache.hadoop.util.ProtoUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client side of one proxy: a protobuf call over rdmx when the server has an rdmx listener, over Hadoop's TCP
 * client ({@code ProtobufRpcEngine2}'s own proxy, made on first need) otherwise. Hadoop's semantics kept: the call
 * id and retry count of {@code Client} (a retry proxy's ids are honoured), the shared client's 16-byte client id
 * in every request header, server failures as {@link RemoteException} inside {@link ServiceException}, local
 * failures through {@link NetUtils#wrapException} (so retry policies see {@link ConnectException},
 * {@link SocketTimeoutException}, {@link EOFException}).
 */
final class RdmxInvoker implements RpcInvocationHandler {
    private static final Logger LOG = LoggerFactory.getLogger(RdmxInvoker.class);
    private static final String LOCAL_HOST = localHost();

    private final Class<?> protocol;
    private final long clientVersion;
    private final Client.ConnectionId connId;
    private final Configuration conf;
    private final SocketFactory factory;
    private final AtomicBoolean fallbackToSimpleAuth;
    private final AlignmentContext alignmentContext;
    private final HadoopRdmxConfig cfg;
    private final InetSocketAddress server;
    private final UserGroupInformation ticket;
    private final String protocolName;
    private final Duration timeout;
    private final Duration connectTimeout;
    /** Why every call of this proxy goes over TCP, or null. */
    private final String tcpOnly;
    private final ConcurrentHashMap<String, Message> returnTypes = new ConcurrentHashMap<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    private byte[] prefix;
    /** Kerberos: calls go over rdmx in a SASL session, negotiated over rdmx first. */
    private final boolean secure;
    /** The SASL session's id, or null before one is negotiated (or after the server forgot it); guarded by this. */
    private byte[] session;
    /** The rdmx address the session was negotiated with; guarded by this. */
    private String sessionAt;
    /** The session's SASL client when it wraps (QOP integrity or privacy), else null; guarded by this. */
    private Wrapping sessionWrap;
    /** Tests: applied to each wrapped request token before it is sent (tampering), or null. */
    static volatile UnaryOperator<byte[]> wrappedRequestHook;
    /** Tests: applied to each wrapped answer token before it is unwrapped (tampering), or null. */
    static volatile UnaryOperator<byte[]> wrappedAnswerHook;
    private RdmxClients.Shared shared;
    private Object tcpProxy;
    /**
     * Hadoop's TCP client of this proxy's socket factory, held for the proxy's life, so that a call sent over
     * rdmx and its retry over TCP carry one client id (the server's RetryCache knows a retried call by client id
     * and call id: with two ids a retried create or delete ran twice); null where it could not be taken.
     */
    private final Client tcpClient;
    /** That client's id, or null (the shared rdmx client's own id is sent then). */
    private final byte[] clientId;

    RdmxInvoker(Class<?> protocol, long clientVersion, Client.ConnectionId connId, Configuration conf,
        SocketFactory factory, AtomicBoolean fallbackToSimpleAuth, AlignmentContext alignmentContext) {
        this.protocol = protocol;
        // as ProtobufRpcEngine2: the version sent is the protocol's own, whatever the caller passed
        this.clientVersion = RPC.getProtocolVersion(protocol);
        this.connId = connId;
        this.conf = conf;
        this.factory = factory;
        this.fallbackToSimpleAuth = fallbackToSimpleAuth;
        this.alignmentContext = alignmentContext;
        this.cfg = HadoopRdmxConfig.of(conf);
        this.server = RdmxIpcBridge.address(connId);
        this.ticket = RdmxIpcBridge.ticket(connId);
        this.protocolName = RPC.getProtocolName(protocol);
        int t = RdmxIpcBridge.rpcTimeout(connId);
        if (t <= 0) {
            t = Client.getRpcTimeout(conf);
        }
        this.timeout = t > 0 ? Duration.ofMillis(t) : cfg.callTimeout;
        this.connectTimeout = Duration.ofMillis(Math.max(1, conf.getInt(
            CommonConfigurationKeysPublic.IPC_CLIENT_CONNECT_TIMEOUT_KEY,
            CommonConfigurationKeysPublic.IPC_CLIENT_CONNECT_TIMEOUT_DEFAULT)));
        this.secure = UserGroupInformation.isSecurityEnabled();
        String why = null;
        if (alignmentContext != null) {
            why = "an AlignmentContext (observer reads)";
        } else if (secure) {
            why = saslNotCarried(protocol, server, ticket, conf);
        }
        this.tcpOnly = why;
        this.tcpClient = why == null ? RdmxIpcBridge.holdTcpClient(conf, factory) : null;
        this.clientId = tcpClient != null ? RdmxIpcBridge.clientId(tcpClient) : null;
        if (why == null && clientId == null) {
            LOG.warn("{} proxy to {}: Hadoop's TCP client id cannot be read; a call retried over TCP after rdmx "
                + "carries another client id (the server's RetryCache will not know it)", protocolName, server);
        }
        if (why != null) {
            LOG.info("{} proxy to {}: over Hadoop's TCP client: {}", protocolName, server, why);
        }
    }

    /**
     * Under Kerberos: why this proxy's calls cannot go over rdmx, or null. rdmx carries Hadoop's SASL negotiation
     * with KERBEROS (GSSAPI) and every protection (integrity and privacy wrap each call and answer); a caller
     * that would authenticate with a delegation token (it holds one for this server: Hadoop's client would choose
     * TOKEN/DIGEST-MD5) keeps Hadoop's TCP path.
     */
    private static String saslNotCarried(Class<?> protocol, InetSocketAddress server, UserGroupInformation ticket,
        Configuration conf) {
        try {
            TokenInfo info = SecurityUtil.getTokenInfo(protocol, conf);
            if (info != null && ticket != null && server.getAddress() != null) {
                TokenSelector<?> selector = info.value().getDeclaredConstructor().newInstance();
                if (selector.selectToken(SecurityUtil.buildTokenService(server), ticket.getTokens()) != null) {
                    return "the caller holds a delegation token for the server (TOKEN/DIGEST-MD5 is not carried "
                        + "over rdmx yet)";
                }
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            return "the protocol's token selector could not be made (" + e + ")";
        }
        return null;
    }

    @Override
    public Client.ConnectionId getConnectionId() {
        return connId;
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
        if (method.getDeclaringClass() == Object.class) {
            switch (method.getName()) {
                case "toString":
                    return "RdmxRpcEngine proxy of " + protocolName + " to " + server;
                case "hashCode":
                    return System.identityHashCode(proxy);
                case "equals":
                    return proxy == args[0];
                default:
                    throw new UnsupportedOperationException(method.toString());
            }
        }
        if (args == null || args.length != 2) {
            throw new ServiceException("Too many or few parameters for request. Method: [" + method.getName()
                + "], Expected: 2, Actual: " + (args == null ? 0 : args.length));
        }
        if (args[1] == null) {
            throw new ServiceException("null param while calling Method: [" + method.getName() + "]");
        }
        if (tcpOnly != null) {
            return overTcp(method, args, null);
        }
        if (Client.isAsynchronousMode()) {
            LOG.debug("{}.{} to {}: asynchronous mode, over Hadoop's TCP client", protocolName, method.getName(),
                server);
            return overTcp(method, args, null);
        }
        // Hadoop's call id and retry count, taken once: the endpoint probe below is a TCP call of its own, and a
        // call that goes over TCP after all gets them back for Hadoop's Client
        int[] idRetry = RdmxIpcBridge.takeCallIdAndRetryCount();
        Endpoints.Endpoint ep = Endpoints.resolve(server, protocol, ticket, conf, factory, cfg);
        if (ep == null || !ep.rdmx()) {
            return overTcp(method, args, idRetry);
        }
        return overRdmx(ep, method, (Message) args[1], idRetry);
    }

    private Message overRdmx(Endpoints.Endpoint known, Method method, Message request, int[] idRetry)
        throws Throwable {
        Endpoints.Endpoint ep = known;
        RdmxClients.Shared s;
        try {
            s = shared(ep.provider, ep.ringBytes);
            if (ep.dialled && !s.client.connected(ep.address)) {
                // a listener this JVM was connected to and lost: the server may have restarted on the same TCP
                // port with a new listener; ask its TCP port again before dialling
                ep = Endpoints.reprobe(server, ep, protocol, ticket, conf, factory, cfg);
                if (ep == null || !ep.rdmx()) {
                    return (Message) overTcp(method, new Object[] {null, request}, idRetry);
                }
                s = shared(ep.provider, ep.ringBytes);
            }
        } catch (IOException e) {
            Endpoints.fallBack(server, e.getMessage(), cfg);
            return (Message) overTcp(method, new Object[] {null, request}, idRetry);
        }
        if (!s.client.connected(ep.address)) {
            // a bounded dial first (ipc.client.connect.timeout): a call's own bound covers connecting too, and a
            // listener that cannot be reached must not hold a call for its whole timeout
            try {
                s.client.call(ep.address, RdmxServer.METHOD_PING, ByteBuffer.allocate(0), connectTimeout);
            } catch (RpcException e) {
                Endpoints.fallBack(server, "its rdmx listener " + ep.address + " did not answer within "
                    + connectTimeout.toMillis() + " ms: " + e.getMessage(), cfg);
                return (Message) overTcp(method, new Object[] {null, request}, idRetry);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ServiceException(new InterruptedIOException("connecting to " + server + " over rdmx "
                    + ep.address + " interrupted"));
            }
        }
        if (!ep.dialled) {
            ep.dialled = true; // connected now (by this dial or another proxy's): a later loss means a re-probe
        }
        byte[] callPrefix = prefix;
        Wrapping[] wrap = {null};
        if (secure) {
            callPrefix = securePrefix(s, ep, method, request, idRetry, wrap);
            if (callPrefix == null) {
                return (Message) overTcp(method, new Object[] {null, request}, idRetry);
            }
        }
        int callId = idRetry[0];
        RpcRequestHeaderProto header = ProtoUtil.makeRpcRequestHeader(RPC.RpcKind.RPC_PROTOCOL_BUFFER,
            RpcRequestHeaderProto.OperationProto.RPC_FINAL_PACKET, callId, idRetry[1],
            clientId != null ? clientId : s.clientId);
        RequestHeaderProto reqHeader = RequestHeaderProto.newBuilder().setMethodName(method.getName())
            .setDeclaringClassProtocolName(protocolName).setClientProtocolVersion(clientVersion).build();
        RpcBody body;
        Message returnType;
        try {
            body = requestBody(callPrefix, header, reqHeader, request);
            returnType = returnType(method);
        } catch (IOException e) {
            throw new ServiceException(e);
        }
        // decoded on the client's reader thread as it arrives, in place in the ring (no array, no copy of it)
        Endpoints.Endpoint at = ep;
        RpcResponseReader<Object> reader = rb -> decodeResponse(rb, callId, returnType, at);
        Object answer;
        int rdmxMethod = secure ? RdmxServer.METHOD_SECURE_CALL : RdmxServer.METHOD_CALL;
        try {
            try {
                answer = wrap[0] == null ? s.client.call(ep.address, rdmxMethod, body, reader, timeout)
                    : callWrapped(s, ep, callPrefix, wrap[0], body, callId, returnType);
            } catch (RemoteRpcException e) {
                if (secure && SaslException.class.getName().equals(e.className())) {
                    forgetSession(callPrefix);        // the server ended the session: the next call negotiates
                }
                if (!secure || !UnknownSaslSessionException.class.getName().equals(e.className())) {
                    throw e;
                }
                // the server forgot the session (its bound): negotiate again, once, and resend
                LOG.debug("{} proxy to {}: rdmx SASL session gone ({}); negotiating again", protocolName, server,
                    e.remoteMessage());
                forgetSession(callPrefix);
                callPrefix = securePrefix(s, ep, method, request, idRetry, wrap);
                if (callPrefix == null) {
                    return (Message) overTcp(method, new Object[] {null, request}, idRetry);
                }
                try {
                    body = requestBody(callPrefix, header, reqHeader, request);
                } catch (IOException io) {
                    throw new ServiceException(io);
                }
                answer = wrap[0] == null ? s.client.call(ep.address, rdmxMethod, body, reader, timeout)
                    : callWrapped(s, ep, callPrefix, wrap[0], body, callId, returnType);
            }
        } catch (RemoteRpcException e) {
            throw new ServiceException(new RemoteException(e.className(), e.remoteMessage()));
        } catch (RpcPeerException e) {
            // the server was lost with the call outstanding (or could not be dialled again): it may have run
            IOException local = s.client.connected(ep.address) ? new EOFException(e.getMessage())
                : new ConnectException(e.getMessage());
            throw new ServiceException(wrap(ep, local));
        } catch (RpcTimeoutException e) {
            throw new ServiceException(wrap(ep, new SocketTimeoutException(e.getMessage())));
        } catch (RpcException e) {
            throw new ServiceException(wrap(ep, e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ServiceException(new InterruptedIOException("call " + callId + " to " + server + " over rdmx "
                + ep.address + " interrupted"));
        }
        RdmxRpcEngine.CLIENT_RDMX_CALLS.increment();
        if (answer instanceof WrapFailure) {
            forgetSession(callPrefix);            // an answer that does not unwrap ends the session
            throw ((WrapFailure) answer).failure;
        }
        if (answer instanceof ServiceException) {
            throw (ServiceException) answer;
        }
        return (Message) answer;
    }

    /**
     * Kerberos: the prefix of this proxy's calls in its SASL session (session id, host, connection context),
     * negotiating the session over rdmx first if there is none. Hadoop's own {@link SaslRpcClient} runs the
     * negotiation (as the real user of a proxy user, as Hadoop's {@code Client} does), its messages carried by
     * {@link RdmxServer#METHOD_SASL}.
     *
     * @return the prefix, or null: the rdmx listener could not be reached (the call goes over TCP, as after a
     *     failed dial)
     * @throws ServiceException the negotiation failed: the caller is refused as on TCP (an
     *     {@link org.apache.hadoop.security.AccessControlException} for a caller without usable credentials, or
     *     the server's refusal as a {@link RemoteException})
     */
    private synchronized byte[] securePrefix(RdmxClients.Shared s, Endpoints.Endpoint ep, Method method,
        Message request, int[] idRetry, Wrapping[] wrap) throws ServiceException {
        if (session != null && ep.address.equals(sessionAt)) {
            wrap[0] = sessionWrap;
            return prefix(session);
        }
        session = null;
        sessionWrap = null;
        wrap[0] = null;
        byte[][] sid = {new byte[SaslSession.ID_BYTES]};
        RdmxIpcBridge.SaslExchange exchange = message -> {
            ByteBuffer req = ByteBuffer.allocate(sid[0].length + message.length).put(sid[0]).put(message);
            req.flip();
            byte[] answer;
            try {
                answer = s.client.call(ep.address, RdmxServer.METHOD_SASL, req, timeout);
            } catch (RemoteRpcException e) {
                if (UnsupportedOperationException.class.getName().equals(e.className())) {
                    // a listener without SASL (a server made without Kerberos): Hadoop's client decides on TCP
                    // (ipc.client.fallback-to-simple-auth-allowed), as it would with the stock engine
                    throw new SaslTransportException(e);
                }
                throw new RemoteException(e.className(), e.remoteMessage());
            } catch (RpcException e) {
                throw new SaslTransportException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("SASL negotiation with " + server + " over rdmx interrupted");
            }
            if (answer.length < sid[0].length) {
                throw new IOException("SASL answer of " + server + " over rdmx " + ep.address + " is "
                    + answer.length + " bytes, too short for its session id");
            }
            sid[0] = java.util.Arrays.copyOf(answer, sid[0].length);
            return java.util.Arrays.copyOfRange(answer, sid[0].length, answer.length);
        };
        UserGroupInformation authUser = ticket.getRealUser() != null ? ticket.getRealUser() : ticket;
        SaslRpcClient sasl = new SaslRpcClient(ticket, protocol, server, conf);
        AuthMethod how;
        boolean keep = false;
        try {
            how = authUser.doAs((PrivilegedExceptionAction<AuthMethod>) () -> RdmxIpcBridge.saslConnect(sasl,
                exchange, maxResponseLength(), RdmxServer.SASL_MAX_ROUNDS, server + " (rdmx " + ep.address + ")"));
            if (how != AuthMethod.KERBEROS) {
                throw new ServiceException(wrap(ep, new IOException("SASL negotiation with " + server + " over rdmx "
                    + ep.address + " ended with " + how + ", not KERBEROS")));
            }
            Object qop = sasl.getNegotiatedProperty(Sasl.QOP);
            if (qop != null && !"auth".equals(qop)) {
                SaslClient c = RdmxIpcBridge.saslClientOf(sasl);
                if (c == null) {
                    LOG.info("{} proxy to {}: over Hadoop's TCP client: SASL QOP {} needs the negotiated SASL "
                        + "client, which this Hadoop's SaslRpcClient does not expose", protocolName, server, qop);
                    return null;
                }
                keep = true;                  // it wraps every call and answer of the session
                wrap[0] = new Wrapping(c);
            }
        } catch (SaslTransportException e) {
            Endpoints.fallBack(server, "SASL negotiation over its rdmx listener " + ep.address + " failed: "
                + e.getCause().getMessage(), cfg);
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ServiceException(new InterruptedIOException("SASL negotiation with " + server
                + " over rdmx interrupted"));
        } catch (IOException e) {
            RdmxRpcEngine.CLIENT_SASL_REFUSED.increment();
            LOG.warn("{} proxy to {}: SASL authentication over rdmx {} as {} failed: {}", protocolName, server,
                ep.address, ticket, e.toString());
            // Hadoop's Client says the same when the SASL set-up of a connection fails
            throw new ServiceException(wrap(ep, new IOException("Exception encountered while connecting to the "
                + "server " + server + " over rdmx " + ep.address, e)));
        } finally {
            if (!keep) {
                try {
                    sasl.dispose();
                } catch (IOException e) {
                    // the session is the server's; nothing kept here
                }
            }
        }
        RdmxRpcEngine.CLIENT_SASL_SESSIONS.increment();
        session = sid[0];
        sessionAt = ep.address;
        sessionWrap = wrap[0];
        return prefix(session);
    }

    /**
     * The SASL client of a session that wraps, and its two locks: calls are wrapped and sent under one (the server
     * must receive them in sequence), answers unwrapped under the other (in the order they arrive); wrapping and
     * unwrapping run at once, as Hadoop's client wraps on the sending thread and unwraps on the connection's.
     */
    private static final class Wrapping {
        final SaslClient sasl;
        final Object unwrapLock = new Object();

        Wrapping(SaslClient sasl) {
            this.sasl = sasl;
        }
    }

    /** An answer of a wrapping session that did not unwrap: the call's failure, and the session is over. */
    private static final class WrapFailure {
        final ServiceException failure;

        WrapFailure(ServiceException failure) {
            this.failure = failure;
        }
    }

    /**
     * A call in a session with QOP integrity or privacy: the session id, then the rest of the request (host,
     * connection context, headers, request) wrapped by the session's SASL client; wrapped and sent under the SASL
     * client's lock, so the server receives the tokens in the order their sequence numbers were given. The answer
     * is unwrapped on the client's reader thread, in the order answers arrive.
     */
    private Object callWrapped(RdmxClients.Shared s, Endpoints.Endpoint ep, byte[] callPrefix, Wrapping wrap,
        RpcBody body, int callId, Message returnType) throws RpcException, InterruptedException, ServiceException {
        int idBytes = SaslSession.ID_BYTES;
        byte[] plain;
        try {
            ByteBuffer all = ByteBuffer.allocate(body.length());
            body.writeTo(all);
            plain = java.util.Arrays.copyOfRange(all.array(), idBytes, all.capacity());
        } catch (IOException e) {
            throw new ServiceException(e);
        }
        RpcResponseReader<Object> reader = rb -> {
            byte[] token = new byte[rb.remaining()];
            rb.get(token);
            UnaryOperator<byte[]> hook = wrappedAnswerHook;
            if (hook != null) {
                token = hook.apply(token);
            }
            byte[] answer;
            try {
                synchronized (wrap.unwrapLock) {
                    answer = wrap.sasl.unwrap(token, 0, token.length);
                }
            } catch (SaslException | RuntimeException e) {
                LOG.warn("{} proxy to {}: an answer of {} bytes over rdmx {} did not unwrap; the SASL session is "
                    + "over: {}", protocolName, server, token.length, ep.address, e.toString());
                return new WrapFailure(new ServiceException(wrap(ep, new SaslException("answer of " + token.length
                    + " bytes to call " + callId + " from " + server + " over rdmx " + ep.address + " did not "
                    + "unwrap (" + e.getMessage() + ")", e))));
            }
            return decodeResponse(ByteBuffer.wrap(answer), callId, returnType, ep);
        };
        java.util.concurrent.CompletableFuture<Object> f;
        synchronized (wrap) {
            byte[] token;
            try {
                token = wrap.sasl.wrap(plain, 0, plain.length);
            } catch (SaslException e) {
                forgetSession(callPrefix);
                throw new ServiceException(wrap(ep, e));
            }
            UnaryOperator<byte[]> hook = wrappedRequestHook;
            if (hook != null) {
                token = hook.apply(token);
            }
            ByteBuffer req = ByteBuffer.allocate(idBytes + token.length).put(callPrefix, 0, idBytes).put(token);
            f = s.client.callAsync(ep.address, RdmxServer.METHOD_SECURE_CALL, req.flip(), reader, timeout);
        }
        try {
            return f.get();
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof RpcException) {
                throw (RpcException) c;
            }
            throw new RpcException(String.valueOf(c), c);
        }
    }

    /** The session id, then the host and the connection context (KERBEROS: the effective user only). */
    private byte[] prefix(byte[] sid) {
        byte[] p = new byte[sid.length + prefix.length];
        System.arraycopy(sid, 0, p, 0, sid.length);
        System.arraycopy(prefix, 0, p, sid.length, prefix.length);
        return p;
    }

    /** Forgets the session a call was refused in, unless another thread negotiated a new one meanwhile. */
    private synchronized void forgetSession(byte[] callPrefix) {
        if (session != null && java.util.Arrays.equals(session, 0, session.length, callPrefix, 0, session.length)) {
            session = null;
            disposeWrap(sessionWrap);
            sessionWrap = null;
        }
    }

    private static void disposeWrap(Wrapping w) {
        if (w != null) {
            try {
                synchronized (w) {
                    synchronized (w.unwrapLock) {
                        w.sasl.dispose();
                    }
                }
            } catch (SaslException e) {
                // nothing kept
            }
        }
    }

    private int maxResponseLength() {
        return cfg.maxResponseLength;
    }

    /** A SASL message could not be carried by rdmx (not a refusal): the call goes over TCP. */
    private static final class SaslTransportException extends IOException {
        private static final long serialVersionUID = 1L;

        SaslTransportException(RpcException cause) {
            super(cause.getMessage(), cause);
        }
    }

    /**
     * The client's reader thread: a response body (delimited {@code RpcResponseHeaderProto}, then the delimited
     * value), read from the buffer (the ring) into messages of their own.
     *
     * @return the value, or the {@link ServiceException} the call throws
     */
    private Object decodeResponse(ByteBuffer rb, int callId, Message returnType, Endpoints.Endpoint ep) {
        try {
            CodedInputStream in = CodedInputStream.newInstance(rb);
            RpcResponseHeaderProto rh = readDelimited(RpcResponseHeaderProto.getDefaultInstance(), in);
            if (rh.getStatus() != RpcResponseHeaderProto.RpcStatusProto.SUCCESS) {
                return new ServiceException(new RemoteException(rh.getExceptionClassName(), rh.getErrorMsg(),
                    rh.hasErrorDetail() ? rh.getErrorDetail() : null));
            }
            if (rh.getCallId() != callId) {
                return new ServiceException(new IOException("response to call " + callId + " from " + server
                    + " over rdmx " + ep.address + " carries call id " + rh.getCallId()));
            }
            return readDelimited(returnType, in);
        } catch (IOException e) {
            return new ServiceException(e);
        }
    }

    /** A length-delimited message, parsed (its bytes copied out: the stream does not alias its buffer). */
    @SuppressWarnings("unchecked")
    static <T extends Message> T readDelimited(T prototype, CodedInputStream in) throws IOException {
        int length = in.readRawVarint32();
        if (length < 0) {
            throw new IOException("negative message length " + length + " in an rdmx response");
        }
        int old = in.pushLimit(length);
        T m = (T) prototype.getParserForType().parseFrom(in);
        in.popLimit(old);
        return m;
    }

    /**
     * The request body, encoded once by the calling thread straight into the ring to the server (an
     * {@link RpcBody} of its exact size): the context prefix, then the three delimited messages. No array of the
     * request's size, no copy of it. (Through an {@code OutputStream}, protobuf encodes a string longer than its
     * 4 KiB buffer into a scratch array of three bytes per char and copies that into the stream: for a 512 KiB
     * string that is a 1.5 MiB allocation and a second pass over the bytes, about twice the time of this encode.)
     */
    static RpcBody requestBody(byte[] prefix, Message header, Message requestHeader, Message request)
        throws IOException {
        return DelimitedBody.of("request", prefix, header, requestHeader, request);
    }

    private IOException wrap(Endpoints.Endpoint ep, IOException e) {
        return NetUtils.wrapException(server.getHostString(), server.getPort(), LOCAL_HOST, 0, e);
    }

    private Object overTcp(Method method, Object[] args, int[] idRetry) throws Throwable {
        if (idRetry != null) {
            Client.setCallIdAndRetryCountUnprotected(idRetry[0], idRetry[1], Client.getExternalHandler());
        }
        Object p;
        synchronized (this) {
            if (closed.get()) {
                throw new ServiceException(new IOException(protocolName + " proxy to " + server + " is closed"));
            }
            if (tcpProxy == null) {
                ProtobufRpcEngine2 e = new ProtobufRpcEngine2();
                tcpProxy = fallbackToSimpleAuth != null
                    ? e.getProxy(protocol, clientVersion, server, ticket, conf, factory,
                        RdmxIpcBridge.rpcTimeout(connId), null, fallbackToSimpleAuth, alignmentContext).getProxy()
                    : e.getProxy(protocol, clientVersion, connId, conf, factory, alignmentContext).getProxy();
            }
            p = tcpProxy;
        }
        RdmxRpcEngine.CLIENT_TCP_CALLS.increment();
        try {
            return method.invoke(p, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    private synchronized RdmxClients.Shared shared(String provider, int ringBytes) throws IOException {
        if (closed.get()) {
            throw new IOException(protocolName + " proxy to " + server + " is closed");
        }
        if (shared == null || !shared.key.equals(RdmxClients.key(provider, ringBytes, cfg.clientMaxMessage(),
            cfg.secretId()))) {
            if (shared != null) {
                RdmxClients.release(shared);
                shared = null;
            }
            shared = RdmxClients.acquire(provider, ringBytes, cfg.clientMaxMessage(), cfg);
        }
        if (prefix == null) {
            ByteArrayOutputStream o = new ByteArrayOutputStream(128);
            new DataOutputStream(o).writeUTF(LOCAL_HOST);
            // under Kerberos the authenticated user comes from SASL: the context names the effective user only
            ProtoUtil.makeIpcConnectionContext(protocolName, ticket, secure ? AuthMethod.KERBEROS : AuthMethod.SIMPLE)
                .writeDelimitedTo(o);
            prefix = o.toByteArray();
        }
        return shared;
    }

    private Message returnType(Method method) throws IOException {
        Message m = returnTypes.get(method.getName());
        if (m == null) {
            try {
                m = (Message) method.getReturnType().getMethod("getDefaultInstance").invoke(null);
            } catch (ReflectiveOperationException e) {
                throw new IOException("no protobuf return type for " + method, e);
            }
            returnTypes.put(method.getName(), m);
        }
        return m;
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            Object p;
            RdmxClients.Shared s;
            synchronized (this) {
                p = tcpProxy;
                s = shared;
                tcpProxy = null;
                shared = null;
                disposeWrap(sessionWrap);
                sessionWrap = null;
                session = null;
            }
            if (p != null) {
                RPC.stopProxy(p);
            }
            if (s != null) {
                RdmxClients.release(s);
            }
            if (tcpClient != null) {
                RdmxIpcBridge.releaseTcpClient(tcpClient);
            }
        }
    }

    private static String localHost() {
        try {
            return InetAddress.getLocalHost().getHostAddress();
        } catch (IOException e) {
            return "";
        }
    }
}
