package io.rdmx.transport.testsuite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Access;
import io.rdmx.transport.Completion;
import io.rdmx.transport.Connection;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Region;
import io.rdmx.transport.Status;
import io.rdmx.transport.WorkRequest;
import io.rdmx.transport.internal.CompletionQueueImpl;
import io.rdmx.transport.selector.SocketConnection;
import io.rdmx.transport.shm.ShmFabric;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Leader/follower input for the completion queue ({@link CompletionQueueImpl#followInput}, {@code
 * rdmx.cq.followerReads}) on a socket provider built on the shm selector engine (shm, tcp): a thread waiting on
 * the queue of a node with one connection reads that socket and decodes its own completion; closing the node
 * and the peer's death end its wait; with two connections, or with the key off, the I/O thread reads everything
 * (the counter stays at zero, which shows what the first test counts). Subclasses give the provider.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class CompletionQueueFollowerSuite {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final AtomicInteger SEQ = new AtomicInteger();
    private final List<Node> nodes = new ArrayList<>();

    /** @return the provider under test */
    protected abstract Fabric fabric();

    @AfterEach
    void tearDown() {
        for (int i = nodes.size() - 1; i >= 0; i--) {
            nodes.get(i).close();
        }
        System.clearProperty(CompletionQueueImpl.FOLLOWER_READS_PROP);
        System.clearProperty(ShmFabric.FOLLOW_GRACE_PROP);
    }

    private Node open(String role) throws RdmxException {
        Node n = fabric().open(NodeOptions.builder().name("cqf-" + role + "-" + ProcessHandle.current().pid()
            + "-" + SEQ.incrementAndGet()).build());
        nodes.add(n);
        return n;
    }

    /** A client connected to {@code server}: [client side, server side]. */
    private Connection[] connect(Node client, Node server) throws Exception {
        Connection c = client.connect(server.address(), WAIT);
        Connection s = server.accept(WAIT);
        return new Connection[] {c, s};
    }

    /** Starts a wait for one completion on the node's queue, and waits until the waiting thread is blocked. */
    private static Blocking.Call<List<Completion>> awaitOne(Node node) throws InterruptedException {
        Blocking.Call<List<Completion>> call = Blocking.start("cq-waiter", () -> {
            List<Completion> got = new ArrayList<>();
            node.completionQueue().await(got::add, 1, 30, TimeUnit.SECONDS);
            return got;
        });
        Blocking.awaitBlockedIn(call, "CompletionQueueImpl.await", WAIT);
        return call;
    }

    /** SENDs {@code rounds} messages, each to a server thread blocked on its queue: [follower reads, RECVs]. */
    private static long[] sendWhileWaiting(Connection c2s, Connection s2c, Node server, int rounds) throws Exception {
        Region in = server.register(64, Access.ALL);
        Region out = c2s.node().register(64, Access.ALL);
        long recvs = 0;
        for (int i = 0; i < rounds; i++) {
            s2c.post(WorkRequest.recv(in, 0, 64).wrId(i));
            Blocking.Call<List<Completion>> call = awaitOne(server);
            c2s.post(WorkRequest.send(out, 0, 16).wrId(i).signaled(false));
            List<Completion> got = call.result().get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertEquals(1, got.size(), "round " + i);
            Completion k = got.get(0);
            assertEquals(Opcode.RECV, k.opcode());
            assertEquals(Status.SUCCESS, k.status(), String.valueOf(k.detail()));
            assertEquals(i, k.wrId());
            assertEquals(16, k.byteLength());
            recvs++;
        }
        return new long[] {((SocketConnection) s2c).followerReads(), recvs};
    }

    @Test
    void aWaiterOnANodeWithOneConnectionReadsTheSocketAndDecodesItsOwnCompletion() throws Exception {
        Node server = open("server");
        Connection[] c = connect(open("client"), server);
        long[] r = sendWhileWaiting(c[0], c[1], server, 20);
        assertEquals(20, r[1]);
        assertTrue(r[0] > 0, "the waiting thread never read its node's socket itself");
    }

    @Test
    void withFollowerReadsOffTheIoThreadReadsEverything() throws Exception {
        System.setProperty(CompletionQueueImpl.FOLLOWER_READS_PROP, "false");
        Node server = open("server");
        Connection[] c = connect(open("client"), server);
        long[] r = sendWhileWaiting(c[0], c[1], server, 20);
        assertEquals(20, r[1]);
        assertEquals(0, r[0], "a waiter read the socket with " + CompletionQueueImpl.FOLLOWER_READS_PROP + "=false");
    }

    @Test
    void withTwoConnectionsTheWaiterSleepsAndTheIoThreadReads() throws Exception {
        Node server = open("server");
        Connection[] first = connect(open("client1"), server);
        Connection[] second = connect(open("client2"), server);
        long[] r = sendWhileWaiting(first[0], first[1], server, 5);
        assertEquals(5, r[1]);
        assertEquals(0, r[0], "a waiter read one of several connections");
        assertEquals(0, ((SocketConnection) second[1]).followerReads());
    }

    @Test
    void waitersThatComeBackWithinTheGraceNeitherWakeNorStopTheIoThread() throws Exception {
        // a grace far longer than the test: only the I/O thread's own timer passes can ask a waiter to wake it
        System.setProperty(ShmFabric.FOLLOW_GRACE_PROP, "10000000");
        Node server = open("server");
        Connection[] c = connect(open("client"), server);
        SocketConnection s = (SocketConnection) c[1];
        sendWhileWaiting(c[0], c[1], server, 5);
        long wakesBefore = s.followerReleaseWakes();
        long loopsBefore = s.ioThreadLoops();
        int rounds = 200;
        long[] r = sendWhileWaiting(c[0], c[1], server, rounds);
        assertEquals(rounds, r[1]);
        long wakes = s.followerReleaseWakes() - wakesBefore;
        long loops = s.ioThreadLoops() - loopsBefore;
        // giving the input back used to wake the I/O thread every time (wakes = loops >= rounds); now it stays
        // with the waiters, and the I/O thread wakes for its timers only
        assertTrue(wakes < rounds / 4, wakes + " of " + rounds + " waiters woke the I/O thread giving the input back");
        assertTrue(loops < rounds / 4, "the I/O thread woke " + loops + " times in " + rounds + " rounds");
    }

    @Test
    void inputThatComesWhileNoWaiterReadsIsReadByTheIoThreadOnceTheGraceIsOver() throws Exception {
        Node server = open("server");
        Connection[] c = connect(open("client"), server);
        sendWhileWaiting(c[0], c[1], server, 3); // the waiters hold the input now
        long followed = ((SocketConnection) c[1]).followerReads();
        Region in = server.register(64, Access.ALL);
        Region out = c[0].node().register(64, Access.ALL);
        c[1].post(WorkRequest.recv(in, 0, 64).wrId(42));
        c[0].post(WorkRequest.send(out, 0, 16).wrId(42).signaled(false));
        List<Completion> got = new ArrayList<>();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (got.isEmpty() && System.nanoTime() < deadline) {
            server.completionQueue().poll(got::add, 1); // polling reads no socket: the I/O thread must
            Thread.onSpinWait();
        }
        assertEquals(1, got.size(), "the message that came while no waiter read never arrived");
        assertEquals(42, got.get(0).wrId());
        assertEquals(Status.SUCCESS, got.get(0).status(), String.valueOf(got.get(0).detail()));
        assertEquals(followed, ((SocketConnection) c[1]).followerReads(),
            "a waiter read the socket, not the I/O thread");
    }

    @Test
    void aBadGraceIsRefusedNamingItAndTheValue() {
        System.setProperty(ShmFabric.FOLLOW_GRACE_PROP, "-5");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> open("badgrace"));
        assertTrue(e.getMessage().contains(ShmFabric.FOLLOW_GRACE_PROP) && e.getMessage().contains("-5"),
            e.getMessage());
    }

    @Test
    void closingTheNodeEndsTheWait() throws Exception {
        Node server = open("server");
        connect(open("client"), server);
        Blocking.Call<List<Completion>> call = awaitOne(server);
        server.close();
        Throwable t = call.failure(WAIT);
        assertTrue(t instanceof RdmxException, String.valueOf(t));
        assertTrue(t.getMessage().contains(server.name()) && t.getMessage().contains("closed"), t.getMessage());
    }

    @Test
    void thePeersDeathEndsTheWaitWithItsReceiveFlushedNamingThePeer() throws Exception {
        Node server = open("server");
        Node client = open("client");
        Connection[] c = connect(client, server);
        Region in = server.register(64, Access.ALL);
        c[1].post(WorkRequest.recv(in, 0, 64).wrId(7));
        Blocking.Call<List<Completion>> call = awaitOne(server);
        StreamKill.kill(client);
        List<Completion> got = call.result().get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertEquals(1, got.size());
        assertEquals(Status.FLUSHED, got.get(0).status());
        assertEquals(7, got.get(0).wrId());
        assertTrue(String.valueOf(got.get(0).detail()).contains(client.name()), got.get(0).detail());
        // the node stays usable: a new peer's message reaches a new waiter
        Connection[] again = connect(open("client-again"), server);
        long[] r = sendWhileWaiting(again[0], again[1], server, 3);
        assertEquals(3, r[1]);
    }

    @Test
    void aBadValueOfTheKeyIsRefusedNamingItAndTheValue() {
        System.setProperty(CompletionQueueImpl.FOLLOWER_READS_PROP, "sometimes");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> open("bad"));
        assertTrue(e.getMessage().contains(CompletionQueueImpl.FOLLOWER_READS_PROP) && e.getMessage().contains(
            "sometimes"), e.getMessage());
    }
}
