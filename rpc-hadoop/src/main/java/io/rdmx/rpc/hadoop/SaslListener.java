package io.rdmx.rpc.hadoop;

import io.rdmx.rpc.RpcCall;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import javax.security.sasl.SaslException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ipc.RdmxIpcBridge;
import org.apache.hadoop.ipc.RpcConstants;
import org.apache.hadoop.ipc.Server;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcRequestHeaderProto;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcResponseHeaderProto;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcResponseHeaderProto.RpcErrorCodeProto;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcResponseHeaderProto.RpcStatusProto;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcSaslProto;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcSaslProto.SaslAuth;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcSaslProto.SaslState;
import org.apache.hadoop.security.SaslPropertiesResolver;
import org.apache.hadoop.security.SaslRpcServer;
import org.apache.hadoop.security.SaslRpcServer.AuthMethod;
import org.apache.hadoop.security.SecurityUtil;
import org.apache.hadoop.security.UserGroupInformation.AuthenticationMethod;
import org.apache.hadoop.security.token.SecretManager;
import org.apache.hadoop.security.token.TokenIdentifier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The SASL side of an rdmx listener ({@link RdmxServer#METHOD_SASL}): the methods it offers, in the order Hadoop's
 * server offers them for the same configuration ({@code Server.getAuthMethods}: TOKEN first when the server has a
 * secret manager, then the configured method, KERBEROS or SIMPLE), and the negotiations of its callers
 * ({@link SaslSession}, kept per caller, at most {@link RdmxServer#SASL_SESSIONS_PER_CALLER}).
 *
 * <p>A listener whose methods are SIMPLE alone answers NEGOTIATE with SUCCESS, as a stock simple server does (the
 * client then calls without a session); a client that chooses SIMPLE where it is offered beside TOKEN gets no
 * SASL answer and calls without a session too.
 */
final class SaslListener {
    private static final Logger LOG = LoggerFactory.getLogger(SaslListener.class);

    private final String serverName;
    private final List<AuthMethod> methods;
    /** The NEGOTIATE answer without TOKEN's challenge (what an INITIATE's choice is checked against). */
    private final RpcSaslProto negotiate;
    private final SecretManager<TokenIdentifier> secretManager;
    private final SaslPropertiesResolver resolver;
    private final LongAdder established = new LongAdder();
    private final LongAdder refused = new LongAdder();

    /**
     * @param serverName the server, named in logs and errors
     * @param conf the server's configuration
     * @param secretManager the server's secret manager, or null
     * @throws IOException if an offered method cannot be described (Hadoop's {@code SaslRpcServer})
     */
    @SuppressWarnings("unchecked")
    SaslListener(String serverName, Configuration conf, SecretManager<? extends TokenIdentifier> secretManager)
        throws IOException {
        this.serverName = serverName;
        this.secretManager = (SecretManager<TokenIdentifier>) secretManager;
        List<AuthMethod> m = new ArrayList<>(2);
        AuthenticationMethod configured = SecurityUtil.getAuthenticationMethod(conf);
        if (secretManager != null && configured != AuthenticationMethod.TOKEN) {
            m.add(AuthMethod.TOKEN);
        }
        m.add(configured.getAuthMethod());
        this.methods = Collections.unmodifiableList(m);
        this.resolver = SaslPropertiesResolver.getInstance(conf);
        RpcSaslProto.Builder b = RpcSaslProto.newBuilder();
        if (methods.size() == 1 && methods.get(0) == AuthMethod.SIMPLE) {
            b.setState(SaslState.SUCCESS);
        } else {
            b.setState(SaslState.NEGOTIATE);
            for (AuthMethod a : methods) {
                SaslRpcServer s = new SaslRpcServer(a);
                SaslAuth.Builder auth = b.addAuthsBuilder().setMethod(a.toString()).setMechanism(s.mechanism);
                if (s.protocol != null) {
                    auth.setProtocol(s.protocol);
                }
                if (s.serverId != null) {
                    auth.setServerId(s.serverId);
                }
            }
        }
        this.negotiate = b.build();
    }

    /** @return true if the listener takes calls of SASL sessions (it offers a method other than SIMPLE) */
    boolean takesSessions() {
        return !(methods.size() == 1 && methods.get(0) == AuthMethod.SIMPLE);
    }

    /** @return true if it offers this method */
    boolean offers(AuthMethod m) {
        return methods.contains(m);
    }

    /** @return the offered methods as the stock server prints them in refusals, e.g. {@code [TOKEN, KERBEROS]} */
    String available() {
        return methods.toString();
    }

    RpcSaslProto negotiate() {
        return negotiate;
    }

    SecretManager<TokenIdentifier> secretManager() {
        return secretManager;
    }

    SaslPropertiesResolver resolver() {
        return resolver;
    }

    /** @return SASL sessions authenticated */
    long established() {
        return established.sum();
    }

    /** @return negotiations refused, and session calls that did not unwrap */
    long refused() {
        return refused.sum();
    }

    /** Counts a refusal outside a negotiation (a call that did not unwrap, a SIMPLE caller refused). */
    void refusedOne() {
        refused.increment();
    }

    /**
     * rdmx handler thread: one message of Hadoop's SASL negotiation. The body is the session id
     * ({@link SaslSession#ID_BYTES} bytes, zeros for a new negotiation), then what a stock client writes after a
     * SASL message's 4-byte length (the delimited {@code RpcRequestHeaderProto} with call id -33, the delimited
     * {@code RpcSaslProto}). The answer is the session id, then what a stock server writes after its answer's
     * length: the delimited {@code RpcResponseHeaderProto} and the delimited {@code RpcSaslProto}, or a fatal
     * header (FATAL_UNAUTHORIZED) naming the exception (for a refused token, the secret manager's own, as Hadoop's
     * server names it), after which the session is gone; or the session id alone when the client chose SIMPLE.
     */
    ByteBuffer handle(RpcCall rc, Callers.Caller caller) throws IOException {
        ByteBuffer body = rc.request();
        String peer = rc.peer();
        if (body.remaining() < SaslSession.ID_BYTES) {
            throw new IOException("SASL message of rdmx caller '" + peer + "' is " + body.remaining()
                + " bytes, too short for its session id");
        }
        ByteBuffer id = body.duplicate().limit(body.position() + SaslSession.ID_BYTES);
        body.position(body.position() + SaslSession.ID_BYTES);
        SaslSession session;
        boolean fresh = isZero(id);
        if (fresh) {
            session = new SaslSession(RdmxServer.SASL_MAX_ROUNDS);
        } else {
            session = session(caller, id);
            if (session == null) {
                throw new UnknownSaslSessionException("SASL message of rdmx caller '" + peer + "' names no "
                    + "negotiation of Hadoop RPC server " + serverName + " (negotiate again)");
            }
        }
        RpcRequestHeaderProto header = RdmxIpcBridge.readDelimited(RpcRequestHeaderProto.getDefaultInstance(), body);
        RpcResponseHeaderProto.Builder rh = RpcResponseHeaderProto.newBuilder().setCallId(header.getCallId())
            .setServerIpcVersionNum(RpcConstants.CURRENT_VERSION);
        RpcSaslProto answer;
        try {
            if (header.getCallId() != Server.AuthProtocol.SASL.callId) {
                throw new SaslException("SASL message of rdmx caller '" + peer + "' has call id "
                    + header.getCallId() + ", not " + Server.AuthProtocol.SASL.callId);
            }
            RpcSaslProto m = RdmxIpcBridge.readDelimited(RpcSaslProto.getDefaultInstance(), body);
            answer = session.process(m, peer, caller.inet, this);
        } catch (IOException | RuntimeException e) {
            forget(caller, session);
            refused.increment();
            IOException told = e instanceof IOException ? TokenCallbacks.trueCause((IOException) e)
                : new IOException(e.toString(), e);
            LOG.warn("Hadoop RPC server {}: SASL authentication of rdmx caller '{}' ({}) failed: {} (told: {})",
                serverName, peer, caller.address, e, told.toString());
            rh.setStatus(RpcStatusProto.FATAL).setExceptionClassName(told.getClass().getName())
                .setErrorMsg(String.valueOf(told.getMessage())).setErrorDetail(RpcErrorCodeProto.FATAL_UNAUTHORIZED);
            return answer(session, rh.build(), null);
        }
        if (answer == null || answer.getState() == SaslState.SUCCESS && session.user() == null) {
            // the client goes on without a session (SIMPLE): nothing to keep
            forget(caller, session);
            return answer == null ? ByteBuffer.wrap(idBytes(session))
                : answer(session, rh.setStatus(RpcStatusProto.SUCCESS).build(), answer);
        }
        if (fresh) {
            remember(caller, session);
        }
        if (session.user() != null) {
            established.increment();
            LOG.debug("Hadoop RPC server {}: SASL authentication ({}) of rdmx caller '{}' ({}) succeeded for {}",
                serverName, session.method(), peer, caller.address, session.user());
        }
        return answer(session, rh.setStatus(RpcStatusProto.SUCCESS).build(), answer);
    }

    private static ByteBuffer answer(SaslSession session, RpcResponseHeaderProto header, RpcSaslProto m)
        throws IOException {
        java.io.ByteArrayOutputStream o = new java.io.ByteArrayOutputStream(256);
        o.write(idBytes(session));
        header.writeDelimitedTo(o);
        if (m != null) {
            m.writeDelimitedTo(o);
        }
        return ByteBuffer.wrap(o.toByteArray());
    }

    private static byte[] idBytes(SaslSession session) {
        byte[] b = new byte[SaslSession.ID_BYTES];
        session.id.duplicate().get(b);
        return b;
    }

    private static boolean isZero(ByteBuffer b) {
        for (int i = b.position(); i < b.limit(); i++) {
            if (b.get(i) != 0) {
                return false;
            }
        }
        return true;
    }

    /** @return the caller's session of this id, or null */
    static SaslSession session(Callers.Caller caller, ByteBuffer id) {
        synchronized (caller.sessions) {
            return caller.sessions.get(id);
        }
    }

    /** Keeps a new session for its caller, forgetting the least recently used one beyond the bound. */
    private static void remember(Callers.Caller caller, SaslSession session) {
        SaslSession evicted = null;
        synchronized (caller.sessions) {
            caller.sessions.put(session.id, session);
            if (caller.sessions.size() > RdmxServer.SASL_SESSIONS_PER_CALLER) {
                java.util.Iterator<SaslSession> it = caller.sessions.values().iterator();
                evicted = it.next();
                it.remove();
            }
        }
        if (evicted != null) {
            evicted.forget();
        }
    }

    /** Forgets a caller's session (refused, or over). */
    static void forget(Callers.Caller caller, SaslSession session) {
        synchronized (caller.sessions) {
            caller.sessions.remove(session.id, session);
        }
        session.forget();
    }
}
