package io.rdmx.transport.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Access;
import io.rdmx.transport.Completion;
import io.rdmx.transport.Connection;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.Post;
import io.rdmx.transport.Region;
import io.rdmx.transport.Status;
import io.rdmx.transport.WorkRequest;
import io.rdmx.transport.loopback.LoopbackFabric;
import io.rdmx.transport.loopback.LoopbackNode;
import io.rdmx.transport.tcp.NettyTcp;
import io.rdmx.transport.testsuite.Completions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Direct I/O of the tcp provider: posting threads write their frames to the socket themselves while it takes
 * them, hand them to the event loop when it does not (in order), and completions go to an inline handler on
 * the I/O thread, not to the node's queue.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpDirectIoTest {
    private static final AtomicInteger SEQ = new AtomicInteger();
    private static final Duration WAIT = Duration.ofSeconds(10);
    private final List<Node> nodes = new ArrayList<>();

    private Node open(String role) throws Exception {
        Node n = NettyTcp.open(NodeOptions.builder().name(role + "-" + SEQ.incrementAndGet())
            .maxTransferSize(1 << 20).build(), true);
        nodes.add(n);
        return n;
    }

    @AfterEach
    void tearDown() {
        nodes.forEach(Node::close);
    }

    @Test
    void aWritableSocketIsWrittenByThePostingThread() throws Exception {
        Node a = open("a");
        Node b = open("b");
        StreamConnection c = (StreamConnection) a.connect(b.address(), WAIT);
        Connection back = b.accept(WAIT);
        Region src = a.register(4096, Access.ALL);
        Region dst = b.register(4096, Access.ALL);
        // the first request may queue behind the handshake's frames; once it completed, nothing else is queued
        assertEquals(Post.OK, c.post(WorkRequest.write(src, 0, 8, dst.descriptor(), 0)));
        assertTrue(Completions.one(a).ok());
        long direct = c.directFrames();
        long handedOff = c.handedOffFrames();
        src.buffer().putLong(8, 0x0102030405060708L);
        assertEquals(Post.OK, c.post(WorkRequest.write(src, 8, 8, dst.descriptor(), 8)));
        // counted on return from post: written by this thread, not by a task of the event loop
        assertEquals(direct + 1, c.directFrames(), "the WRITE was not written by the posting thread");
        assertEquals(handedOff, c.handedOffFrames());
        assertTrue(Completions.one(a).ok());
        assertEquals(0x0102030405060708L, dst.buffer().getLong(8));
        assertTrue(back.isOpen());
    }

    @Test
    void anAckOwedWhileAPosterHoldsTheSendLockGoesInFrontOfItsFrame() throws Exception {
        Node a = open("a");
        Node b = open("b");
        StreamConnection c = (StreamConnection) a.connect(b.address(), WAIT);
        StreamConnection back = (StreamConnection) b.accept(WAIT);
        Region srcA = a.register(4096, Access.ALL);
        Region dstB = b.register(4096, Access.ALL);
        Region srcB = b.register(4096, Access.ALL);
        Region dstA = a.register(4096, Access.ALL);
        // past the handshake's frames on both sides
        assertEquals(Post.OK, c.post(WorkRequest.write(srcA, 0, 8, dstB.descriptor(), 0)));
        assertTrue(Completions.one(a).ok());
        assertEquals(Post.OK, back.post(WorkRequest.write(srcB, 0, 8, dstA.descriptor(), 0)));
        assertTrue(Completions.one(b).ok());
        long[] before = back.ackCounts();
        SendLock lock = back.sendLock();
        lock.lock();
        try {
            // b's event loop handles a's WRITE while this thread holds b's send lock: it owes the ACK, no wait
            assertEquals(Post.OK, c.post(WorkRequest.write(srcA, 8, 8, dstB.descriptor(), 8).wrId(71)));
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (lock.owed() == 0 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertEquals(2, lock.owed(), "b's event loop did not leave the ACK of request 2 to the lock holder");
            srcB.buffer().putLong(8, 0x0A0B0C0DL);
            // b posts while holding the lock (as a posting thread in its writev would): the ACK rides in front
            assertEquals(Post.OK, back.post(WorkRequest.write(srcB, 8, 8, dstA.descriptor(), 8).wrId(72)));
        } finally {
            lock.unlock();
        }
        long[] after = back.ackCounts();
        assertEquals(before[0] + 1, after[0], "the owed ACK was not carried in front of b's WRITE");
        assertEquals(before[1], after[1], "the owed ACK was written alone as well");
        Completion done = Completions.one(a);
        assertEquals(71, done.wrId(), "a's WRITE did not complete: the carried ACK did not arrive");
        assertTrue(done.ok());
        assertEquals(72, Completions.one(b).wrId());
        assertEquals(0x0A0B0C0DL, dstA.buffer().getLong(8));
    }

    @Test
    void aFullSocketHandsFramesToTheEventLoopInOrder() throws Exception {
        Node a = open("a");
        Node b = open("b");
        StreamConnection c = (StreamConnection) a.connect(b.address(), WAIT);
        Connection back = b.accept(WAIT);
        int size = 512 << 10;
        int frames = 48;
        Region src = a.register(size * frames, Access.ALL);
        Region dst = b.register(size, Access.ALL);
        Region msg = a.register(64, Access.ALL);
        Region rcv = b.register(64, Access.ALL);
        for (int i = 0; i < frames; i++) {
            for (int j = 0; j < size; j += 8) {
                src.buffer().putLong(i * size + j, i);
            }
        }
        // past the handshake's frames first (the first request may queue behind them)
        assertEquals(Post.OK, c.post(WorkRequest.write(msg, 0, 8, dst.descriptor(), 0).wrId(999)));
        assertEquals(999, Completions.one(a).wrId());
        long h0 = c.handedOffFrames();
        // a SEND with no receive posted stops the peer's reads: the WRITEs behind it fill the socket buffers
        assertEquals(Post.OK, c.post(WorkRequest.send(msg, 0, 8).wrId(1000)));
        for (int i = 0; i < frames - 1; i++) {
            // each WRITE lands on the same bytes: the last one must win (FIFO), and each arrives whole
            int rc = c.post(WorkRequest.write(src, i * size, size, dst.descriptor(), 0).wrId(i));
            assertEquals(Post.OK, rc, Post.name(rc));
            if (c.handedOffFrames() > h0) {
                frames = i + 2;
                assertEquals(Post.OK, c.post(WorkRequest.write(src, (i + 1) * size, size, dst.descriptor(), 0)
                    .wrId(i + 1)));
                break;
            }
        }
        assertTrue(c.handedOffFrames() > h0, "the socket never filled up: nothing was handed off");
        assertEquals(Post.OK, back.post(WorkRequest.recv(rcv, 0, 64).wrId(7)));
        Completion recv = Completions.one(b);
        assertEquals(Opcode.RECV, recv.opcode());
        List<Completion> done = Completions.take(a, frames + 1, WAIT);
        assertEquals(1000, done.get(0).wrId());
        for (int i = 0; i < frames; i++) {
            assertEquals(Status.SUCCESS, done.get(i + 1).status());
            assertEquals(i, done.get(i + 1).wrId(), "completions out of posting order");
        }
        for (int j = 0; j < size; j += 8) {
            assertEquals(frames - 1, dst.buffer().getLong(j), "byte " + j + " from the wrong WRITE");
        }
        // and once everything was written, the posting thread writes again itself
        long direct = c.directFrames();
        assertEquals(Post.OK, c.post(WorkRequest.write(src, 0, 8, dst.descriptor(), 0).wrId(99)));
        assertEquals(direct + 1, c.directFrames());
        assertEquals(99, Completions.one(a).wrId());
    }

    @Test
    void anEstablishedConnectionReadsInLargeBuffersNotTheHandshakes() throws Exception {
        Node a = open("a");
        Node b = open("b");
        Connection c = a.connect(b.address(), WAIT);
        StreamConnection back = (StreamConnection) b.accept(WAIT);
        int size = 1 << 20;
        Region src = a.register(size, Access.ALL);
        Region dst = b.register(size, Access.ALL);
        long before = back.socketReads();
        assertEquals(Post.OK, c.post(WorkRequest.write(src, 0, size, dst.descriptor(), 0)));
        assertTrue(Completions.one(a).ok());
        long reads = back.socketReads() - before;
        // the handshake reads through 2 KiB buffers: 512 reads and more for 1 MiB if that size stayed
        assertTrue(reads <= 64, "1 MiB took " + reads + " reads");
    }

    @Test
    void completionsGoInlineToTheHandlerOnTheIoThreadAndNotToTheQueue() throws Exception {
        Node a = open("a");
        Node b = open("b");
        Connection c = a.connect(b.address(), WAIT);
        Connection back = b.accept(WAIT);
        BlockingQueue<String> seen = new ArrayBlockingQueue<>(16);
        Region rcv = b.register(64, Access.LOCAL_WRITE);
        Region msg = a.register(64, Access.ALL);
        assertTrue(back.completionHandler((wrId, op, status, len, imm, hasImm, detail) -> {
            seen.add(Thread.currentThread().getName() + " wrId=" + wrId + " op=" + Opcode.values()[op] + " status="
                + Status.values()[status] + " len=" + len);
            if (wrId == 1) {
                // a handler may post: re-post the receive from the I/O thread
                try {
                    back.post(WorkRequest.recv(rcv, 0, 64).wrId(2));
                } catch (Exception e) {
                    seen.add("post failed: " + e);
                }
            }
        }));
        assertEquals(Post.OK, back.post(WorkRequest.recv(rcv, 0, 64).wrId(1)));
        assertEquals(Post.OK, c.post(WorkRequest.send(msg, 0, 5)));
        assertEquals(Post.OK, c.post(WorkRequest.send(msg, 0, 6)));
        String first = seen.poll(10, TimeUnit.SECONDS);
        String second = seen.poll(10, TimeUnit.SECONDS);
        assertTrue(first != null && first.startsWith("rdmx-tcp-" + b.name()) && first.endsWith("wrId=1 op=RECV "
            + "status=SUCCESS len=5"), "first completion: " + first);
        assertTrue(second != null && second.startsWith("rdmx-tcp-" + b.name()) && second.endsWith("wrId=2 "
            + "op=RECV status=SUCCESS len=6"), "second completion: " + second);
        assertEquals(0, b.completionQueue().size(), "a completion went to the queue");
        assertEquals(2, Completions.take(a, 2, WAIT).size());
    }

    /** Loopback told to queue its completions stands for a provider without inline delivery (disni). */
    @Test
    void aProviderWithoutInlineDeliveryKeepsTheQueue() throws Exception {
        Node a = new LoopbackFabric().open(NodeOptions.builder().name("la-" + SEQ.incrementAndGet()).build());
        nodes.add(a);
        Node b = new LoopbackFabric().open(NodeOptions.builder().name("lb-" + SEQ.incrementAndGet()).build());
        nodes.add(b);
        ((LoopbackNode) a).faults().queueCompletions();
        Connection c = a.connect(b.address(), WAIT);
        assertFalse(c.completionHandler((wrId, op, status, len, imm, hasImm, detail) -> { }));
        Region src = a.register(64, Access.ALL);
        Region dst = b.register(64, Access.ALL);
        assertEquals(Post.OK, c.post(WorkRequest.write(src, 0, 8, dst.descriptor(), 0)));
        assertTrue(Completions.one(a).ok());
    }
}
