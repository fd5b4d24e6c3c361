package io.rdmx.transport.loopback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Access;
import io.rdmx.transport.Completion;
import io.rdmx.transport.Connection;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Post;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Region;
import io.rdmx.transport.Status;
import io.rdmx.transport.WorkRequest;
import io.rdmx.transport.testsuite.Completions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The loopback provider's fault injection. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class LoopbackFaultsTest {
    private static final AtomicInteger SEQ = new AtomicInteger();
    private LoopbackNode a;
    private LoopbackNode b;
    private Connection ab;
    private Region src;
    private Region dst;

    @BeforeEach
    void setUp() throws Exception {
        a = LoopbackFabric.openNode(NodeOptions.builder().name("fa-" + SEQ.incrementAndGet()).build());
        b = LoopbackFabric.openNode(NodeOptions.builder().name("fb-" + SEQ.incrementAndGet()).build());
        dst = b.register(1024, Access.ALL);
        src = a.register(1024, Access.ALL);
        ab = a.connect(b.address(), Duration.ofSeconds(1));
    }

    @AfterEach
    void tearDown() {
        a.close();
        b.close();
    }

    @Test
    void delayedCompletionsArriveLaterAndInOrder() throws Exception {
        // held back: with an hour's delay nothing can be there right after the posts (a state, not a clock)
        a.faults().delayCompletions(Duration.ofHours(1));
        for (int i = 0; i < 10; i++) {
            assertEquals(Post.OK, ab.post(WorkRequest.write(src, 0, 8, dst.descriptor(), 0).wrId(i)));
        }
        List<Completion> early = new java.util.ArrayList<>();
        assertEquals(0, a.completionQueue().poll(early::add, 10), "completions came before the delay: " + early);
        // and delivered, in posting order, once a delay has passed (the other direction, its own node's fault)
        Connection ba = b.accept(Duration.ofSeconds(1));
        Region back = a.register(1024, Access.ALL);
        b.faults().delayCompletions(Duration.ofMillis(20));
        for (int i = 0; i < 10; i++) {
            assertEquals(Post.OK, ba.post(WorkRequest.write(dst, 0, 8, back.descriptor(), 0).wrId(i)));
        }
        List<Completion> cs = Completions.take(b, 10, Duration.ofSeconds(5));
        for (int i = 0; i < 10; i++) {
            assertEquals(i, cs.get(i).wrId());
        }
    }

    @Test
    void injectedFailureFailsTheRequestAndTheConnection() throws Exception {
        a.faults().failNext(1, Status.TRANSPORT_ERROR);
        assertEquals(Post.OK, ab.post(WorkRequest.write(src, 0, 8, dst.descriptor(), 0).wrId(1)));
        Completion c = Completions.one(a);
        assertEquals(Status.TRANSPORT_ERROR, c.status());
        assertTrue(c.detail().contains("injected"), c.detail());
        assertFalse(ab.isOpen());
        Connection again = a.connect(b.address(), Duration.ofSeconds(1));
        assertTrue(again.isOpen(), "a new connection can replace the failed one");
        assertEquals(Post.OK, again.post(WorkRequest.write(src, 0, 8, dst.descriptor(), 0).wrId(2)));
        assertTrue(Completions.one(a).ok());
    }

    @Test
    void droppedConnectionIsSeenByBothSides() throws Exception {
        Connection ba = b.accept(Duration.ofSeconds(1));
        assertTrue(a.faults().dropConnection(b.name()));
        assertFalse(ab.isOpen());
        assertFalse(ba.isOpen());
        assertTrue(ba.closeCause().getMessage().contains(a.name()), ba.closeCause().getMessage());
        assertFalse(a.faults().dropConnection("nobody"));
    }

    @Test
    void killedNodeCannotBeReached() throws Exception {
        String addr = b.address();
        b.faults().kill();
        assertFalse(b.isOpen());
        RdmxException e = assertThrows(RdmxException.class, () -> a.connect(addr, Duration.ofSeconds(1)));
        assertTrue(e.getMessage().contains(addr), e.getMessage());
    }
}
