package io.rdmx.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.channel.ChannelConfig;
import io.rdmx.channel.ChannelEngine;
import io.rdmx.transport.Access;
import io.rdmx.transport.Connection;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Region;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.Status;
import io.rdmx.transport.wire.FrameDescriptor;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The transport attacks of a network peer, played by a raw socket speaking the frame protocol against a tcp node
 * opened with default options (no secret): it must learn nothing of the regions granted to other peers, write
 * nothing into them, and take over no other node's address. Each test fails on the code before regions were
 * scoped per connection and dials trusted only dialed or proven addresses.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PeerScopeAttackTest {
    private static final AtomicInteger SEQ = new AtomicInteger();
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final byte[] INJECTED = "INJECTED".getBytes(StandardCharsets.US_ASCII);
    private final List<AutoCloseable> open = new ArrayList<>();

    private Node node(String role, UnaryOperator<NodeOptions.Builder> tweak) throws RdmxException {
        Node n = new TcpFabric().open(tweak.apply(NodeOptions.builder().name(role + "-" + SEQ.incrementAndGet()))
            .build());
        open.add(n);
        return n;
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    @Test
    void aRawPeerIsToldNothingOfTheChannelRingsOfAnotherPeer() throws Exception {
        Node victim = node("victim", b -> b);
        Node legit = node("legit", b -> b);
        ChannelEngine ve = ChannelEngine.open(victim, ChannelConfig.builder(2).build());
        open.add(ve);
        ChannelEngine le = ChannelEngine.open(legit, ChannelConfig.builder(2).build());
        open.add(le);
        le.connect(victim.address(), WAIT);
        ve.accept(WAIT);
        try (RawPeer raw = new RawPeer(victim.address())) {
            List<RemoteRegion> told = raw.handshake("raw-" + SEQ.incrementAndGet(), "127.0.0.1:1");
            assertEquals(List.of(), told, "READY to a stranger lists no region: the victim's pair region with '"
                + legit.name() + "' is granted to that peer alone");
        }
    }

    @Test
    void aRawPeerCannotWriteIntoARegionGrantedToAnotherPeer() throws Exception {
        Node victim = node("victim", b -> b);
        Node legit = node("legit", b -> b);
        legit.connect(victim.address(), WAIT);
        Connection toLegit = victim.accept(WAIT);
        Region ring = toLegit.register(4096, Access.ALL);
        byte[] before = new byte[64];
        ring.buffer().get(0, before);
        try (RawPeer raw = new RawPeer(victim.address())) {
            List<RemoteRegion> told = raw.handshake("raw-" + SEQ.incrementAndGet(), "127.0.0.1:1");
            assertFalse(told.contains(ring.descriptor()));
            Connection toRaw = victim.accept(WAIT);
            // the attacker knows (or guessed) the key, the length and the offset: the key is still not its own
            raw.send(RawPeer.writeHeader(0, 1, ring.remoteKey(), 0, 0, INJECTED.length));
            raw.send(INJECTED);
            RawPeer.Frame nak = raw.expect(FrameDescriptor.TYPE_NAK);
            assertNotNull(nak, "the WRITE is refused with a NAK");
            int status = (nak.payload()[0] & 0xff) | (nak.payload()[1] & 0xff) << 8;
            assertEquals(Status.REMOTE_ACCESS_ERROR.ordinal(), status);
            assertTrue(nak.text().contains("rkey=0x" + Integer.toHexString(ring.remoteKey())), nak.text());
            awaitClosed(toRaw);
        }
        byte[] after = new byte[64];
        ring.buffer().get(0, after);
        assertArrayEquals(before, after, "nothing of the WRITE landed in the other peer's region");
        assertTrue(toLegit.isOpen(), "the peer the region is granted to is not affected");
    }

    @Test
    void aPeerThatClaimsAnotherServersAddressIsNotReturnedByADialToIt() throws Exception {
        Node server = node("server", b -> b);
        Node victim = node("victim", b -> b);
        try (RawPeer raw = new RawPeer(victim.address())) {
            raw.handshake("impostor-" + SEQ.incrementAndGet(), server.address());
            Connection claimed = victim.accept(WAIT);
            assertEquals(server.address(), claimed.peerAddress(), "the claim is recorded as said");
            Connection dialed = victim.connect(server.address(), WAIT);
            assertNotEquals(claimed, dialed, "a dial to an address returns the node dialed there, not a claimer");
            assertEquals(server.name(), dialed.peerName());
            assertSame(dialed, victim.connect(server.address(), WAIT), "the dialed connection is reused");
        }
    }

    @Test
    void aClaimedAddressWhereNobodyListensIsNotHandedBack() throws Exception {
        Node victim = node("victim", b -> b);
        try (RawPeer raw = new RawPeer(victim.address())) {
            String unused;
            try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
                unused = "127.0.0.1:" + s.getLocalPort();
            }
            raw.handshake("impostor-" + SEQ.incrementAndGet(), unused);
            Connection claimed = victim.accept(WAIT);
            RdmxException e = assertThrows(RdmxException.class, () -> victim.connect(unused, Duration.ofSeconds(2)));
            assertTrue(claimed.isOpen());
            assertFalse(e.getMessage().isEmpty());
        }
    }

    @Test
    void withTheSecretAnAcceptedPeersProvenAddressIsReusedForADial() throws Exception {
        Node a = node("a", b -> b.secret("s3cret"));
        Node b = node("b", x -> x.secret("s3cret"));
        Connection ab = a.connect(b.address(), WAIT);
        Connection ba = b.accept(WAIT);
        assertSame(ba, b.connect(a.address(), WAIT), "one connection per pair: the address was proved");
        assertSame(ab, a.connect(b.address(), WAIT));
        assertEquals(1, a.connections().size());
        assertEquals(1, b.connections().size());
    }

    @Test
    void withoutTheSecretAnAcceptedPeersClaimIsNotReusedAndTheErrorSaysWhy() throws Exception {
        Node a = node("a", b -> b);
        Node b = node("b", x -> x);
        a.connect(b.address(), WAIT);
        Connection ba = b.accept(WAIT);
        RdmxException e = assertThrows(RdmxException.class, () -> b.connect(a.address(), WAIT));
        assertTrue(e.getMessage().contains("claims address=" + a.address()), e.getMessage());
        assertTrue(ba.isOpen(), "the existing connection is untouched");
    }

    @Test
    void requireSecretRefusesAnUnprotectedListenerBeyondLoopback() throws Exception {
        RdmxException e = assertThrows(RdmxException.class, () -> node("open", b -> b.bindAddress("0.0.0.0:0")
            .requireSecret(true)));
        assertTrue(e.getMessage().contains(NodeOptions.REQUIRE_SECRET_PROP + "=true"), e.getMessage());
        assertTrue(e.getMessage().contains("0.0.0.0:0"), e.getMessage());
        node("guarded", b -> b.bindAddress("0.0.0.0:0").requireSecret(true).secret("s3cret"));
        node("local", b -> b.bindAddress("127.0.0.1:0").requireSecret(true));
    }

    private static void awaitClosed(Connection c) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (c.isOpen() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertFalse(c.isOpen(), "the offending connection is closed");
    }
}
