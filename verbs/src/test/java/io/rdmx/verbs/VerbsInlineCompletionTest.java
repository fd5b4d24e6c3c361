package io.rdmx.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Access;
import io.rdmx.transport.Connection;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.Post;
import io.rdmx.transport.Region;
import io.rdmx.transport.Status;
import io.rdmx.transport.WorkRequest;
import io.rdmx.transport.capability.InlineCompletions;
import io.rdmx.transport.capability.InputFollowing;
import io.rdmx.transport.testsuite.Completions;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Completions of a verbs connection with an inline handler: they reach the handler on the progress thread that
 * polled them, never the node's queue, and the handler may post (the endpoint's lock is not held while it runs:
 * a post under it would deadlock or be refused). Soft-RoCE in CI; skipped without a device.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class VerbsInlineCompletionTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @BeforeAll
    static void rdma() {
        RequiresRdma.assume();
    }

    @Test
    void completionsGoToTheInlineHandlerOnTheProgressThreadWhichMayPost() throws Exception {
        VerbsFabric f = new VerbsFabric();
        try (VerbsNode a = (VerbsNode) f.open(NodeOptions.builder().name("inline-a").build());
             VerbsNode b = (VerbsNode) f.open(NodeOptions.builder().name("inline-b").build())) {
            Region rcv = b.register(64, Access.LOCAL_WRITE);
            Region msg = a.register(64, Access.ALL);
            Connection c = a.connect(b.address(), WAIT);
            Connection back = b.accept(WAIT);
            BlockingQueue<String> seen = new ArrayBlockingQueue<>(16);
            String progress = b.progressThread().getName();
            back.capability(InlineCompletions.class).orElseThrow()
                .completionHandler((wrId, op, status, len, imm, hasImm, detail) -> {
                seen.add(Thread.currentThread().getName() + " wrId=" + wrId + " op=" + Opcode.values()[op]
                    + " status=" + Status.values()[status] + " len=" + len);
                if (wrId == 1) {
                    try { // a handler may post: re-post the receive from the progress thread
                        seen.add("repost=" + back.post(WorkRequest.recv(rcv, 0, 64).wrId(2)));
                    } catch (Exception e) {
                        seen.add("post failed: " + e);
                    }
                }
            });
            assertEquals(Post.OK, back.post(WorkRequest.recv(rcv, 0, 64).wrId(1)));
            assertEquals(Post.OK, c.post(WorkRequest.send(msg, 0, 5)));
            assertEquals(progress + " wrId=1 op=RECV status=SUCCESS len=5", seen.poll(10, TimeUnit.SECONDS));
            assertEquals("repost=" + Post.OK, seen.poll(10, TimeUnit.SECONDS));
            assertEquals(Post.OK, c.post(WorkRequest.send(msg, 0, 6)));
            assertEquals(progress + " wrId=2 op=RECV status=SUCCESS len=6", seen.poll(10, TimeUnit.SECONDS));
            assertEquals(2, Completions.take(a, 2, WAIT).size(), "the sender's own completions use its queue");
            assertEquals(0, b.completionQueue().size(), "a completion went to the queue");
            assertEquals(0, ((VerbsConnection) back).backlogSize(), "completions left in the backlog");
        }
    }

    @Test
    void aSpinningWaiterPollsTheCqItselfAndCompletionsStayInOrderWhoeverPolls() throws Exception {
        VerbsFabric f = new VerbsFabric();
        try (VerbsNode a = (VerbsNode) f.open(NodeOptions.builder().name("spin-a").build());
             VerbsNode b = (VerbsNode) f.open(NodeOptions.builder().name("spin-b").build())) {
            Region rcv = b.register(64 * 8, Access.LOCAL_WRITE);
            Region msg = a.register(64, Access.ALL);
            Connection c = a.connect(b.address(), WAIT);
            Connection back = b.accept(WAIT);
            int rounds = 400;
            long[] order = new long[rounds];
            int[] seen = {0};
            int[] onMe = {0};
            Thread me = Thread.currentThread();
            back.capability(InlineCompletions.class).orElseThrow()
                .completionHandler((wrId, op, status, len, imm, hasImm, detail) -> {
                synchronized (order) {
                    if (seen[0] < rounds) {
                        order[seen[0]] = status == Status.SUCCESS.ordinal() ? wrId : -1 - wrId;
                    }
                    seen[0]++;
                }
                if (Thread.currentThread() == me) {
                    onMe[0]++;
                }
            });
            InputFollowing input = back.capability(InputFollowing.class).orElseThrow();
            assertEquals(-1, input.awaitInput(1_000_000), "a waiter about to sleep sleeps as usual");
            for (int i = 0; i < 8; i++) {
                assertEquals(Post.OK, back.post(WorkRequest.recv(rcv, 64 * i, 64).wrId(i)));
            }
            for (int i = 0; i < rounds; i++) {
                assertEquals(Post.OK, c.post(WorkRequest.send(msg, 0, 8)));
                long deadline = System.nanoTime() + WAIT.toNanos();
                while (true) { // spin as a channel reader does: look at the CQ from this thread
                    assertTrue(input.awaitInput(0) >= 0);
                    synchronized (order) {
                        if (seen[0] > i) {
                            break;
                        }
                    }
                    assertTrue(System.nanoTime() < deadline, "receive " + i + " did not complete");
                }
                // re-post the slot that completed, as the channel layer does
                assertEquals(Post.OK, back.post(WorkRequest.recv(rcv, 64 * (i % 8), 64).wrId(i + 8)));
                Completions.take(a, 1, WAIT);
            }
            for (int i = 0; i < rounds; i++) {
                assertEquals(i, order[i], "completion " + i + " out of order or failed (" + onMe[0]
                    + " of them handled on the spinning thread)");
            }
            assertEquals(rounds, seen[0]);
            assertEquals(0, b.completionQueue().size(), "a completion went to the queue");
        }
    }
}
