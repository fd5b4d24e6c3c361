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
import org.apache.hadoop.security.SaslPropertiesResolver;
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
 * methods this listener takes (KERBEROS), INITIATE with the method the client chose and its first token, then
 * RESPONSE/CHALLENGE rounds until the SASL server completes (SUCCESS). The SASL server is Hadoop's own
 * ({@link SaslRpcServer}), with the SASL properties of {@link SaslPropertiesResolver} for the caller's address.
 * A negotiation that ends with QOP integrity ({@code auth-int}) or privacy ({@code auth-conf}) keeps its SASL
 * server: every call of the session then arrives wrapped by the client's SASL client and every answer leaves
 * wrapped by this server ({@link #unwrap}, {@link #wrapAndSend}), as a stock connection wraps each RPC message; a message
 * that does not unwrap ends the session (its caller negotiates again).
 */
final class SaslSession {
    /** Bytes of a session id. */
    static final int ID_BYTES = 16;
    /** The methods this listener offers, in stock order (as {@code Server}'s enabled list prints). */
    static final String AVAILABLE = "[" + AuthMethod.KERBEROS + "]";
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
     * @param resolver the server's SASL properties
     * @return the answer
     * @throws IOException if the negotiation fails: the client is refused, the session is over
     *     (AccessControlException for a method not offered, SaslException for a failed SASL exchange)
     */
    synchronized RpcSaslProto process(RpcSaslProto m, String peer, InetAddress address,
        SaslPropertiesResolver resolver) throws IOException {
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
                SaslRpcServer krb = new SaslRpcServer(AuthMethod.KERBEROS);
                SaslAuth.Builder a = SaslAuth.newBuilder().setMethod(krb.authMethod.toString())
                    .setMechanism(krb.mechanism);
                if (krb.protocol != null) {
                    a.setProtocol(krb.protocol);
                }
                if (krb.serverId != null) {
                    a.setServerId(krb.serverId);
                }
                return RpcSaslProto.newBuilder().setState(SaslState.NEGOTIATE).addAuths(a).build();
            }
            case INITIATE: {
                if (sasl != null) {
                    throw new AccessControlException("rdmx caller '" + peer + "' sent SASL INITIATE twice");
                }
                if (m.getAuthsCount() != 1) {
                    throw new SaslException("rdmx caller '" + peer + "' sent SASL INITIATE with "
                        + m.getAuthsCount() + " methods; exactly one expected");
                }
                SaslAuth chosen = m.getAuths(0);
                if (!AuthMethod.KERBEROS.toString().equals(chosen.getMethod())) {
                    // the stock server's words for a method it does not take
                    throw new AccessControlException(chosen.getMethod() + " authentication is not enabled."
                        + "  Available:" + AVAILABLE);
                }
                Map<String, String> props = resolver.getServerProperties(address);
                try {
                    SaslRpcServer krb = new SaslRpcServer(AuthMethod.KERBEROS);
                    sasl = UserGroupInformation.getLoginUser().doAs(
                        (PrivilegedExceptionAction<SaslServer>) () -> RdmxIpcBridge.kerberosSaslServer(krb, props));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted making the SASL server for rdmx caller '" + peer + "'", e);
                }
                return evaluate(m, peer);
            }
            case RESPONSE:
                if (sasl == null) {
                    throw new SaslException("rdmx caller '" + peer + "' sent SASL RESPONSE before INITIATE");
                }
                return evaluate(m, peer);
            default:
                throw new SaslException("rdmx caller '" + peer + "' sent SASL " + m.getState()
                    + ", which a client does not send");
        }
    }

    private RpcSaslProto evaluate(RpcSaslProto m, String peer) throws IOException {
        byte[] challenge = sasl.evaluateResponse(m.hasToken() ? m.getToken().toByteArray() : new byte[0]);
        RpcSaslProto.Builder r = RpcSaslProto.newBuilder();
        if (!sasl.isComplete()) {
            r.setState(SaslState.CHALLENGE);
        } else {
            Object q = sasl.getNegotiatedProperty(Sasl.QOP);
            qop = q == null ? "auth" : q.toString();
            if (!"auth".equals(qop) && !"auth-int".equals(qop) && !"auth-conf".equals(qop)) {
                throw new AccessControlException("rdmx caller '" + peer + "' negotiated an unknown SASL QOP " + qop);
            }
            wraps = !"auth".equals(qop);
            user = UserGroupInformation.createRemoteUser(sasl.getAuthorizationID(), AuthMethod.KERBEROS);
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
