package io.rdmx.transport.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Access;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.PeerNotListeningException;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RdmxTimeoutException;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.loopback.LoopbackFabric;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

/**
 * The rdma_cm setup flow both RDMA providers run, on a fake provider: its hooks record what they are asked and a
 * setup message "sent" lands in the peer's inbox, delivered by the test (the one thread playing both nodes' rdma_cm
 * and CQ threads). So the handshake, the secret's order of disclosure, the receives posted before each message can
 * come, the timeouts and the teardown order are checked without an RDMA device (the providers' suites run them on
 * Soft-RoCE).
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RdmaCmFlowTest {
    private final List<FakeNode> nodes = new ArrayList<>();

    @AfterEach
    void close() {
        nodes.forEach(FakeNode::close);
    }

    @Test
    void withoutASecretHelloAndAcceptMakeOneConnectionOnEachSide() throws Exception {
        FakeNode a = node("flow-a", b -> b);
        FakeNode b = node("flow-b", x -> x);
        a.register(4096, Access.ALL, "exported-a");
        Fake[] pair = connect(a, b);
        AbstractConnection ab = pair[0].future.get(1, TimeUnit.SECONDS);
        assertEquals("flow-b", ab.peerName());
        assertEquals(b.address(), ab.peerAddress());
        AbstractConnection ba = (AbstractConnection) b.accept(Duration.ofSeconds(1));
        assertEquals("flow-a", ba.peerName());
        // without a secret the HELLO tells the listener the dialer's regions at once
        assertEquals(List.of(SetupMessage.HELLO, SetupMessage.ACCEPT), kinds(pair));
        assertEquals(List.of("exported-a"), names(pair[1].received.get(0).regions));
        assertEquals(ab, pair[0].connection());
        assertEquals(ba, pair[1].connection());
        assertEquals(List.of(), a.violations);
        assertEquals(List.of(), b.violations);
    }

    @Test
    void underASecretThePeerProvesItselfBeforeItLearnsAnyRegion() throws Exception {
        FakeNode a = node("auth-a", x -> x.secret("s3cret"));
        FakeNode b = node("auth-b", x -> x.secret("s3cret"));
        a.register(4096, Access.ALL, "exported-a");
        b.register(4096, Access.ALL, "exported-b");
        Fake[] pair = connect(a, b);
        assertEquals("auth-b", pair[0].future.get(1, TimeUnit.SECONDS).peerName());
        assertEquals(List.of(SetupMessage.HELLO, SetupMessage.CHALLENGE, SetupMessage.PROVE, SetupMessage.ACCEPT),
            kinds(pair));
        SetupMessage hello = pair[1].received.get(0);
        SetupMessage challenge = pair[0].received.get(0);
        assertEquals(List.of(), hello.regions, "the dialer's HELLO names no region before the listener proved itself");
        assertNull(hello.probe);
        assertEquals(List.of(), challenge.regions, "the CHALLENGE names no region before the dialer proved itself");
        assertEquals(List.of("exported-a"), names(pair[1].received.get(1).regions));
        assertEquals(List.of("exported-b"), names(pair[0].received.get(1).regions));
        // each side posted the receive of the next message before the message could come
        assertEquals(List.of(), a.violations);
        assertEquals(List.of(), b.violations);
    }

    @Test
    void aWrongSecretFailsTheConnectAndMakesNoConnection() throws Exception {
        FakeNode a = node("wrong-a", x -> x.secret("one"));
        FakeNode b = node("wrong-b", x -> x.secret("two"));
        b.register(4096, Access.ALL, "exported-b");
        Fake[] pair = connect(a, b);
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
            () -> pair[0].future.get(1, TimeUnit.SECONDS));
        assertTrue(e.getCause().getMessage().contains("cluster secret mismatch"), e.getCause().getMessage());
        assertTrue(e.getCause().getMessage().contains("wrong-a"), e.getCause().getMessage());
        assertNull(pair[1].connection());
        assertTrue(b.connections().isEmpty());
        assertEquals(List.of(), pair[0].received.get(0).regions);
        assertTrue(pair[0].calls.contains("destroyId"), "the dialer's setup is torn down: " + pair[0].calls);
    }

    @Test
    void aDuplicateConnectionIsRefusedNamingBothNodes() throws Exception {
        FakeNode a = node("dup-a", x -> x);
        FakeNode b = node("dup-b", x -> x);
        Fake[] first = connect(a, b);
        first[0].future.get(1, TimeUnit.SECONDS);
        Fake[] second = connect(a, b);
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
            () -> second[0].future.get(1, TimeUnit.SECONDS));
        assertTrue(e.getCause().getMessage().contains("refused by 'dup-b'"), e.getCause().getMessage());
        assertTrue(e.getCause().getMessage().contains("already exists"), e.getCause().getMessage());
        assertEquals(List.of(SetupMessage.HELLO, SetupMessage.REFUSE), kinds(second));
    }

    @Test
    void theTeardownUndoesTheSetupInReverseOrderOnce() throws Exception {
        FakeNode a = node("down-a", x -> x);
        Fake s = a.setup("10.9.9.1:7999");
        a.flow.onEvent(s, RdmaCmFlow.ROUTE_RESOLVED, 0);
        assertEquals(List.of("prepareQueues", "allocateDomain", "createQp", "registerControl", "postSetupReceive",
            "connect"), s.calls);
        s.calls.clear();
        a.flow.destroy(s);
        a.flow.destroy(s);
        assertEquals(List.of("forget", "destroyQueuePair", "deregisterControl", "destroyDomain", "destroyId",
            "tornDown"), s.calls);
        assertFalse(a.setups.containsKey(s));
    }

    @Test
    void aSetupPastItsDeadlineTimesOutAndIsTornDown() throws Exception {
        FakeNode a = node("late-a", x -> x);
        Fake s = a.setup("10.9.9.1:7999");
        a.flow.sweep(s.deadlineNanos + 1);
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
            () -> s.future.get(1, TimeUnit.SECONDS));
        assertInstanceOf(RdmxTimeoutException.class, e.getCause());
        assertTrue(s.calls.contains("destroyId"), s.calls.toString());
    }

    @Test
    void aFailedEventNamesItAndFailsTheConnect() throws Exception {
        FakeNode a = node("rej-a", x -> x);
        Fake s = a.setup("10.9.9.1:7999");
        a.flow.onEvent(s, RdmaCmFlow.REJECTED, 28);
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
            () -> s.future.get(1, TimeUnit.SECONDS));
        assertTrue(e.getCause().getMessage().contains("EVENT_8 (status 28): no rdmx node listens there"),
            e.getCause().getMessage());
    }

    @Test
    void aRejectionBecauseNothingListensFailsTheConnectAsNotListeningSoItCanBeTriedAgain() throws Exception {
        FakeNode a = node("rej-b", x -> x);
        Fake nobody = a.setup("10.9.9.1:7998");
        a.flow.onEvent(nobody, RdmaCmFlow.REJECTED, RdmaCmFlow.REJ_INVALID_SERVICE_ID);
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
            () -> nobody.future.get(1, TimeUnit.SECONDS));
        assertInstanceOf(PeerNotListeningException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("10.9.9.1:7998"), e.getCause().getMessage());
        // a rejection by a listening peer (consumer-defined, 28) is not one to try again
        Fake refused = a.setup("10.9.9.1:7997");
        a.flow.onEvent(refused, RdmaCmFlow.REJECTED, 28);
        ExecutionException e2 = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
            () -> refused.future.get(1, TimeUnit.SECONDS));
        assertFalse(e2.getCause() instanceof PeerNotListeningException, String.valueOf(e2.getCause()));
    }

    // ------------------------------------------------------------------ the fake provider

    private FakeNode node(String name, UnaryOperator<NodeOptions.Builder> tweak) throws Exception {
        FakeNode n = new FakeNode(tweak.apply(NodeOptions.builder().name(name)).build(), 7000 + nodes.size());
        nodes.add(n);
        return n;
    }

    /** a dials b: rdma_cm's events on both sides, then the setup messages until none is left in flight. */
    private static Fake[] connect(FakeNode a, FakeNode b) {
        Fake active = a.setup(b.address());
        Fake passive = b.setup(null);
        active.peer = passive;
        passive.peer = active;
        b.flow.incoming(passive, false);
        a.flow.onEvent(active, RdmaCmFlow.ADDR_RESOLVED, 0);
        a.flow.onEvent(active, RdmaCmFlow.ROUTE_RESOLVED, 0);
        b.flow.onEvent(passive, RdmaCmFlow.ESTABLISHED, 0);
        a.flow.onEvent(active, RdmaCmFlow.ESTABLISHED, 0);
        boolean moved = true;
        while (moved) {
            moved = active.deliver() | passive.deliver();
            a.runTasks();
            b.runTasks();
        }
        return new Fake[] {active, passive};
    }

    private static List<Byte> kinds(Fake[] pair) {
        List<Byte> out = new ArrayList<>();
        for (ByteBuffer m : pair[0].log) {
            out.add(decode(m).kind);
        }
        return out;
    }

    private static SetupMessage decode(ByteBuffer m) {
        try {
            return SetupMessage.decode(m.duplicate());
        } catch (io.rdmx.transport.ProtocolException e) {
            throw new AssertionError(e);
        }
    }

    private static List<String> names(List<RemoteRegion> regions) {
        List<String> out = new ArrayList<>();
        for (RemoteRegion r : regions) {
            out.add(r.name());
        }
        return out;
    }

    static final class FakeConnection extends AbstractConnection {
        FakeConnection(AbstractNode node, String peerName, String peerAddress, List<RemoteRegion> regions) {
            super(node, peerName, peerAddress, regions);
        }

        @Override
        protected int postSendQueue(Opcode op, long wrId, RegionImpl local, int localOffset, int length,
                                    RemoteRegion remote, long remoteOffset, int imm, boolean signaled) {
            return 0;
        }

        @Override
        protected void onRecvPosted() {
        }

        @Override
        protected void flushSendQueue() {
        }

        @Override
        protected void closeTransport(Throwable cause) {
        }
    }

    static final class Fake extends CmSetup<FakeConnection> {
        final FakeNode node;
        final List<String> calls = new ArrayList<>();
        final ArrayDeque<ByteBuffer> inbox = new ArrayDeque<>();
        final List<SetupMessage> received = new ArrayList<>();
        final ByteBuffer sendArea = ByteBuffer.allocate(64 << 10);
        /** Active side: every setup message of the pair, in the order sent. */
        final List<ByteBuffer> log = new ArrayList<>();
        int receivesPosted;
        Fake peer;

        Fake(FakeNode node, String dialAddress, CompletableFuture<AbstractConnection> future, long deadline) {
            super(dialAddress != null, dialAddress, future, deadline);
            this.node = node;
        }

        @Override
        protected void prepareQueues() {
            calls.add("prepareQueues");
        }

        @Override
        protected void allocateDomain() {
            calls.add("allocateDomain");
        }

        @Override
        protected void createQp() {
            calls.add("createQp");
        }

        @Override
        protected void registerControl() {
            calls.add("registerControl");
        }

        @Override
        protected void postSetupReceive() {
            calls.add("postSetupReceive");
            receivesPosted++;
        }

        @Override
        protected ByteBuffer setupSendArea() {
            return sendArea.clear().slice();
        }

        @Override
        protected void postSetupSend(int length) throws RdmxException {
            if (peer == null) {
                throw new RdmxException("fake: no peer");
            }
            if (peer.receivesPosted <= peer.inbox.size()) {
                // on RC the SEND would find no receive posted (RNR): the flow must post it before it answers
                node.violations.add("a message to '" + peer.node.name() + "' found no receive posted");
            }
            ByteBuffer m = ByteBuffer.allocate(length).put(sendArea.duplicate().limit(length)).flip();
            peer.inbox.add(m);
            (active ? this : peer).log.add(m);
        }

        @Override
        protected RemoteRegion probeTarget() {
            return new RemoteRegion(0x1000, KeepAlive.TARGET_BYTES, 7);
        }

        @Override
        protected void keepAlive(long now) {
            calls.add("keepAlive");
        }

        @Override
        protected void close() {
            node.flow.destroy(this);
        }

        @Override
        protected void destroyQueuePair() {
            calls.add("destroyQueuePair");
        }

        @Override
        protected void deregisterControl() {
            calls.add("deregisterControl");
        }

        @Override
        protected void destroyDomain() {
            calls.add("destroyDomain");
        }

        @Override
        protected void destroyId() {
            calls.add("destroyId");
        }

        @Override
        protected void tornDown() {
            calls.add("tornDown");
        }

        /** Delivers one message of the inbox, as the CQ thread would: true if there was one. */
        boolean deliver() {
            ByteBuffer m = inbox.poll();
            if (m == null) {
                return false;
            }
            received.add(decode(m));
            receivesPosted--;
            node.flow.onSetupCompletion(this, true, null, m);
            return true;
        }
    }

    static final class FakeNode extends RdmaNode {
        final Map<Fake, Boolean> setups = new ConcurrentHashMap<>();
        final FakeFlow flow = new FakeFlow(this);
        final List<String> violations = new ArrayList<>();

        FakeNode(NodeOptions options, int port) throws Exception {
            super(new LoopbackFabric(), options, "fake", InetAddress.getByName("10.9.9.1"));
            bound(port);
        }

        /** @param dialAddress the address dialed, or null for a passive setup */
        Fake setup(String dialAddress) {
            Fake s = new Fake(this, dialAddress, dialAddress != null ? new CompletableFuture<>() : null,
                System.nanoTime() + Duration.ofSeconds(10).toNanos());
            setups.put(s, true);
            return s;
        }

        @Override
        protected Allocation allocate(int length, int access, int remoteKey) {
            return new Allocation(ByteBuffer.allocateDirect(length), () -> { });
        }

        @Override
        protected void closeTransport() {
        }

        @Override
        protected Runnable dial(String peerAddress, InetSocketAddress peer,
                                CompletableFuture<AbstractConnection> future, long deadlineNanos, int resolveMs) {
            throw new UnsupportedOperationException();
        }
    }

    static final class FakeFlow extends RdmaCmFlow<Fake, FakeConnection> {
        private final FakeNode node;

        FakeFlow(FakeNode node) {
            super(node, "fake", LoggerFactory.getLogger(RdmaCmFlowTest.class));
            this.node = node;
        }

        @Override
        protected Iterable<Fake> setups() {
            return node.setups.keySet();
        }

        @Override
        protected String eventName(int type) {
            return "EVENT_" + type;
        }

        @Override
        protected void resolveRoute(Fake s, int timeoutMs) {
            s.calls.add("resolveRoute");
        }

        @Override
        protected void connect(Fake s) {
            s.calls.add("connect");
        }

        @Override
        protected void accept(Fake s) {
            s.calls.add("accept");
        }

        @Override
        protected void reject(Fake s) {
            s.calls.add("reject");
        }

        @Override
        protected int remoteKeyOf(Fake s, RegionImpl region) {
            return 42;
        }

        @Override
        protected FakeConnection newConnection(Fake s, SetupMessage m, String peerAddress) {
            return new FakeConnection(node, m.name, peerAddress, m.regions);
        }

        @Override
        protected void forget(Fake s) {
            s.calls.add("forget");
            node.setups.remove(s);
        }

    }
}
