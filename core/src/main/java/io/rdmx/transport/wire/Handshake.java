package io.rdmx.transport.wire;

import static io.rdmx.transport.wire.FrameDescriptor.HEADER_LENGTH;

import io.rdmx.transport.ProtocolException;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.internal.AbstractNode;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.List;
import org.slf4j.Logger;

/**
 * The handshake of one stream-protocol connection, for its {@link FrameReceiver}: HELLO (the nonces, the names,
 * whether each side has a cluster secret), AUTH (the proofs, the accepting side's first) and READY (the regions),
 * the accepting side's handshake slot, and how a refused handshake ends (an ERROR to the peer, then the socket
 * closes; on the dialing side the dial's exception, naming the peer).
 *
 * <p>It keeps what the handshake learns (our nonce, the peer's HELLO, the slot and the source address it is
 * counted against) and reaches the receiver through a narrow interface: the receiver's step ({@link
 * FrameReceiver#state()}, {@link FrameReceiver#enter(int)}), {@link
 * FrameReceiver#connectionEstablished(AbstractConnection)}, {@link FrameReceiver#discard()} and the provider's
 * handshake hooks. The receiver hands it whole HELLO, AUTH and READY frames; nothing here runs per data frame.
 *
 * <p>I/O thread only, like the receiver.
 *
 * @param <C> the provider's connection type
 */
final class Handshake<C extends AbstractConnection> {
    private static final SecureRandom RANDOM = new SecureRandom();

    private final FrameReceiver<C> r;
    /** The provider's logger (its log lines keep their category). */
    private final Logger log;
    private final AbstractNode node;
    private final byte[] nonce = new byte[FrameDescriptor.NONCE_LENGTH];

    private FrameBuffers.Hello peer;
    /** True while the accepting side holds a handshake slot of the node. */
    private boolean counted;
    /** The accepted peer's source address ({@link ReceiverHooks#sourceAddress()}), or null. */
    private String source;

    /**
     * @param receiver the receiver whose handshake this is (its node and dial fields set)
     * @param log the provider's logger
     */
    Handshake(FrameReceiver<C> receiver, Logger log) {
        this.r = receiver;
        this.log = log;
        this.node = receiver.node;
        RANDOM.nextBytes(nonce);
    }

    /** @return the peer's name once it sent HELLO, before that what is known of it */
    String peerName() {
        return peer != null ? peer.name() : (r.active ? r.dialedAddress : r.describeRemote());
    }

    /**
     * @return the connection's scope token (see {@link FrameReceiver#scopeToken()})
     * @throws IllegalStateException before the peer's HELLO
     */
    String scopeToken() {
        if (peer == null) {
            throw new IllegalStateException("no scope before the peer's HELLO");
        }
        byte[] nc = r.active ? nonce : peer.nonce();
        byte[] na = r.active ? peer.nonce() : nonce;
        try {
            MessageDigest d = MessageDigest.getInstance("SHA-256");
            d.update(nc);
            d.update(na);
            byte[] h = d.digest();
            StringBuilder b = new StringBuilder(16);
            for (int i = 0; i < 8; i++) {
                b.append(Character.forDigit((h[i] >> 4) & 0xf, 16)).append(Character.forDigit(h[i] & 0xf, 16));
            }
            return b.toString();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e);
        }
    }

    /**
     * The socket is connected: the accepting side takes a handshake slot, or refuses (the receiver discards, an
     * ERROR goes out and the socket closes).
     *
     * @return false if refused
     */
    boolean start() {
        if (!r.active) {
            source = r.sourceAddress();
            String full = node.beginHandshake(source);
            if (full != null) {
                log.warn("node '{}': refusing a connection from {}: {}", node.name(), r.describeRemote(), full);
                r.enter(FrameReceiver.S_DISCARD);
                r.writeErrorAndClose(FrameBuffers.error("node '" + node.name() + "' has " + full
                    + ": try again later"), true);
                return false;
            }
            counted = true;
        }
        return true;
    }

    /** The dialing side opens the handshake. */
    void sendHello() {
        if (r.active) {
            r.writeHandshake(FrameBuffers.hello(myHello()), true);
        }
    }

    /**
     * Before the connection is established, only the frame the handshake step expects (or ERROR, PING).
     *
     * @param type the frame's type
     * @throws ProtocolException for any other
     */
    void checkFrame(int type) throws ProtocolException {
        int state = r.state();
        int expected = state == FrameReceiver.S_HELLO ? FrameDescriptor.TYPE_HELLO
            : state == FrameReceiver.S_AUTH ? FrameDescriptor.TYPE_AUTH : FrameDescriptor.TYPE_READY;
        if (type != expected && type != FrameDescriptor.TYPE_ERROR && type != FrameDescriptor.TYPE_PING) {
            throw new ProtocolException(FrameDescriptor.typeName(type) + " frame from '" + peerName()
                + "' during the handshake, where " + FrameDescriptor.typeName(expected) + " was expected");
        }
    }

    private FrameBuffers.Hello myHello() {
        return new FrameBuffers.Hello(node.options().secret() != null, nonce, node.name(), node.address());
    }

    /**
     * @param f the peer's HELLO frame, whole
     * @throws ProtocolException if it is not the step's frame or malformed
     */
    void hello(ByteBuffer f) throws ProtocolException {
        if (r.state() != FrameReceiver.S_HELLO) {
            throw new ProtocolException("unexpected HELLO from '" + peerName() + "'");
        }
        peer = FrameBuffers.parseHello(f);
        boolean mine = node.options().secret() != null;
        if (peer.hasSecret() != mine) {
            handshakeRefused("cluster secret mismatch: node '" + node.name() + "' has a secret=" + mine
                + ", peer '" + peer.name() + "' has a secret=" + peer.hasSecret());
            return;
        }
        if (peer.name().equals(node.name())) {
            handshakeRefused("peer claims name='" + peer.name() + "', the name of node '" + node.name()
                + "' itself");
            return;
        }
        if (!r.active) {
            if (node.connectionTo(peer.name()) != null) {
                handshakeRefused("a connection between '" + peer.name() + "' and '" + node.name()
                    + "' already exists (one connection per pair of nodes)");
                return;
            }
            String bad = r.checkAcceptedPeer(peer.address());
            if (bad == null) {
                bad = node.checkConnectionRoom(source);
            }
            if (bad != null) {
                handshakeRefused(bad);
                return;
            }
            r.writeHandshake(FrameBuffers.hello(myHello()), !mine);
            if (mine) {
                // our proof first: the connecting side checks it before it proves anything or sends its regions
                r.writeHandshake(FrameBuffers.auth(proof().prove(true, peer.nonce(), nonce, node.name(),
                    peer.name(), node.address())), true);
                r.enter(FrameReceiver.S_AUTH);
            } else {
                r.enter(FrameReceiver.S_READY);
            }
        } else if (mine) {
            r.enter(FrameReceiver.S_AUTH);
        } else {
            sendReady();
        }
    }

    private AuthProof proof() {
        return new AuthProof(node.options().secret());
    }

    /**
     * @param f the peer's AUTH frame, whole
     * @throws ProtocolException if it is not the step's frame
     */
    void auth(ByteBuffer f) throws ProtocolException {
        if (r.state() != FrameReceiver.S_AUTH) {
            throw new ProtocolException("unexpected AUTH from '" + peerName() + "'");
        }
        byte[] got = new byte[FrameDescriptor.MAC_LENGTH];
        f.get(HEADER_LENGTH, got);
        // the connecting side's nonce is Nc, the accepting side's Na; each side checks against its own nonce
        byte[] nc = r.active ? nonce : peer.nonce();
        byte[] na = r.active ? peer.nonce() : nonce;
        if (!proof().check(got, r.active, nc, na, peer.name(), node.name(), peer.address())) {
            handshakeRefused("cluster secret mismatch: peer '" + peer.name() + "' failed authentication with '"
                + node.name() + "'");
            return;
        }
        if (r.active) {
            r.writeHandshake(FrameBuffers.auth(proof().prove(false, nc, na, node.name(), peer.name(),
                node.address())), false);
            sendReady();
        } else {
            r.enter(FrameReceiver.S_READY);
        }
    }

    /** The connecting side, the peer authenticated: our regions, then wait for the peer's READY. */
    private void sendReady() {
        r.writeHandshake(FrameBuffers.ready(node.exportedRegions()), true);
        r.enter(FrameReceiver.S_READY);
    }

    /**
     * @param f the peer's READY frame, whole
     * @throws ProtocolException if it is not the step's frame or malformed
     */
    void ready(ByteBuffer f) throws ProtocolException {
        if (r.state() != FrameReceiver.S_READY) {
            throw new ProtocolException("unexpected READY from '" + peerName() + "'");
        }
        List<RemoteRegion> regions = FrameBuffers.parseReady(f);
        if (r.active) {
            // WRITEs go to the directory that was dialed, never to one the peer names
            C c = r.newConnection(peer.name(), r.dialedAddress, regions);
            c.trustAddress(); // dialed there
            if (!node.addConnection(c)) {
                handshakeRefused("node '" + node.name() + "' already has a connection to '" + peer.name() + "'");
                return;
            }
            established(c);
            if (!r.connectFuture.complete(c)) {
                c.close();
            }
            return;
        }
        C c = r.newConnection(peer.name(), peer.address(), regions);
        c.accepted(source);
        if (node.options().secret() != null) {
            c.trustAddress(); // the peer's proof covered the address it announced
        }
        if (!node.addConnection(c)) {
            handshakeRefused("a connection between '" + peer.name() + "' and '" + node.name() + "' already exists");
            return;
        }
        if (!r.offerAndReady(c, FrameBuffers.ready(node.exportedRegions()))) {
            node.removeConnection(c);
            handshakeRefused("node '" + node.name() + "' has a full accept backlog (acceptBacklog="
                + node.options().acceptBacklog() + ")");
            return;
        }
        established(c);
    }

    private void established(C c) {
        r.connectionEstablished(c);
        handshakeOver();
        r.onEstablished(c);
    }

    /** The handshake is over (established or failed): release its slot and its timer. */
    void handshakeOver() {
        if (counted) {
            counted = false;
            node.endHandshake(source);
        }
        r.stopHandshakeTimer();
    }

    // ---- failures ----

    /** The handshake did not complete within {@code handshakeTimeout}: refused with an ERROR. */
    void handshakeTimedOut() {
        handshakeRefused("handshake not completed within handshakeTimeout="
            + node.options().handshakeTimeout().toMillis() + " ms");
    }

    private void handshakeRefused(String why) {
        log.warn("node '{}': connection with '{}' refused: {}", node.name(), peerName(), why);
        if (r.active) {
            r.connectFuture.completeExceptionally(new RdmxException("connect from '" + node.name()
                + "' to address=" + r.dialedAddress + " failed: " + why));
        }
        sendErrorAndClose(why);
    }

    /**
     * The handshake failed: the receiver discards its input, the slot and timer are released, and an ERROR goes
     * to the peer before the socket closes.
     *
     * @param why the explanation the peer gets
     */
    void sendErrorAndClose(String why) {
        r.discard();
        handshakeOver();
        // the peer gets a moment to read the ERROR (closing with unread input resets the connection); a peer
        // that does not read cannot keep the socket: it closes after a bounded linger
        r.writeErrorAndClose(FrameBuffers.error(why), false);
    }
}
