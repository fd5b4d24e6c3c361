package io.rdmx.transport.loopback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Access;
import io.rdmx.transport.Connection;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.Post;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Region;
import io.rdmx.transport.Status;
import io.rdmx.transport.WorkRequest;
import io.rdmx.transport.capability.InlineCompletions;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Loopback hands completions to an inline handler ({@code AbstractConnection#emitLater}): nothing reaches the
 * node's queue, and a handler may post, though loopback executes a post on the posting thread under the pair's
 * lock and completes it on both sides at once.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LoopbackInlineCompletionTest {
    private static final AtomicInteger SEQ = new AtomicInteger();
    private LoopbackNode a;
    private LoopbackNode b;

    @AfterEach
    void tearDown() {
        a.close();
        b.close();
    }

    /**
     * Both sides send at once from their own threads, each SEND answered by the peer's handler, which re-posts its
     * receive and sends the next one from within (a post on one connection that completes on the other, on
     * whichever thread posts): every message arrives once, in order, on each side, and the run ends (a handler
     * that waited for its peer's would deadlock here).
     */
    @Test
    void handlersThatPostFromWithinPingPongBothWaysWithoutTheQueue() throws Exception {
        a = LoopbackFabric.openNode(NodeOptions.builder().name("ia-" + SEQ.incrementAndGet()).build());
        b = LoopbackFabric.openNode(NodeOptions.builder().name("ib-" + SEQ.incrementAndGet()).build());
        CompletableFuture<Connection> accepted = CompletableFuture.supplyAsync(() -> {
            try {
                return b.accept(Duration.ofSeconds(10));
            } catch (RdmxException | InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        Connection ab = a.connect(b.address(), Duration.ofSeconds(10));
        Connection ba = accepted.get(10, TimeUnit.SECONDS);
        int messages = 20_000;
        Side sa = new Side(a, ab, messages);
        Side sb = new Side(b, ba, messages);
        ab.capability(InlineCompletions.class).orElseThrow().completionHandler(sa::onCompletion);
        ba.capability(InlineCompletions.class).orElseThrow().completionHandler(sb::onCompletion);
        sa.postRecv();
        sb.postRecv();
        Thread ta = new Thread(sa::sendNext, "side-a");
        Thread tb = new Thread(sb::sendNext, "side-b");
        ta.start();
        tb.start();
        assertTrue(sa.received.await(30, TimeUnit.SECONDS), "a got " + sa.next.get());
        assertTrue(sb.received.await(30, TimeUnit.SECONDS), "b got " + sb.next.get());
        ta.join();
        tb.join();
        assertNull(sa.error.get());
        assertNull(sb.error.get());
        assertEquals(0, a.completionQueue().size(), "a completion went to a's queue");
        assertEquals(0, b.completionQueue().size(), "a completion went to b's queue");
    }

    /** One side: receives the peer's counter in order; each SEND's completion sends the next. */
    private static final class Side {
        final Connection c;
        final Region out;
        final Region in;
        final int messages;
        final AtomicLong sent = new AtomicLong();
        final AtomicLong next = new AtomicLong();
        final CountDownLatch received = new CountDownLatch(1);
        final AtomicReference<String> error = new AtomicReference<>();

        Side(LoopbackNode n, Connection c, int messages) throws RdmxException {
            this.c = c;
            this.messages = messages;
            this.out = n.register(8, Access.ALL);
            this.in = n.register(8, Access.ALL);
        }

        void postRecv() {
            post(WorkRequest.recv(in, 0, 8).wrId(1));
        }

        void sendNext() {
            long v = sent.getAndIncrement();
            if (v < messages) {
                out.buffer().putLong(0, v);
                post(WorkRequest.send(out, 0, 8).wrId(2));
            }
        }

        void post(WorkRequest r) {
            try {
                int rc = c.post(r);
                if (rc != Post.OK) {
                    error.compareAndSet(null, "post returned " + rc);
                }
            } catch (RdmxException e) {
                error.compareAndSet(null, e.toString());
            }
        }

        void onCompletion(long wrId, int opcode, int status, int len, int imm, boolean hasImm, String detail) {
            if (status != Status.SUCCESS.ordinal()) {
                error.compareAndSet(null, "wrId=" + wrId + " status=" + Status.values()[status] + " " + detail);
                return;
            }
            if (opcode == Opcode.RECV.ordinal()) {
                long v = in.buffer().getLong(0);
                if (v != next.getAndIncrement()) {
                    error.compareAndSet(null, "got " + v + ", expected " + (next.get() - 1));
                }
                if (v == messages - 1) {
                    received.countDown();
                } else {
                    postRecv();
                }
            } else if (opcode == Opcode.SEND.ordinal()) {
                sendNext();
            }
        }
    }
}
