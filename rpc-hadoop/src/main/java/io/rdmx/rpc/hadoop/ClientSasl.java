package io.rdmx.rpc.hadoop;

import io.rdmx.rpc.RemoteRpcException;
import io.rdmx.rpc.RpcBody;
import io.rdmx.rpc.RpcException;
import io.rdmx.rpc.RpcResponseReader;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.security.PrivilegedExceptionAction;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import javax.security.sasl.Sasl;
import javax.security.sasl.SaslClient;
import javax.security.sasl.SaslException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ipc.Client;
import org.apache.hadoop.ipc.RdmxIpcBridge;
import org.apache.hadoop.ipc.RemoteException;
import org.apache.hadoop.security.SaslRpcClient;
import org.apache.hadoop.security.SaslRpcServer.AuthMethod;
import org.apache.hadoop.security.SecurityUtil;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.TokenInfo;
import org.apache.hadoop.security.token.TokenSelector;
import org.apache.hadoop.thirdparty.protobuf.ServiceException;
import org.apache.hadoop.util.ProtoUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client side of a proxy's SASL session over rdmx: Hadoop's own {@link SaslRpcClient} runs the negotiation
 * (method selection in the server's order, the server principal checks, the token the protocol's
 * {@code @TokenInfo} selector picks for the server, the SASL client and its rounds), as the real user of a proxy
 * user as Hadoop's {@code Client} does, its messages carried by {@link RdmxServer#METHOD_SASL}. KERBEROS (GSSAPI)
 * and TOKEN (DIGEST-MD5) sessions are kept; with the QOP integrity or privacy the negotiated SASL client wraps each
 * call and unwraps each answer. A negotiation that ends in SIMPLE (a simple-mode server without a secret manager,
 * or one where the caller has no token) leaves the proxy calling without a session.
 */
final class ClientSasl {
    private static final Logger LOG = LoggerFactory.getLogger(ClientSasl.class);

    /** What a proxy's calls carry after negotiating. */
    static final class Session {
        /** The session id, then the host and connection context; null: no session (SIMPLE), the plain prefix. */
        final byte[] prefix;
        /** The SASL client when the session wraps (QOP integrity or privacy), else null. */
        final Wrapping wrap;

        Session(byte[] prefix, Wrapping wrap) {
            this.prefix = prefix;
            this.wrap = wrap;
        }
    }

    /**
     * The SASL client of a session that wraps, and its two locks: calls are wrapped and sent under one (the server
     * must receive them in sequence), answers unwrapped under the other (in the order they arrive); wrapping and
     * unwrapping run at once, as Hadoop's client wraps on the sending thread and unwraps on the connection's.
     */
    static final class Wrapping {
        final SaslClient sasl;
        final Object unwrapLock = new Object();

        Wrapping(SaslClient sasl) {
            this.sasl = sasl;
        }
    }

    /** An answer of a wrapping session that did not unwrap: the call's failure, and the session is over. */
    static final class WrapFailure {
        final ServiceException failure;

        WrapFailure(ServiceException failure) {
            this.failure = failure;
        }
    }

    private final Class<?> protocol;
    private final String protocolName;
    private final InetSocketAddress server;
    private final UserGroupInformation ticket;
    private final Configuration conf;
    private final HadoopRdmxConfig cfg;
    private final Duration timeout;
    /** The proxy's connection id: the negotiated QOP is recorded in it, as Hadoop's client records it. */
    private final Client.ConnectionId connId;
    /** Under Kerberos: a SIMPLE outcome sends the proxy to Hadoop's TCP client (whose fallback rules apply). */
    private final boolean secure;
    /** Wraps a local failure as Hadoop's client names it (host, port). */
    private final UnaryOperator<IOException> wrapLocal;
    /** The session, or null before one is negotiated (or after the server forgot it); guarded by this. */
    private Session session;
    /** The rdmx address the session was negotiated with; guarded by this. */
    private String sessionAt;

    ClientSasl(Class<?> protocol, String protocolName, InetSocketAddress server, UserGroupInformation ticket,
        Configuration conf, HadoopRdmxConfig cfg, Duration timeout, Client.ConnectionId connId, boolean secure,
        UnaryOperator<IOException> wrapLocal) {
        this.connId = connId;
        this.protocol = protocol;
        this.protocolName = protocolName;
        this.server = server;
        this.ticket = ticket;
        this.conf = conf;
        this.cfg = cfg;
        this.timeout = timeout;
        this.secure = secure;
        this.wrapLocal = wrapLocal;
    }

    /**
     * Whether the caller holds a delegation token for the server, as Hadoop's {@code SaslRpcClient} selects one:
     * the protocol's {@code @TokenInfo} selector over the caller's tokens, for the server's token service.
     *
     * @return true if it holds one
     * @throws ReflectiveOperationException if the selector cannot be made
     */
    static boolean holdsToken(Class<?> protocol, InetSocketAddress server, UserGroupInformation ticket,
        Configuration conf) throws ReflectiveOperationException {
        TokenInfo info = SecurityUtil.getTokenInfo(protocol, conf);
        if (info == null || ticket == null || server.getAddress() == null) {
            return false;
        }
        TokenSelector<?> selector = info.value().getDeclaredConstructor().newInstance();
        return selector.selectToken(SecurityUtil.buildTokenService(server), ticket.getTokens()) != null;
    }

    /**
     * The session of this proxy's calls, negotiated over rdmx first if there is none.
     *
     * @return the session (its prefix null: no session, SIMPLE), or null: the negotiation could not be carried
     *     by the rdmx listener, or ended in SIMPLE under Kerberos (the call goes over TCP, as after a failed dial)
     * @throws ServiceException the negotiation failed: the caller is refused as on TCP (an
     *     {@link org.apache.hadoop.security.AccessControlException} for a caller without usable credentials, or
     *     the server's refusal as a {@link RemoteException}, e.g. the secret manager's {@code InvalidToken})
     */
    synchronized Session session(RdmxClients.Shared s, Endpoints.Endpoint ep) throws ServiceException {
        if (session != null && ep.address.equals(sessionAt)) {
            return session;
        }
        session = null;
        byte[][] sid = {new byte[SaslSession.ID_BYTES]};
        RdmxIpcBridge.SaslExchange exchange = message -> {
            ByteBuffer req = ByteBuffer.allocate(sid[0].length + message.length).put(sid[0]).put(message);
            req.flip();
            byte[] answer;
            try {
                answer = s.client.call(ep.address, RdmxServer.METHOD_SASL, req, timeout);
            } catch (RemoteRpcException e) {
                if (UnsupportedOperationException.class.getName().equals(e.className())) {
                    // a listener without SASL: Hadoop's client decides on TCP
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
            sid[0] = Arrays.copyOf(answer, sid[0].length);
            return Arrays.copyOfRange(answer, sid[0].length, answer.length);
        };
        UserGroupInformation authUser = ticket.getRealUser() != null ? ticket.getRealUser() : ticket;
        SaslRpcClient sasl = new SaslRpcClient(ticket, protocol, server, conf);
        Wrapping wrap = null;
        AuthMethod how;
        try {
            how = authUser.doAs((PrivilegedExceptionAction<AuthMethod>) () -> RdmxIpcBridge.saslConnect(sasl,
                exchange, cfg.maxResponseLength, RdmxServer.SASL_MAX_ROUNDS, server + " (rdmx " + ep.address + ")"));
            if (how == AuthMethod.SIMPLE) {
                if (secure) {
                    // a simple server: Hadoop's TCP client applies its fallback rules (and its fallback flag)
                    Endpoints.fallBack(server, "its rdmx listener " + ep.address + " offers SIMPLE authentication"
                        + " to a Kerberos client", cfg);
                    return null;
                }
                session = new Session(null, null);
                sessionAt = ep.address;
                return session;
            }
            if (how != AuthMethod.KERBEROS && how != AuthMethod.TOKEN) {
                throw new ServiceException(wrapLocal.apply(new IOException("SASL negotiation with " + server
                    + " over rdmx " + ep.address + " ended with " + how + ", not KERBEROS or TOKEN")));
            }
            Object qop = sasl.getNegotiatedProperty(Sasl.QOP);
            RdmxIpcBridge.saslQop(connId, qop == null ? null : qop.toString());
            if (qop != null && !"auth".equals(qop)) {
                SaslClient c = RdmxIpcBridge.saslClientOf(sasl);
                if (c == null) {
                    LOG.info("{} proxy to {}: over Hadoop's TCP client: SASL QOP {} needs the negotiated SASL "
                        + "client, which this Hadoop's SaslRpcClient does not expose", protocolName, server, qop);
                    return null;
                }
                wrap = new Wrapping(c);           // it wraps every call and answer of the session
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
            if (e instanceof RemoteException || e instanceof SaslException) {
                throw new ServiceException(e);    // the server's refusal, as Hadoop's client hands it on
            }
            // Hadoop's Client says the same when the SASL set-up of a connection fails
            throw new ServiceException(wrapLocal.apply(new IOException("Exception encountered while connecting to "
                + "the server " + server + " over rdmx " + ep.address, e)));
        } finally {
            if (wrap == null) {
                try {
                    sasl.dispose();
                } catch (IOException e) {
                    // the session is the server's; nothing kept here
                }
            }
        }
        RdmxRpcEngine.CLIENT_SASL_SESSIONS.increment();
        try {
            session = new Session(prefix(sid[0], how), wrap);
        } catch (IOException e) {
            dispose(wrap);
            throw new ServiceException(e);
        }
        sessionAt = ep.address;
        return session;
    }

    /**
     * The session id, then the host and the connection context as Hadoop's client sends it after SASL: KERBEROS
     * names the effective user only, TOKEN no user (the token's is the user).
     */
    private byte[] prefix(byte[] sid, AuthMethod how) throws IOException {
        ByteArrayOutputStream o = new ByteArrayOutputStream(128);
        o.write(sid);
        new DataOutputStream(o).writeUTF(RdmxInvoker.LOCAL_HOST);
        ProtoUtil.makeIpcConnectionContext(protocolName, ticket, how).writeDelimitedTo(o);
        return o.toByteArray();
    }

    /**
     * A call in a session with QOP integrity or privacy: the session id, then the rest of the request (host,
     * connection context, headers, request) wrapped by the session's SASL client; wrapped and sent under the SASL
     * client's lock, so the server receives the tokens in the order their sequence numbers were given. The answer
     * is unwrapped on the client's reader thread, in the order answers arrive, and decoded by {@code decode}.
     */
    Object callWrapped(RdmxClients.Shared s, Endpoints.Endpoint ep, byte[] callPrefix, Wrapping wrap, RpcBody body,
        int callId, Function<ByteBuffer, Object> decode) throws RpcException, InterruptedException, ServiceException {
        int idBytes = SaslSession.ID_BYTES;
        byte[] plain;
        try {
            ByteBuffer all = ByteBuffer.allocate(body.length());
            body.writeTo(all);
            plain = Arrays.copyOfRange(all.array(), idBytes, all.capacity());
        } catch (IOException e) {
            throw new ServiceException(e);
        }
        RpcResponseReader<Object> reader = rb -> {
            byte[] token = new byte[rb.remaining()];
            rb.get(token);
            UnaryOperator<byte[]> hook = RdmxInvoker.wrappedAnswerHook;
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
                return new WrapFailure(new ServiceException(wrapLocal.apply(new SaslException("answer of "
                    + token.length + " bytes to call " + callId + " from " + server + " over rdmx " + ep.address
                    + " did not unwrap (" + e.getMessage() + ")", e))));
            }
            return decode.apply(ByteBuffer.wrap(answer));
        };
        CompletableFuture<Object> f;
        synchronized (wrap) {
            byte[] token;
            try {
                token = wrap.sasl.wrap(plain, 0, plain.length);
            } catch (SaslException e) {
                forget(callPrefix);
                throw new ServiceException(wrapLocal.apply(e));
            }
            UnaryOperator<byte[]> hook = RdmxInvoker.wrappedRequestHook;
            if (hook != null) {
                token = hook.apply(token);
            }
            ByteBuffer req = ByteBuffer.allocate(idBytes + token.length).put(callPrefix, 0, idBytes).put(token);
            f = s.client.callAsync(ep.address, RdmxServer.METHOD_SECURE_CALL, req.flip(), reader, timeout);
        }
        try {
            return f.get();
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof RpcException) {
                throw (RpcException) c;
            }
            throw new RpcException(String.valueOf(c), c);
        }
    }

    /** Forgets the session a call was refused in, unless another thread negotiated a new one meanwhile. */
    synchronized void forget(byte[] callPrefix) {
        Session s = session;
        if (s != null && s.prefix != null
            && Arrays.equals(s.prefix, 0, SaslSession.ID_BYTES, callPrefix, 0, SaslSession.ID_BYTES)) {
            session = null;
            dispose(s.wrap);
        }
    }

    /** Forgets the session, whatever it is (the proxy is closed). */
    synchronized void close() {
        Session s = session;
        session = null;
        if (s != null) {
            dispose(s.wrap);
        }
    }

    private static void dispose(Wrapping w) {
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

    /** A SASL message could not be carried by rdmx (not a refusal): the call goes over TCP. */
    private static final class SaslTransportException extends IOException {
        private static final long serialVersionUID = 1L;

        SaslTransportException(RpcException cause) {
            super(cause.getMessage(), cause);
        }
    }
}
