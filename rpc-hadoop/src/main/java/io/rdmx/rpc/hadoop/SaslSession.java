package io.rdmx.rpc.hadoop;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.security.PrivilegedExceptionAction;
import java.security.SecureRandom;
import java.util.Map;
import javax.security.sasl.Sasl;
import javax.security.sasl.SaslException;
import javax.security.sasl.SaslServer;
import org.apache.hadoop.ipc.RdmxIpcBridge;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcSaslProto;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcSaslProto.SaslAuth;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcSaslProto.SaslState;
import org.apache.hadoop.security.AccessControlException;
import org.apache.hadoop.security.SaslRpcServer;
import org.apache.hadoop.security.SaslRpcServer.AuthMethod;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.thirdparty.protobuf.ByteString;

/**
 * The server side of one SASL negotiation carried over rdmx, and once it succeeded, the identity it established:
 * what a stock server keeps in its {@code Connection} (the SASL server, the authenticated user). A client's calls
 * name their session by its id; a session belongs to the rdmx caller (node and address) that negotiated it.
 *
 * <p>The messages are Hadoop's {@code RpcSaslProto}, answered as a stock server answers them: NEGOTIATE with the
 * methods the listener takes, in the stock server's order ({@link SaslListener}: TOKEN first when the server has a
 * secret manager, then KERBEROS or SIMPLE; TOKEN's first DIGEST-MD5 challenge rides on that answer, as Hadoop's
 * server sends it), INITIATE with the method the client chose and its token, then RESPONSE/CHALLENGE rounds until
 * the SASL server completes (SUCCESS). KERBEROS uses Hadoop's own GSSAPI server ({@link SaslRpcServer}); TOKEN a
 * DIGEST-MD5 server whose callbacks check the token with the server's secret manager ({@link TokenCallbacks});
 * both with the SASL properties of {@code SaslPropertiesResolver} for the caller's address. The user of a TOKEN
 * session is the token's (its owner, through its real user if it has one), {@code auth:TOKEN}.
 * A negotiation that ends with QOP integrity ({@code auth-int}) or privacy ({@code auth-conf}) keeps its SASL
 * server: every call of the session then arrives wrapped by the client's SASL client and every answer leaves
 * wrapped by this server ({@link #unwrap}, {@link #wrapAndSend}), as a stock connection wraps each RPC message; a
 * message that does not unwrap ends the session (its caller negotiates again).
 */
final class SaslSession {
    /** Bytes of a session id. */
    static final int ID_BYTES = 16;
    private static final SecureRandom RANDOM = new SecureRandom();

    final ByteBuffer id;
    private final int maxRounds;
    /** Orders wraps (answers leave in the order of their sequence numbers). */
    private final Object wrapLock = new Object();
    /** Orders unwraps (calls are unwrapped in the order they arrived); wrap and unwrap run at once, as on TCP. */
    private final Object unwrapLock = new Object();
    private int rounds;
    private boolean negotiated;
    private volatile SaslServer sasl;
    private volatile UserGroupInformation user;
    /** The method the client chose (or TOKEN, challenged with in the NEGOTIATE answer); guarded by this. */
    private AuthMethod method;
    /** True once established with QOP integrity or privacy: calls and answers are wrapped. */
    private volatile boolean wraps;
    /** The negotiated QOP, or null before the negotiation succeeded. */
    private volatile String qop;
    /** False once forgotten by its caller (evicted): calls naming it negotiate again. */
    private volatile boolean live = true;

    SaslSession(int maxRounds) {
        byte[] b = new byte[ID_BYTES];
        RANDOM.nextBytes(b);
        this.id = ByteBuffer.wrap(b).asReadOnlyBuffer();
        this.maxRounds = maxRounds;
    }

    /** @return the user the negotiation authenticated, or null before it succeeded */
    UserGroupInformation user() {
        return user;
    }

    boolean live() {
        return live;
    }

    /** @return true if the session's calls and answers are wrapped (QOP integrity or privacy) */
    boolean wraps() {
        return wraps;
    }

    /** @return the negotiated QOP ({@code auth}, {@code auth-int}, {@code auth-conf}), or null before */
    String qop() {
        return qop;
    }

    /**
     * Unwraps a call of a wrapping session. The SASL server's sequence numbers need the tokens in the order the
     * client wrapped them: the caller unwraps a session's calls in the order they arrived.
     *
     * @param token the wrapped bytes
     * @param peer the rdmx caller, named in errors
     * @return the plain bytes
     * @throws SaslException if the token does not unwrap (tampered, replayed, out of order) or the session is over
     */
    byte[] unwrap(byte[] token, String peer) throws SaslException {
        synchronized (unwrapLock) {
            SaslServer s = sasl;
            if (!live || s == null) {
                throw new SaslException("SASL session of rdmx caller '" + peer + "' is over");
            }
            return s.unwrap(token, 0, token.length);
        }
    }

    /**
     * Wraps an answer of a wrapping session, and hands it on ({@code send}) under the same lock, so answers leave
     * in the order their sequence numbers were given.
     *
     * @param plain the answer
     * @param peer the rdmx caller, named in errors
     * @param send writes the wrapped answer
     * @throws SaslException if it cannot be wrapped (the session is over)
     */
    void wrapAndSend(byte[] plain, String peer, java.util.function.Consumer<byte[]> send) throws SaslException {
        synchronized (wrapLock) {
            SaslServer s = sasl;
            if (!live || s == null) {
                throw new SaslException("SASL session of rdmx caller '" + peer + "' is over");
            }
            send.accept(s.wrap(plain, 0, plain.length));
        }
    }

    /** Forgets the session: its SASL server is disposed, calls naming it are refused. */
    synchronized void forget() {
        live = false;
        dispose();
    }

    /**
     * One message of the client. Messages of one session come one at a time (a client waits for each answer).
     *
     * @param m the client's message
     * @param peer the rdmx caller, named in errors
     * @param address the caller's address (the SASL properties may depend on it)
     * @param offer what the listener offers: the methods, the SASL properties, the secret manager
     * @return the answer, or null: the client chose SIMPLE (it expects no answer; the session is not kept)
     * @throws IOException if the negotiation fails: the client is refused, the session is over
     *     (AccessControlException for a method not offered, SaslException for a failed SASL exchange, the secret
     *     manager's InvalidToken inside a SaslException for a token it does not take)
     */
    synchronized RpcSaslProto process(RpcSaslProto m, String peer, InetAddress address, SaslListener offer)
        throws IOException {
        if (!live) {
            throw new AccessControlException("SASL session of rdmx caller '" + peer + "' is over");
        }
        if (user != null) {
            throw new AccessControlException("rdmx caller '" + peer + "' sent SASL " + m.getState()
                + " after its session was established");
        }
        if (++rounds > maxRounds) {
            throw new AccessControlException("rdmx caller '" + peer + "' sent more than " + maxRounds
                + " SASL messages without completing the negotiation");
        }
        switch (m.getState()) {
            case NEGOTIATE: {
                if (negotiated) {
                    throw new AccessControlException("rdmx caller '" + peer + "' sent SASL NEGOTIATE twice");
                }
                negotiated = true;
                RpcSaslProto answer = offer.negotiate();
                if (answer.getState() != SaslState.NEGOTIATE || !offer.offers(AuthMethod.TOKEN)) {
                    return answer;            // SUCCESS: a SIMPLE-only listener, the client goes on unauthenticated
                }
                // as Hadoop's server: the TOKEN server's first challenge rides on the answer (one round less)
                sasl = tokenServer(offer, address);
                method = AuthMethod.TOKEN;
                RpcSaslProto.Builder b = answer.toBuilder();
                b.getAuthsBuilder(0).setChallenge(ByteString.copyFrom(sasl.evaluateResponse(new byte[0])));
                return b.build();
            }
            case INITIATE: {
                if (m.getAuthsCount() != 1) {
                    throw new SaslException("rdmx caller '" + peer + "' sent SASL INITIATE with "
                        + m.getAuthsCount() + " methods; exactly one expected");
                }
                SaslAuth chosen = m.getAuths(0);
                if (!offer.negotiate().getAuthsList().contains(chosen)) {
                    // the stock server's words for a method it does not take
                    throw new AccessControlException(chosen.getMethod() + " authentication is not enabled."
                        + "  Available:" + offer.available());
                }
                AuthMethod how = AuthMethod.valueOf(chosen.getMethod());
                if (how == AuthMethod.SIMPLE) {
                    dispose();
                    return null;
                }
                if (how == AuthMethod.TOKEN && method == AuthMethod.TOKEN && sasl != null) {
                    return evaluate(m, peer, offer);       // the server the NEGOTIATE answer challenged with
                }
                dispose();
                method = how;
                sasl = how == AuthMethod.TOKEN ? tokenServer(offer, address) : kerberosServer(offer, address, peer);
                return evaluate(m, peer, offer);
            }
            case RESPONSE:
                if (sasl == null || method == null) {
                    throw new SaslException("rdmx caller '" + peer + "' sent SASL RESPONSE before INITIATE");
                }
                return evaluate(m, peer, offer);
            default:
                throw new SaslException("rdmx caller '" + peer + "' sent SASL " + m.getState()
                    + ", which a client does not send");
        }
    }

    /** A DIGEST-MD5 server checking tokens with the listener's secret manager ({@link TokenCallbacks}). */
    private static SaslServer tokenServer(SaslListener offer, InetAddress address) throws IOException {
        SaslRpcServer token = new SaslRpcServer(AuthMethod.TOKEN);
        SaslServer s = Sasl.createSaslServer(token.mechanism, token.protocol, token.serverId,
            offer.resolver().getServerProperties(address), new TokenCallbacks(offer.secretManager()));
        if (s == null) {
            throw new AccessControlException("Unable to find SASL server implementation for " + token.mechanism);
        }
        return s;
    }

    private static SaslServer kerberosServer(SaslListener offer, InetAddress address, String peer)
        throws IOException {
        Map<String, String> props = offer.resolver().getServerProperties(address);
        try {
            SaslRpcServer krb = new SaslRpcServer(AuthMethod.KERBEROS);
            return UserGroupInformation.getLoginUser().doAs(
                (PrivilegedExceptionAction<SaslServer>) () -> RdmxIpcBridge.kerberosSaslServer(krb, props));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted making the SASL server for rdmx caller '" + peer + "'", e);
        }
    }

    private RpcSaslProto evaluate(RpcSaslProto m, String peer, SaslListener offer) throws IOException {
        byte[] challenge = sasl.evaluateResponse(m.hasToken() ? m.getToken().toByteArray() : new byte[0]);
        RpcSaslProto.Builder r = RpcSaslProto.newBuilder();
        if (!sasl.isComplete()) {
            r.setState(SaslState.CHALLENGE);
        } else {
            Object q = sasl.getNegotiatedProperty(Sasl.QOP);
            String negotiatedQop = q == null ? "auth" : q.toString();
            if (!"auth".equals(negotiatedQop) && !"auth-int".equals(negotiatedQop)
                && !"auth-conf".equals(negotiatedQop)) {
                throw new AccessControlException("rdmx caller '" + peer + "' negotiated an unknown SASL QOP "
                    + negotiatedQop);
            }
            UserGroupInformation authenticated = method == AuthMethod.TOKEN
                ? TokenCallbacks.user(sasl.getAuthorizationID(), offer.secretManager())
                : UserGroupInformation.createRemoteUser(sasl.getAuthorizationID(), AuthMethod.KERBEROS);
            qop = negotiatedQop;
            wraps = !"auth".equals(qop);
            user = authenticated;
            if (!wraps) {
                dispose();                    // authentication only: nothing is wrapped, the SASL server is done
            }
            r.setState(SaslState.SUCCESS);
        }
        if (challenge != null) {
            r.setToken(ByteString.copyFrom(challenge));
        }
        return r.build();
    }

    /** @return the method the session authenticated with (KERBEROS or TOKEN), or null before */
    AuthMethod method() {
        return user == null ? null : method;
    }

    private void dispose() {
        SaslServer s;
        synchronized (wrapLock) {
            synchronized (unwrapLock) {
                s = sasl;
                sasl = null;
            }
        }
        if (s != null) {
            try {
                s.dispose();
            } catch (SaslException e) {
                // nothing to keep
            }
        }
    }
}
