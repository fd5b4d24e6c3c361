package io.rdmx.rpc.hadoop;

import io.rdmx.rpc.RpcCall;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.ipc.RdmxIpcBridge;
import org.apache.hadoop.ipc.Server;
import org.apache.hadoop.ipc.protobuf.IpcConnectionContextProtos.IpcConnectionContextProto;
import org.apache.hadoop.security.AccessControlException;
import org.apache.hadoop.security.SaslRpcServer.AuthMethod;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.util.ProtoUtil;

/**
 * The rdmx listener's callers, as a stock server knows its connections: each calling node by the address its
 * connection really comes from, and the contexts (protocol, user) authorized for it, decoded and authorized once
 * per caller and distinct prefix, and again once a refresh of the service ACLs or proxy-user rules or the end of
 * its SASL session means the authorization no longer stands. Bounded: {@value #CACHE} callers, and as many
 * contexts per caller.
 */
final class Callers {
    /** The most callers, and contexts per caller, remembered; beyond it the map starts again. */
    static final int CACHE = 4096;

    private final Server server;
    private final String serverName;
    private final ConcurrentHashMap<String, Caller> byPeer = new ConcurrentHashMap<>();

    /**
     * @param server the Hadoop server whose authorization rules apply
     * @param serverName its name, for errors
     */
    Callers(Server server, String serverName) {
        this.server = server;
        this.serverName = serverName;
    }

    /**
     * @param peer an rdmx peer's name
     * @return the caller known by that name, or null
     */
    Caller known(String peer) {
        return byPeer.get(peer);
    }

    /**
     * A caller's identity, decoded and authorized once per caller connection and distinct prefix (protocol and
     * user), as a stock server authorizes a connection when its context arrives; valid while the authorization it
     * passed stands: the service ACLs and the proxy-user rules it was checked against are still the server's
     * (a refresh replaces them, and the next call is authorized again).
     */
    static final class Context {
        final String protocol;
        final UserGroupInformation user;
        final InetAddress host;
        final RdmxIpcBridge.Authorized authorized;
        /** The SASL session the user was authenticated by, or null (simple authentication). */
        final SaslSession session;

        Context(String protocol, UserGroupInformation user, InetAddress host, RdmxIpcBridge.Authorized authorized,
            SaslSession session) {
            this.protocol = protocol;
            this.user = user;
            this.host = host;
            this.authorized = authorized;
            this.session = session;
        }

        boolean stands() {
            return (authorized == null || authorized.stands()) && (session == null || session.live());
        }
    }

    /**
     * One calling node as the transport knows it: its name and the address its connection really comes from; the
     * contexts authorized for it. A node that comes back from another address starts again.
     */
    static final class Caller {
        final String address;
        /** The parsed address, or null: the transport cannot tell where the caller is (refused). */
        final InetAddress inet;
        final ConcurrentHashMap<ByteBuffer, Context> contexts = new ConcurrentHashMap<>();
        /** SASL sessions by id, least recently used first; guarded by itself. */
        final LinkedHashMap<ByteBuffer, SaslSession> sessions = new LinkedHashMap<>(16, 0.75f, true);

        Caller(String address, InetAddress inet) {
            this.address = address;
            this.inet = inet;
        }
    }

    /**
     * The caller as the transport knows it. Its address is parsed as an IP literal only (never looked up): a
     * caller whose connection's address is unknown or not a literal is refused.
     */
    Caller of(RpcCall rc) throws AccessControlException {
        String address = rc.callerAddress();
        Caller c = byPeer.get(rc.peer());
        if (c == null || !java.util.Objects.equals(c.address, address)) {
            c = new Caller(address, ipLiteral(address));
            if (byPeer.size() >= CACHE) {
                byPeer.clear();
            }
            byPeer.put(rc.peer(), c);
        }
        if (c.inet == null) {
            throw new AccessControlException("rdmx caller '" + rc.peer() + "' of Hadoop RPC server "
                + serverName + " is refused: the transport cannot tell the address its connection comes from"
                + " (address=" + address + ")");
        }
        return c;
    }

    /**
     * @param s an IP address as a transport reports it
     * @return the address, or null unless {@code s} is an IPv4 literal (four decimal parts) or an IPv6 literal: no
     *     name is ever resolved
     */
    static InetAddress ipLiteral(String s) {
        if (s == null || s.isEmpty() || s.length() > 64) {
            return null;
        }
        try {
            if (s.indexOf(':') >= 0) {
                // a string with a colon is parsed as an IPv6 literal, never looked up
                return s.chars().allMatch(ch -> Character.digit(ch, 16) >= 0 || ch == ':' || ch == '.' || ch == '%'
                    || Character.isLetterOrDigit(ch)) ? InetAddress.getByName(s) : null;
            }
            String[] parts = s.split("\\.", -1);
            if (parts.length != 4) {
                return null;
            }
            byte[] b = new byte[4];
            for (int i = 0; i < 4; i++) {
                String p = parts[i];
                if (p.isEmpty() || p.length() > 3 || !p.chars().allMatch(ch -> ch >= '0' && ch <= '9')) {
                    return null;
                }
                int v = Integer.parseInt(p);
                if (v > 255) {
                    return null;
                }
                b[i] = (byte) v;
            }
            return InetAddress.getByAddress(b);
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * The caller's context for this prefix if it was authorized on this caller connection and that authorization
     * still stands (moves {@code body} past the prefix); else null ({@code body} unchanged).
     */
    Context cachedContext(Caller caller, ByteBuffer body, String peer, boolean inSession)
        throws IOException {
        int start = body.position();
        int end = prefixEnd(body, start + (inSession ? SaslSession.ID_BYTES : 0), peer);
        Context c = caller.contexts.get(body.duplicate().position(start).limit(end));
        // a context of a session serves calls of that session only (a plain call cannot borrow its identity)
        if (c == null || !c.stands() || (c.session != null) != inSession) {
            return null;
        }
        body.position(end);                   // the usual case: no parsing, no copy
        return c;
    }

    /**
     * Decodes the context prefix and authorizes it as a stock server authorizes a connection (proxy users;
     * service ACLs with {@code hadoop.security.authorization}), with the caller's transport address; remembers it
     * for this caller. May block (group and host look-ups): never on the rdmx reader thread.
     */
    Context authorize(Caller caller, ByteBuffer body, String peer, boolean inSession) throws IOException {
        int start = body.position();
        int at = start;
        SaslSession session = null;
        if (inSession) {
            session = SaslListener.session(caller,
                body.duplicate().position(start).limit(start + SaslSession.ID_BYTES));
            if (session == null || session.user() == null) {
                throw new UnknownSaslSessionException("rdmx caller '" + peer + "' of Hadoop RPC server "
                    + serverName + " names no authenticated SASL session of its own (negotiate again)");
            }
            at += SaslSession.ID_BYTES;
        }
        int end = prefixEnd(body, at, peer);
        ByteBuffer key = body.duplicate().position(start).limit(end);
        body.position(at + 2 + (body.getShort(at) & 0xFFFF));           // the host the client names: not used
        IpcConnectionContextProto icc = RdmxIpcBridge.readDelimited(IpcConnectionContextProto.getDefaultInstance(),
            body);
        UserGroupInformation ugi = ProtoUtil.getUgi(icc);
        String protocol = icc.hasProtocol() ? icc.getProtocol() : null;
        if (session != null) {
            ugi = sessionUser(session, ugi, peer);
        }
        RdmxIpcBridge.Authorized authorized = null;
        if (ugi != null) {
            // throws AuthorizationException (not remembered: the next call is checked again)
            // the real user of a token's user obtained the token: not checked against the proxy-user rules
            authorized = RdmxIpcBridge.authorize(server, ugi, protocol, caller.inet,
                session == null || session.method() != AuthMethod.TOKEN);
        }
        Context c = new Context(protocol, ugi, caller.inet, authorized, session);
        if (caller.contexts.size() >= CACHE) {
            caller.contexts.clear();
        }
        byte[] copy = new byte[key.remaining()];
        key.get(copy);
        caller.contexts.put(ByteBuffer.wrap(copy), c);
        body.position(end);
        return c;
    }

    /**
     * The user of a call of an authenticated session, as a stock server derives it when a connection's context
     * arrives after SASL: the authenticated user, or, when the context names another user, that user acting
     * through the authenticated one (a proxy user, checked against the proxy-user rules by the authorization);
     * a TOKEN session's user is the token's and cannot be another (refused with the stock server's words).
     */
    private static UserGroupInformation sessionUser(SaslSession session, UserGroupInformation claimed, String peer)
        throws AccessControlException {
        UserGroupInformation authenticated = session.user();
        if (claimed == null || claimed.getUserName().equals(authenticated.getUserName())) {
            return authenticated;
        }
        if (session.method() == AuthMethod.TOKEN) {
            throw new AccessControlException("Authenticated user (" + authenticated + ") doesn't match what the "
                + "client claims to be (" + claimed + ")");
        }
        return UserGroupInformation.createProxyUser(claimed.getUserName(), authenticated);
    }

    /**
     * Where the context prefix ends: after the host (2-byte length and its bytes) and the varint-delimited
     * connection context, checked against the body's bounds.
     */
    static int prefixEnd(ByteBuffer body, int start, String peer) throws IOException {
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
}
