package io.rdmx.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.channel.ChannelConfig;
import io.rdmx.channel.ChannelEngine;
import io.rdmx.channel.PeerChannel;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.loopback.LoopbackFabric;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The client's call table alone: ids, slots, which call an answer, a deadline or a lost server completes. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class CallTableTest {
    private static final long FAR = Long.MAX_VALUE / 2;
    private final AtomicInteger asyncWaiting = new AtomicInteger();

    private CallTable table(int size) {
        return new CallTable("client-x", size, 100, asyncWaiting::incrementAndGet);
    }

    private static PendingCall call(boolean async, long deadline) {
        return new PendingCall("addr-1", async, deadline, TimeUnit.MILLISECONDS.toNanos(250));
    }

    @Test
    void theScanTimesOutTheAsynchronousCallThatIsDueAndOnlyIt() throws Exception {
        CallTable t = table(8);
        long now = System.nanoTime();
        PendingCall due = call(true, now - 1);
        PendingCall later = call(true, now + FAR);
        PendingCall blocking = call(false, now - 1);   // its own caller times it out, not the scan
        t.register(later);
        t.register(due);
        t.register(blocking);
        t.expireDue(now);
        RpcException e = due.failure();
        assertInstanceOf(RpcTimeoutException.class, e);
        assertTrue(e.getMessage().contains("call id=" + due.callId + " to server 'addr-1'") && e.getMessage()
            .contains("within its timeout of 250 ms"), e.getMessage());
        assertFalse(later.isDone(), "a call not due yet stays outstanding");
        assertFalse(blocking.isDone(), "a blocking call is its caller's to time out");
        assertEquals(2, t.outstanding());
        assertEquals(1, t.timedOut());
        assertEquals(1, t.asyncOutstanding());
    }

    @Test
    void aFullTableRefusesTheCallNamingTheLimitAndTheAddress() throws Exception {
        CallTable t = table(2);
        t.register(call(false, FAR));
        t.register(call(false, FAR));
        PendingCall third = call(false, FAR);
        RpcException e = assertThrows(RpcException.class, () -> t.register(third));
        assertTrue(e.getMessage().contains("has 2 calls outstanding") && e.getMessage().contains(
            RpcConfig.MAX_OUTSTANDING_PROP) && e.getMessage().contains("address=addr-1"), e.getMessage());
        assertSame(e, third.failure());
        assertFalse(third.registered);
    }

    @Test
    void idsSkipTheSlotsStillTakenAndTheFirstAsynchronousCallWakesTheReader() throws Exception {
        CallTable t = table(4);
        PendingCall a = call(false, FAR);
        t.register(a);
        assertEquals(100, a.callId);
        PendingCall b = call(true, FAR);
        t.register(b);
        assertEquals(101, b.callId);
        assertEquals(1, asyncWaiting.get());
        t.register(call(true, FAR));
        assertEquals(1, asyncWaiting.get(), "told once while asynchronous calls wait, not per call");
        assertTrue(t.fail(b, new RpcException("gone")));
        t.register(call(false, FAR));                 // id 103
        PendingCall e = call(false, FAR);
        t.register(e);                                 // 104 lands on a's slot, taken: 105 is b's, free
        assertEquals(105, e.callId);
    }

    @Test
    void anAnswerForNoOutstandingCallIsLateAndOneFromAnotherServerIsForeignAndLeavesTheCall() throws Exception {
        CallTable t = table(8);
        PendingCall p = call(false, FAR);   // not sent on any channel: no server's answer is its own
        t.register(p);
        assertNull(t.take(p.callId + 1, "server-b"));
        assertEquals(1, t.lateResponses());
        assertNull(t.take(p.callId, "server-b"));
        assertEquals(1, t.foreignResponses());
        assertNull(t.decoding(p.callId, "server-b"));
        assertFalse(p.isDone());
        assertEquals(1, t.outstanding());
    }

    @Test
    void anAnswerFromItsServerTakesTheCallOnceAndALostServerFailsOnlyItsOwnCalls() throws Exception {
        LoopbackFabric fabric = new LoopbackFabric();
        try (Node a = fabric.open(NodeOptions.builder().name("calltable-a-" + ProcessHandle.current().pid()).build());
             Node b = fabric.open(NodeOptions.builder().name("calltable-b-" + ProcessHandle.current().pid()).build());
             ChannelEngine ea = ChannelEngine.open(a, ChannelConfig.builder(1).build());
             ChannelEngine eb = ChannelEngine.open(b, ChannelConfig.builder(1).build())) {
            PeerChannel toB = ea.connect(b.address(), Duration.ofSeconds(10));
            PeerChannel toA = eb.accept(Duration.ofSeconds(10));   // a channel to another server: node a
            assertEquals(a.name(), toA.name());
            CallTable t = table(8);
            PendingCall onB = call(false, FAR);
            onB.peer = toB;
            PendingCall onB2 = call(false, FAR);
            onB2.peer = toB;
            PendingCall elsewhere = call(false, FAR);
            elsewhere.peer = toA;
            t.register(onB);
            t.register(onB2);
            t.register(elsewhere);
            onB.reader = body -> body;
            assertSame(onB, t.decoding(onB.callId, b.name()));
            assertSame(onB, t.take(onB.callId, b.name()));
            assertNull(t.take(onB.callId, b.name()), "taken once");
            assertEquals(1, t.lateResponses());

            t.failCallsTo(b.name(), new RpcPeerException(b.name(), "server '" + b.name() + "' lost", null), false);
            RpcException e = onB2.failure();
            assertInstanceOf(RpcPeerException.class, e);
            assertTrue(e.getMessage().contains("call id=" + onB2.callId + " failed: server '" + b.name() + "' lost"),
                e.getMessage());
            assertFalse(onB.isDone(), "taken by the answer's reader: not the loss's to fail");
            assertFalse(elsewhere.isDone(), "a call to another server goes on");
            assertEquals(1, t.outstanding());
        }
    }
}
