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
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.SocketFactory;
import java.util.function.UnaryOperator;
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
import org.apache.hadoop.security.SaslRpcServer.AuthMethod;
import org.apache.hadoop.security.UserGroupInformation;
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
    static final String LOCAL_HOST = localHost();

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
    /**
     * The proxy's SASL session over rdmx (KERBEROS, or TOKEN when the caller holds a delegation token for the
     * server, in simple mode too), or null: its calls carry no session.
     */
    private final ClientSasl sasl;
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
        boolean token = false;
        if (alignmentContext != null) {
            why = "an AlignmentContext (observer reads)";
        } else {
            try {
                // as Hadoop's client: a caller with a token for the server authenticates with it (in simple mode too)
                token = ClientSasl.holdsToken(protocol, server, ticket, conf);
            } catch (ReflectiveOperationException | RuntimeException e) {
                why = secure ? "the protocol's token selector could not be made (" + e + ")" : null;
            }
        }
        this.tcpOnly = why;
        this.sasl = why == null && (secure || token) ? new ClientSasl(protocol, protocolName, server, ticket, conf,
            cfg, timeout, connId, secure, e -> wrap(null, e)) : null;
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
        ClientSasl.Session session = sasl == null ? null : sasl.session(s, ep);
        if (sasl != null && session == null) {
            return (Message) overTcp(method, new Object[] {null, request}, idRetry);
        }
        boolean inSession = session != null && session.prefix != null;
        byte[] callPrefix = inSession ? session.prefix : prefix;
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
        int rdmxMethod = inSession ? RdmxServer.METHOD_SECURE_CALL : RdmxServer.METHOD_CALL;
        try {
            try {
                answer = !inSession || session.wrap == null ? s.client.call(ep.address, rdmxMethod, body, reader,
                    timeout) : sasl.callWrapped(s, ep, callPrefix, session.wrap, body, callId,
                        rb -> decodeResponse(rb, callId, returnType, at));
            } catch (RemoteRpcException e) {
                if (inSession && SaslException.class.getName().equals(e.className())) {
                    sasl.forget(callPrefix);          // the server ended the session: the next call negotiates
                }
                if (!inSession || !UnknownSaslSessionException.class.getName().equals(e.className())) {
                    throw e;
                }
                // the server forgot the session (its bound): negotiate again, once, and resend
                LOG.debug("{} proxy to {}: rdmx SASL session gone ({}); negotiating again", protocolName, server,
                    e.remoteMessage());
                sasl.forget(callPrefix);
                session = sasl.session(s, ep);
                if (session == null || session.prefix == null) {
                    return (Message) overTcp(method, new Object[] {null, request}, idRetry);
                }
                callPrefix = session.prefix;
                try {
                    body = requestBody(callPrefix, header, reqHeader, request);
                } catch (IOException io) {
                    throw new ServiceException(io);
                }
                answer = session.wrap == null ? s.client.call(ep.address, rdmxMethod, body, reader, timeout)
                    : sasl.callWrapped(s, ep, callPrefix, session.wrap, body, callId,
                        rb -> decodeResponse(rb, callId, returnType, at));
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
        if (answer instanceof ClientSasl.WrapFailure) {
            sasl.forget(callPrefix);              // an answer that does not unwrap ends the session
            throw ((ClientSasl.WrapFailure) answer).failure;
        }
        if (answer instanceof ServiceException) {
            throw (ServiceException) answer;
        }
        return (Message) answer;
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
            // calls without a SASL session (simple authentication); a session's prefix is its own (ClientSasl)
            ProtoUtil.makeIpcConnectionContext(protocolName, ticket, AuthMethod.SIMPLE)
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
            }
            if (p != null) {
                RPC.stopProxy(p);
            }
            if (sasl != null) {
                sasl.close();
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
