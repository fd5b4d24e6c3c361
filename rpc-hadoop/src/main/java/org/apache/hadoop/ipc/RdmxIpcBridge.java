package org.apache.hadoop.ipc;

import io.rdmx.rpc.RpcBody;
import io.rdmx.rpc.hadoop.DelimitedBody;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.io.Writable;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcResponseHeaderProto;
import org.apache.hadoop.security.SaslRpcClient;
import org.apache.hadoop.security.SaslRpcServer;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.authorize.AuthorizationException;
import org.apache.hadoop.security.authorize.ProxyUsers;
import org.apache.hadoop.security.authorize.ServiceAuthorizationManager;
import org.apache.hadoop.thirdparty.protobuf.Message;

/**
 * The package-private hooks of {@code org.apache.hadoop.ipc} that {@code io.rdmx.rpc.hadoop.RdmxRpcEngine} needs,
 * in one place (hadoop-common is not sealed, so a class of this package in another jar reaches them). Nothing
 * here changes Hadoop's behaviour: it reads {@link Client.ConnectionId}'s fields, takes the next call id as
 * {@code Client.Call} does, decodes a request the way {@code Server.Connection.processRpcRequest} does, and
 * writes a response the way the server's responder frames it (without the 4-byte length).
 */
public final class RdmxIpcBridge {
    /** A response body has no prefix before its messages. */
    private static final byte[] NO_PREFIX = new byte[0];

    /**
     * Takes Hadoop's TCP client for a socket factory from the cache {@code ProtobufRpcEngine2}'s proxies take
     * theirs from (its private {@code CLIENTS}), counted: while it is held, every TCP proxy of that factory uses
     * this very client and so its client id. Give it back with {@link #releaseTcpClient}.
     *
     * @param conf the configuration
     * @param factory the proxies' socket factory
     * @return the client, or null if this Hadoop's classes are not as expected (reflection failed)
     */
    public static Client holdTcpClient(Configuration conf, javax.net.SocketFactory factory) {
        try {
            return clientCache().getClient(conf, factory, RpcWritable.Buffer.class);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    /** @return ProtobufRpcEngine2's private cache of TCP clients (the one its proxies take theirs from) */
    private static ClientCache clientCache() throws ReflectiveOperationException {
        java.lang.reflect.Field f = ProtobufRpcEngine2.class.getDeclaredField("CLIENTS");
        f.setAccessible(true);
        return (ClientCache) f.get(null);
    }

    /**
     * @param client a client from {@link #holdTcpClient}
     * @return its 16-byte client id (what its calls carry in their headers), or null if it cannot be read
     */
    public static byte[] clientId(Client client) {
        try {
            java.lang.reflect.Field f = Client.class.getDeclaredField("clientId");
            f.setAccessible(true);
            return ((byte[]) f.get(client)).clone();
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    /**
     * Gives back a client from {@link #holdTcpClient} (the cache stops it once nobody holds it).
     *
     * @param client the client
     */
    public static void releaseTcpClient(Client client) {
        try {
            clientCache().stopClient(client);
        } catch (ReflectiveOperationException | RuntimeException e) {
            // the client stays in the cache: what a proxy that was never stopped leaves too
        }
    }

    private RdmxIpcBridge() {
    }

    /** @return the connection id's server address */
    public static InetSocketAddress address(Client.ConnectionId id) {
        return id.getAddress();
    }

    /** @return the connection id's protocol class */
    public static Class<?> protocol(Client.ConnectionId id) {
        return id.getProtocol();
    }

    /** @return the connection id's user */
    public static UserGroupInformation ticket(Client.ConnectionId id) {
        return id.getTicket();
    }

    /** @return the connection id's RPC timeout in ms (0: none) */
    public static int rpcTimeout(Client.ConnectionId id) {
        return id.getRpcTimeout();
    }

    /**
     * Hadoop's call-id and retry-count semantics of {@code Client.Call}: the id a retry proxy set for this
     * thread ({@link Client#setCallIdAndRetryCount}), else the next id of the JVM-wide counter; the id is
     * consumed (cleared), the retry count and external handler stay.
     *
     * @return {call id, retry count}
     */
    public static int[] takeCallIdAndRetryCount() {
        int callId = Client.getCallId();
        int retry = Client.getRetryCount();
        Client.setCallIdAndRetryCountUnprotected(null, retry, Client.getExternalHandler());
        return new int[] {callId, retry};
    }

    /**
     * Decodes the request that follows the headers in {@code body} into the server's request class for
     * protobuf RPC ({@code ProtobufRpcEngine2.RpcProtobufRequest}), as the stock server does; when that class is
     * the stock one, as {@link RdmxProtobufRequest}, whose messages alias {@code body}'s array rather than copy
     * their {@code bytes} fields out of it.
     *
     * @param server the server
     * @param body positioned at the {@code RequestHeaderProto}; array-backed, owned by this call and never written
     *     again (the parsed request may keep it)
     * @param conf the server's configuration
     * @return the request writable
     * @throws IOException if the request class cannot be made
     */
    public static Writable readProtobufRequest(Server server, ByteBuffer body, Configuration conf)
        throws IOException {
        Class<? extends Writable> c = server.getRpcRequestWrapper(
            org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcKindProto.RPC_PROTOCOL_BUFFER);
        if (c == null) {
            throw new IOException("server " + server + " has no request class for " + RPC.RpcKind.RPC_PROTOCOL_BUFFER);
        }
        if (c == ProtobufRpcEngine2.RpcProtobufRequest.class && body.hasArray()) {
            return RdmxProtobufRequest.of(body);
        }
        return RpcWritable.Buffer.wrap(body).newInstance(c, conf);
    }

    /**
     * Reads a length-delimited protobuf message at the buffer's position and advances it.
     *
     * @param <T> the message type
     * @param prototype the message's default instance
     * @param body the buffer
     * @return the message
     * @throws IOException if the bytes are not such a message
     */
    public static <T extends Message> T readDelimited(T prototype, ByteBuffer body) throws IOException {
        return RpcWritable.wrap(prototype).readFrom(body);
    }

    /**
     * A response as the stock server frames it (delimited {@link RpcResponseHeaderProto}, then the value), without
     * the 4-byte total length.
     *
     * @param header the response header
     * @param value the return value, or null
     * @return the bytes
     * @throws IOException if writing fails
     */
    public static ByteBuffer encodeResponse(RpcResponseHeaderProto header, Writable value) throws IOException {
        if (value == null || value instanceof RpcWritable.ProtobufWrapper) {
            // the usual answer (a protobuf message, or none): written once, by responseBody, into an array of its
            // exact size, which is handed over as is (no growing buffer, no copy of the whole response)
            RpcBody body = responseBody(header, value);
            ByteBuffer framed = ByteBuffer.allocate(body.length());
            body.writeTo(framed);
            return framed.flip();
        }
        ResponseBuffer out = new ResponseBuffer(header.getSerializedSize() + 64);
        header.writeDelimitedTo(out);
        if (value != null) {
            RpcWritable.wrap(value).writeTo(out);
        }
        out.flush();
        byte[] framed = out.toByteArray();
        // ResponseBuffer reserves 4 bytes for the frame length: skip them
        return ByteBuffer.wrap(framed, 4, framed.length - 4).slice();
    }

    /**
     * A response as {@link #encodeResponse} frames it, as an {@link RpcBody}: the usual answer (a protobuf message,
     * or none) is encoded by the answering thread straight into the client's ring, with no array of its size; any
     * other value is encoded into an array first.
     *
     * @param header the response header
     * @param value the return value, or null
     * @return the body
     * @throws IOException if it is too large, or writing another value fails
     */
    public static RpcBody responseBody(RpcResponseHeaderProto header, Writable value) throws IOException {
        if (value != null && !(value instanceof RpcWritable.ProtobufWrapper)) {
            ByteBuffer b = encodeResponse(header, value);
            return new RpcBody() {
                @Override
                public int length() {
                    return b.remaining();
                }

                @Override
                public void writeTo(ByteBuffer dst) {
                    dst.put(b.duplicate());
                }
            };
        }
        Message m = value == null ? null : ((RpcWritable.ProtobufWrapper) value).getMessage();
        return DelimitedBody.of("response", NO_PREFIX, header, m, null);
    }

    /**
     * Advertises an endpoint on a server through Hadoop's own {@code ProtocolMetaInfoPB.getProtocolSignature}: the
     * protocol name maps to {@code version} under {@link RPC.RpcKind#RPC_BUILTIN} (no invoker serves that kind,
     * so nothing can be called through the entry).
     *
     * @param server the server
     * @param protocol the marker protocol class
     * @param version the value to advertise
     */
    public static void advertise(RPC.Server server, Class<?> protocol, long version) {
        Map<RPC.Server.ProtoNameVer, RPC.Server.ProtoClassProtoImpl> map =
            server.getProtocolImplMap(RPC.RpcKind.RPC_BUILTIN);
        synchronized (map) {
            map.put(new RPC.Server.ProtoNameVer(RPC.getProtocolName(protocol), version),
                new RPC.Server.ProtoClassProtoImpl(protocol, protocol));
        }
    }

    /**
     * Removes what {@link #advertise} added.
     *
     * @param server the server
     * @param protocol the marker protocol class
     */
    public static void withdraw(RPC.Server server, Class<?> protocol) {
        Map<RPC.Server.ProtoNameVer, RPC.Server.ProtoClassProtoImpl> map =
            server.getProtocolImplMap(RPC.RpcKind.RPC_BUILTIN);
        String name = RPC.getProtocolName(protocol);
        synchronized (map) {
            map.keySet().removeIf(k -> k.protocol.equals(name));
        }
    }

    /**
     * @param server the server
     * @param call a call about to be queued
     * @return the priority its scheduler gives it
     */
    public static int priorityLevel(Server server, Server.Call call) {
        return server.getPriorityLevel(call);
    }

    /**
     * {@code Client.ConnectionId.getConnectionId}, which is package-private.
     *
     * @param addr server address
     * @param protocol protocol class
     * @param ticket user
     * @param rpcTimeout timeout in ms (0: none)
     * @param retryPolicy connection retry policy, or null for the configured one
     * @param conf configuration
     * @return the connection id
     * @throws IOException if the id cannot be made
     */
    public static Client.ConnectionId connectionId(InetSocketAddress addr, Class<?> protocol,
        UserGroupInformation ticket, int rpcTimeout, org.apache.hadoop.io.retry.RetryPolicy retryPolicy,
        Configuration conf) throws IOException {
        return Client.ConnectionId.getConnectionId(addr, protocol, ticket, rpcTimeout, retryPolicy, conf);
    }

    /**
     * A successful authorization ({@link #authorize}) and what it was checked against: the server's service ACL
     * and host list of the protocol (with {@code hadoop.security.authorization}) and the proxy-user rules (for a
     * proxied user). {@code refreshServiceAcl} and {@code ProxyUsers.refreshSuperUserGroupsConfiguration} replace
     * those objects, so it {@link #stands()} only until a refresh.
     */
    public static final class Authorized {
        private final ServiceAuthorizationManager acls;
        private final Class<?> protocol;
        private final Object acl;
        private final Object hosts;
        private final boolean proxied;
        private final Object proxyRules;

        Authorized(ServiceAuthorizationManager acls, Class<?> protocol, boolean proxied, Object proxyRules) {
            this.acls = acls;
            this.protocol = protocol;
            this.acl = acls == null ? null : acls.getProtocolsAcls(protocol);
            this.hosts = acls == null ? null : acls.getProtocolsMachineList(protocol);
            this.proxied = proxied;
            this.proxyRules = proxyRules;
        }

        /**
         * Any thread; two map look-ups, no allocation.
         *
         * @return true while the ACLs and proxy-user rules it was checked against are still the server's; false
         *     after a refresh (authorize again), and always for a proxied user under a custom impersonation
         *     provider (whose refreshes cannot be seen)
         */
        public boolean stands() {
            if (acls != null && (acls.getProtocolsAcls(protocol) != acl
                || acls.getProtocolsMachineList(protocol) != hosts)) {
                return false;
            }
            return !proxied || proxyRules != null && proxyRules == proxyRules();
        }
    }

    /** @return the proxy-user rules in force (replaced by a refresh), or null under a custom provider */
    private static Object proxyRules() {
        try {
            return ProxyUsers.getDefaultImpersonationProvider();
        } catch (RuntimeException e) {              // ClassCastException: a custom ImpersonationProvider
            return null;
        }
    }

    /**
     * The authorization a stock server does when a connection's context arrives: proxy users (a real user
     * acting for another) and, with {@code hadoop.security.authorization}, service-level ACLs of the protocol, both
     * with the address the caller's connection really comes from. May block (group mapping, host names of the
     * ACLs' host lists): not on a thread that serves other callers.
     *
     * @param server the server
     * @param user the calling user
     * @param protocolName the protocol of the connection context
     * @param addr the address the caller's connection comes from (never null: a caller without one is refused
     *     before)
     * @return the authorization, to check with {@link Authorized#stands()} before relying on it again
     * @throws AuthorizationException if the caller is not allowed
     */
    public static Authorized authorize(Server server, UserGroupInformation user, String protocolName,
        java.net.InetAddress addr) throws AuthorizationException {
        return authorize(server, user, protocolName, addr, true);
    }

    /**
     * As {@link #authorize(Server, UserGroupInformation, String, java.net.InetAddress)}; {@code proxyRules} false
     * for a user authenticated by a delegation token, whose real user is not checked against the proxy-user rules
     * (the token was issued to it for the effective user), as the stock server skips that check for TOKEN.
     */
    public static Authorized authorize(Server server, UserGroupInformation user, String protocolName,
        java.net.InetAddress addr, boolean proxyRules) throws AuthorizationException {
        java.util.Objects.requireNonNull(addr, "addr");
        boolean proxied = proxyRules && user.getRealUser() != null;
        Object rules = proxied ? proxyRules() : null;   // taken before the check: a refresh during it is seen
        if (proxied) {
            ProxyUsers.authorize(user, addr.getHostAddress());
        }
        if (!server.getConf().getBoolean(
            org.apache.hadoop.fs.CommonConfigurationKeys.HADOOP_SECURITY_AUTHORIZATION, false)) {
            return new Authorized(null, null, proxied, rules);
        }
        if (protocolName == null) {
            throw new AuthorizationException("Null protocol not authorized");
        }
        Class<?> protocol;
        try {
            protocol = Server.getProtocolClass(protocolName, server.getConf());
        } catch (ClassNotFoundException e) {
            throw new AuthorizationException("Unknown protocol: " + protocolName);
        }
        ServiceAuthorizationManager acls = server.getServiceAuthorizationManager();
        Authorized a = new Authorized(acls, protocol, proxied, rules);  // before the check, as the rules
        acls.authorize(user, protocol, server.getConf(), addr);
        return a;
    }

    /**
     * Queues a call into the server's call queue without waiting: with client back-off enabled as
     * {@code queueCall} does (a full queue or the scheduler answers {@link RetriableException}); otherwise it offers
     * the call and says whether there was room (a stock reader would wait in {@code put}).
     *
     * @param server the server
     * @param call the call
     * @return true if queued; false if the queue is full (queue it from a thread that may wait)
     * @throws IOException the scheduler's back-off
     * @throws InterruptedException never in practice (back-off does not wait)
     */
    public static boolean offerCall(Server server, Server.Call call) throws IOException, InterruptedException {
        CallQueueManager<Server.Call> q = server.getCallQueue();
        if (q.isClientBackoffEnabled()) {
            server.queueCall(call);
            return true;
        }
        if (!q.offer(call)) {
            return false;
        }
        call.getProcessingDetails().set(ProcessingDetails.Timing.ENQUEUE,
            org.apache.hadoop.util.Time.monotonicNowNanos() - call.getTimestampNanos(), TimeUnit.NANOSECONDS);
        return true;
    }

    /**
     * Registers protobuf RPC's request class and invoker with {@link Server}, as loading
     * {@link ProtobufRpcEngine2} does; a server subclassing {@code ProtobufRpcEngine2.Server} in a JVM where nothing
     * loaded the outer class would otherwise answer "Unknown rpc kind RPC_PROTOCOL_BUFFER".
     */
    public static void registerProtobufEngine() {
        ProtobufRpcEngine2.registerProtocolEngine();
    }

    /**
     * Runs a call on the calling thread the way {@code Server.Handler} runs one it took from the call queue:
     * {@code Server.getCurCall()} and the caller context set, the method run as the remote user, the server's RPC
     * metrics updated. Not done: {@code Server.get()} stays unset and the call queue's scheduler is bypassed.
     *
     * @param server the server
     * @param call the call
     */
    public static void runAsHandler(Server server, Server.Call call) {
        long start = org.apache.hadoop.util.Time.monotonicNowNanos();
        Server.getCurCall().set(call);
        CallerContext.setCurrent(call.getCallerContext());
        try {
            UserGroupInformation user = call.getRemoteUser();
            if (user != null) {
                user.doAs(call);
            } else {
                call.run();
            }
        } catch (Exception e) {
            Server.LOG.info(Thread.currentThread().getName() + " caught an exception", e);
        } finally {
            Server.getCurCall().set(null);
            CallerContext.setCurrent(null);
            server.updateMetrics(call, start, false);
        }
    }

    /** One message of Hadoop's SASL negotiation carried by another transport, and the server's answer to it. */
    public interface SaslExchange {
        /**
         * @param request what a stock client writes after a SASL message's 4-byte length: the delimited
         *     {@code RpcRequestHeaderProto} (call id -33) and the delimited {@code RpcSaslProto}
         * @return what a stock server writes after its answer's 4-byte length (the delimited
         *     {@code RpcResponseHeaderProto} and, unless it is an error, the delimited {@code RpcSaslProto}), or an
         *     empty array: no answer
         * @throws IOException if the message could not be carried
         */
        byte[] exchange(byte[] request) throws IOException;
    }

    /**
     * Runs Hadoop's own client side of the SASL negotiation ({@link SaslRpcClient#saslConnect}: method selection,
     * server principal checks, the SASL client and its rounds) over {@code exchange} instead of a socket: the
     * streams it is given are {@code Client.IpcStreams} over a socket that is never connected, whose output cuts
     * each flushed message out of its 4-byte frame and exchanges it, and whose input yields the answers, framed.
     * Runs as the caller; a caller that must authenticate as its real user runs this inside that user's doAs.
     *
     * @param client Hadoop's SASL client of the caller, protocol and server
     * @param exchange carries one message and returns the answer
     * @param maxResponseLength the largest answer accepted ({@code ipc.maximum.response.length})
     * @param maxRounds the most messages the client may send before the server says SUCCESS
     * @param server the server, named in errors
     * @return the authentication method negotiated
     * @throws IOException as {@code saslConnect} (AccessControlException: no method the caller can use;
     *     RemoteException: the server refused; SaslException), or what {@code exchange} threw
     */
    public static SaslRpcServer.AuthMethod saslConnect(SaslRpcClient client, SaslExchange exchange,
        int maxResponseLength, int maxRounds, String server) throws IOException {
        ExchangeSocket socket = new ExchangeSocket(exchange, maxRounds, server);
        try {
            return client.saslConnect(new Client.IpcStreams(socket, maxResponseLength));
        } finally {
            socket.close();
        }
    }

    /**
     * A SASL server for Kerberos (GSSAPI) the way a stock server makes it for a connection: Hadoop's
     * {@link SaslRpcServer} of the server's login user, with the SASL properties for the caller's address.
     *
     * @param server {@code new SaslRpcServer(AuthMethod.KERBEROS)}, made as the server's login user
     * @param properties the SASL properties ({@code SaslPropertiesResolver.getServerProperties})
     * @return the SASL server
     * @throws IOException if it cannot be made
     * @throws InterruptedException if interrupted
     */
    public static javax.security.sasl.SaslServer kerberosSaslServer(SaslRpcServer server,
        Map<String, ?> properties) throws IOException, InterruptedException {
        if (server.authMethod != SaslRpcServer.AuthMethod.KERBEROS) {
            throw new IOException("not a Kerberos SASL server: " + server.authMethod);
        }
        return server.create(null, properties, null);       // no connection: GSSAPI's callback needs none
    }

    /**
     * The SASL client a {@link SaslRpcClient} negotiated with (its private {@code saslClient}), which a stock
     * connection wraps and unwraps each message with under QOP integrity or privacy.
     *
     * @param client Hadoop's SASL client after {@link #saslConnect}
     * @return its SASL client, or null if this Hadoop's classes are not as expected (reflection failed)
     */
    public static javax.security.sasl.SaslClient saslClientOf(SaslRpcClient client) {
        try {
            java.lang.reflect.Field f = SaslRpcClient.class.getDeclaredField("saslClient");
            f.setAccessible(true);
            return (javax.security.sasl.SaslClient) f.get(client);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    /**
     * Records the QOP a proxy's SASL negotiation settled on in its connection id, as Hadoop's client does once a
     * connection is set up ({@code ConnectionId.getSaslQop()}, which callers such as HDFS read).
     *
     * @param id the proxy's connection id
     * @param qop the negotiated QOP ({@code auth}, {@code auth-int}, {@code auth-conf}), or null
     * @return false if this Hadoop's {@code ConnectionId} is not as expected (reflection failed)
     */
    public static boolean saslQop(Client.ConnectionId id, String qop) {
        try {
            java.lang.reflect.Field f = Client.ConnectionId.class.getDeclaredField("saslQop");
            f.setAccessible(true);
            f.set(id, qop);
            return true;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return false;
        }
    }

    /** The never-connected socket {@link #saslConnect} gives {@code Client.IpcStreams}. */
    private static final class ExchangeSocket extends java.net.Socket {
        private final SaslExchange exchange;
        private final int maxRounds;
        private final String server;
        private final java.io.ByteArrayOutputStream written = new java.io.ByteArrayOutputStream();
        private final java.util.ArrayDeque<byte[]> answers = new java.util.ArrayDeque<>();
        private int rounds;
        private byte[] current = new byte[0];
        private int at;

        ExchangeSocket(SaslExchange exchange, int maxRounds, String server) {
            this.exchange = exchange;
            this.maxRounds = maxRounds;
            this.server = server;
        }

        @Override
        public java.io.InputStream getInputStream() {
            return new java.io.InputStream() {
                @Override
                public int read() {
                    byte[] one = new byte[1];
                    return read(one, 0, 1) < 0 ? -1 : one[0] & 0xFF;
                }

                @Override
                public int read(byte[] b, int off, int len) {
                    while (at == current.length) {
                        if (answers.isEmpty()) {
                            return -1;           // nothing more was answered: saslConnect sees EOF
                        }
                        current = answers.poll();
                        at = 0;
                    }
                    int n = Math.min(len, current.length - at);
                    System.arraycopy(current, at, b, off, n);
                    at += n;
                    return n;
                }
            };
        }

        @Override
        public java.io.OutputStream getOutputStream() {
            return new java.io.OutputStream() {
                @Override
                public void write(int b) {
                    written.write(b);
                }

                @Override
                public void write(byte[] b, int off, int len) {
                    written.write(b, off, len);
                }

                @Override
                public void flush() throws IOException {
                    sendWritten();
                }
            };
        }

        /** Every whole frame written so far goes to the server; its answer, framed, becomes readable. */
        private void sendWritten() throws IOException {
            byte[] all = written.toByteArray();
            ByteBuffer b = ByteBuffer.wrap(all);
            while (b.remaining() >= 4) {
                int length = b.getInt(b.position());
                if (length < 0 || length > b.remaining() - 4) {
                    break;
                }
                if (++rounds > maxRounds) {
                    throw new IOException("SASL negotiation with " + server + " over rdmx took more than "
                        + maxRounds + " messages");
                }
                byte[] message = new byte[length];
                b.position(b.position() + 4);
                b.get(message);
                byte[] answer = exchange.exchange(message);
                if (answer.length > 0) {
                    answers.add(ByteBuffer.allocate(4 + answer.length).putInt(answer.length).put(answer).array());
                }
            }
            written.reset();
            written.write(all, b.position(), b.remaining());
        }

        @Override
        public void setSoTimeout(int timeout) {
            // the exchange is bounded by the transport's call timeout
        }

        @Override
        public int getSoTimeout() {
            return 0;
        }

        @Override
        public String toString() {
            return "rdmx SASL exchange with " + server;
        }
    }
}
