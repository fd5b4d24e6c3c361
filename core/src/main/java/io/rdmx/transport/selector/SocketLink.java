package io.rdmx.transport.selector;

import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.internal.InputHold;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection's socket ({@link SocketIo}) on a {@link SelectorNode}: the frames a posting thread could not
 * write at once wait in {@link #outbox} (FIFO: copies of headers, views of payloads), written by the I/O thread when the socket is
 * writable again; every frame written meanwhile queues behind them.
 */
final class SocketLink implements SocketIo, SelectorNode.Attachment {
    private static final Logger LOG = LoggerFactory.getLogger(SocketLink.class);
    /** A follower's wait that ended sooner than this found its input there already ({@code readFirst}). */
    private static final long READY_AT_ONCE_NANOS = 3_000;
    /** A follower's selector action: the follower reads its one socket after any wake-up anyway. */
    private static final java.util.function.Consumer<SelectionKey> IGNORE_KEY = k -> { };
    private final SelectorNode node;
    private final SocketChannel ch;
    private final SocketHandler handler;
    private final boolean active;
    private final CompletableFuture<AbstractConnection> future;
    private final String dialed;
    private final Object outLock = new Object();
    private final ArrayDeque<ByteBuffer> outbox = new ArrayDeque<>();
    private final ByteBuffer[] iov = new ByteBuffer[2];
    /** I/O thread, under outLock: the head of {@link #outbox}, written in one gathering write. */
    private final ByteBuffer[] backlog = new ByteBuffer[32];
    /** Guarded by outLock: no frame is written after it is set. */
    private boolean closing;
    /** Guarded by outLock: what runs once the outbox is empty ({@link #whenDrained}), or null. */
    private Runnable drained;
    private volatile boolean closed;
    private SelectionKey key;
    /** I/O thread: when a closing socket closes whatever the peer does; 0 while not closing. */
    private long lingerDeadline;
    /**
     * Held by whoever runs {@link #handler}: the I/O thread (reads, timers, its tasks for this socket) or a
     * follower ({@link #follow}); a follower holds it only while it reads and handles, never while it waits.
     */
    private final java.util.concurrent.locks.ReentrantLock readLock =
        new java.util.concurrent.locks.ReentrantLock();
    /**
     * Who reads the input: the I/O thread, or followers ({@link #follow}) who hold it between their reads until
     * the I/O thread takes it back ({@link #heldInput}).
     */
    private final InputHold hold = new InputHold();
    /** Follower give-backs that woke the I/O thread (tests, diagnostics). */
    private final java.util.concurrent.atomic.AtomicLong releaseWakes =
        new java.util.concurrent.atomic.AtomicLong();
    /** Whether the handler wants input (false: back pressure, see {@link #reading}); guarded by readLock. */
    private volatile boolean wantRead = true;
    /** Where a follower waits for the socket (the socket registered for OP_READ); created once, lazily. */
    private volatile Selector followSelector;
    /** Set by a follower that read the end of the stream: the socket is not followed any more. */
    private volatile boolean ended;
    /**
     * Whether the next follower reads before it waits: true while input tends to be there already when one
     * comes (a stream), false while it tends to come later (a ping-pong: the read would find nothing, and the
     * wait and a second read follow anyway). Used by the thread that has the input ({@link InputHold#take}).
     */
    private boolean readFirst = true;
    /** Write system calls on the socket (posting threads and the I/O thread); written under outLock. */
    private volatile long socketWrites;
    /** Reads a follower made that brought data; written under readLock. */
    private volatile long followed;
    /**
     * Reads of the socket by followers, empty ones included; written under readLock, plain (a spinning reader
     * makes one per spin), so read by the thread that made them or after it (tests, diagnostics).
     */
    private long looked;

    SocketLink(SelectorNode node, SocketChannel ch, boolean active, String dialed,
               CompletableFuture<AbstractConnection> future) {
        this.node = node;
        this.ch = ch;
        this.active = active;
        this.dialed = dialed;
        this.future = future;
        this.handler = new SocketHandler(node, this, active, dialed, future);
    }

    /** I/O thread: registers with the selector; starts the handshake once connected. */
    void register(boolean connected) {
        if (!node.running) {
            doClose();
            return;
        }
        try {
            key = ch.register(node.selector, connected ? SelectionKey.OP_READ : SelectionKey.OP_CONNECT, this);
        } catch (IOException e) {
            if (future != null) {
                future.completeExceptionally(node.connectFailed(dialed, e));
            }
            doClose();
            return;
        }
        if (connected) {
            handler.start(System.nanoTime());
        }
    }

    /** I/O thread: a non-blocking connect completed. */
    void finishConnect() {
        try {
            if (!ch.finishConnect()) {
                return;
            }
        } catch (IOException e) {
            if (future != null) {
                future.completeExceptionally(node.connectFailed(dialed, e));
            }
            doClose();
            return;
        }
        key.interestOps(SelectionKey.OP_READ);
        handler.start(System.nanoTime());
    }

    /**
     * I/O thread: the socket is readable. Skipped while a follower reads it: the follower gives the socket
     * back when it is done ({@link #follow}: OP_READ again and a selector wake-up), and this thread's next
     * select sees what is left (level-triggered), so nothing is lost.
     */
    void readable() {
        if (hold.owned() || !readLock.tryLock()) {
            return; // a follower owns the input: it reads this itself (its own select woke it too)
        }
        try {
            if (handler.readFrom(ch, System.nanoTime()) < 0) {
                doClose();
            }
        } catch (IOException e) {
            handler.ioFailed(e);
        } finally {
            readLock.unlock();
        }
    }

    /**
     * Leader/follower: a thread waiting for this connection's input reads the socket itself. It takes the
     * input ({@link InputHold#take}); unless followers hold it already ({@link InputHold#hold}) it stops the I/O
     * thread's watch of OP_READ (applied at that thread's next select: at worst it wakes once more and finds
     * the read lock taken or nothing to read). It reads and handles what is there under the read lock, and if
     * nothing was, waits in a selector of its own (without the lock, so the I/O thread's tasks for this
     * socket never wait for it) and reads once more. Then it gives the input back to the followers: the I/O
     * thread's watch stays off, so a follower that comes back soon (a reader between two records) finds the
     * socket its own and nothing wakes the I/O thread; that thread takes the input back (OP_READ again, and its
     * level-triggered select sees anything that came meanwhile) once no follower came back within the grace
     * ({@link SelectorNode#FOLLOW_GRACE_PROP}). Any thread but the I/O thread.
     */
    @Override
    public int follow(long nanos, boolean queue) {
        if (!(queue ? node.queueFollowerReads : node.followerReads) || closed || ended || key == null
            || Thread.currentThread() == node.thread || !wantRead) {
            return -1;
        }
        if (!hold.take()) {
            return -1;
        }
        try {
            handler.payOwedAck(); // what the last reader handled: its reply, if any, carried the ACK already
            if (hold.hold()) {
                node.held.add(this); // the I/O thread may sleep with no deadline for it: the give-back wakes it
                try {
                    key.interestOpsAnd(~SelectionKey.OP_READ);
                } catch (CancelledKeyException e) {
                    return -1;
                }
            }
            if (readFirst || nanos <= 0) {
                int n = readInline();
                if (n != 0 || nanos <= 0) {
                    return n; // nanos <= 0: a spinning waiter's look at the socket, no wait
                }
                readFirst = false; // nothing there: the next follower waits first (one system call less)
            }
            Selector s = followSelector();
            if (s == null) {
                return -1;
            }
            long start = System.nanoTime();
            // with an action the ready key is not added to the selected-key set: no allocation per wait
            if (s.select(IGNORE_KEY, Math.max(1, (nanos + 999_999) / 1_000_000)) > 0) {
                // ready at once: input comes faster than it is read (a stream), so read before waiting
                readFirst = System.nanoTime() - start < READY_AT_ONCE_NANOS;
            }
            return readInline();
        } catch (IOException | ClosedSelectorException e) {
            return -1;
        } finally {
            giveBack();
        }
    }

    /**
     * The follower is done: the input stays held for the next follower; the I/O thread is woken only if it
     * may sleep with no deadline for this socket.
     */
    private void giveBack() {
        if (hold.giveBack(System.nanoTime())) {
            releaseWakes.incrementAndGet();
            node.selector.wakeup();
        }
    }

    /**
     * I/O thread, before it sleeps, for a socket whose input followers hold: takes the input back if the last
     * follower gave it back more than the grace ago, the socket closed or the handler wants no input; if a
     * follower reads now, asks it to wake this thread when it gives the input back.
     *
     * @param now the time
     * @return how long this thread may sleep as far as this socket goes (Long.MAX_VALUE: no deadline)
     */
    long heldInput(long now) {
        long wait = hold.poll(now, node.followGraceNanos, wantRead && !closed);
        if (wait != InputHold.TAKE_BACK) {
            return wait;
        }
        if (!hold.beginTakeBack()) {
            return 0; // a follower came back just now: look again at once
        }
        try {
            handler.payOwedAck();
            node.held.remove(this);
            if (wantRead && !closed) {
                key.interestOpsOr(SelectionKey.OP_READ);
            }
        } catch (CancelledKeyException e) {
            // closed meanwhile
        } finally {
            hold.endTakeBack();
        }
        return Long.MAX_VALUE;
    }

    /**
     * A thread about to sleep another way (a writer waiting for credits): if followers hold the input and none
     * reads now, reads what is there and hands the input back to the I/O thread at once (woken to take it),
     * so that what comes while this thread sleeps is read without waiting out the grace. Any thread but the
     * I/O thread.
     *
     * @return bytes read and handled
     */
    @Override
    public int releaseInput() {
        if (!hold.held() || closed || Thread.currentThread() == node.thread || !hold.take()) {
            return 0; // not held, or a follower reads it now (and handles what this thread waits for)
        }
        int n = 0;
        try {
            n = readInline();
            handler.payOwedAck();
        } catch (IOException e) {
            n = 0; // readInline hands the failure to the I/O thread
        } finally {
            hold.handBack(System.nanoTime(), node.followGraceNanos);
            releaseWakes.incrementAndGet();
            node.selector.wakeup();
        }
        return Math.max(0, n);
    }

    @Override
    public long socketWrites() {
        return socketWrites;
    }

    @Override
    public long followerReleaseWakes() {
        return releaseWakes.get();
    }

    /** Follower: reads once under the read lock; 0 if another thread holds it. */
    private int readInline() throws IOException {
        if (!readLock.tryLock()) {
            return -1;
        }
        try {
            if (closed) {
                return -1;
            }
            looked++;
            int n = handler.readFrom(ch, System.nanoTime());
            if (n < 0) {
                ended = true; // no more following: the I/O thread closes it and fails the connection
                node.execute(this::doClose);
            } else if (n > 0) {
                followed++;
            }
            return n;
        } catch (IOException e) {
            execute(() -> handler.ioFailed(e));
            return -1;
        } finally {
            readLock.unlock();
        }
    }

    private Selector followSelector() throws IOException {
        Selector s = followSelector;
        if (s == null) {
            synchronized (this) {
                s = followSelector;
                if (s == null && !closed) {
                    s = Selector.open();
                    ch.register(s, SelectionKey.OP_READ);
                    followSelector = s;
                }
            }
        }
        return s;
    }

    @Override
    public long followerReads() {
        return followed;
    }

    @Override
    public long followerLooks() {
        return looked;
    }

    @Override
    public void wakeFollower() {
        if (!node.followerReads && !node.queueFollowerReads) {
            return;
        }
        try {
            Selector s = followSelector();
            if (s != null) {
                s.wakeup(); // ends the select now, or the next one at once
            }
        } catch (IOException | ClosedSelectorException e) {
            // closed: the follower's select ends with it
        }
    }

    /** I/O thread: timers, and the end of a linger. */
    @Override
    public void tick(long now) {
        if (lingerDeadline != 0 && now - lingerDeadline >= 0) {
            doClose();
            return;
        }
        readLock.lock();
        try {
            handler.tick(now);
        } finally {
            readLock.unlock();
        }
    }

    @Override
    public boolean write(ByteBuffer header, ByteBuffer payload) {
        synchronized (outLock) {
            // the header is the caller's to reuse (copied if not written now); the payload is a posted request's
            // source in a region, unchanged until the request completes (that needs the peer's ACK of every
            // byte): not copied
            iov[0] = header;
            iov[1] = payload;
            try {
                return write(iov, payload == null ? 1 : 2, 1);
            } finally {
                iov[0] = null;
                iov[1] = null;
            }
        }
    }

    @Override
    public boolean write(ByteBuffer[] bufs, int n, int copyMask) {
        synchronized (outLock) {
            if (closing) {
                return false;
            }
            if (outbox.isEmpty()) {
                try {
                    socketWrites++;
                    ch.write(bufs, 0, n);
                } catch (IOException e) {
                    closing = true;
                    execute(() -> handler.ioFailed(e));
                    return false;
                }
            }
            // what the socket did not take waits for the I/O thread: the caller's reused buffers (copyMask)
            // copied, the regions' memory not (a posted request's source, unchanged until the peer's ACK)
            boolean wasEmpty = outbox.isEmpty();
            for (int i = 0; i < n; i++) {
                ByteBuffer b = bufs[i];
                if (b.hasRemaining()) {
                    outbox.addLast((copyMask & (1 << i)) != 0 ? ByteBuffer.allocate(b.remaining()).put(b).flip()
                        : b.slice());
                }
            }
            if (wasEmpty && !outbox.isEmpty()) {
                wantWrite();
            }
            return true;
        }
    }

    private void wantWrite() {
        SelectionKey k = key;
        if (k == null) {
            execute(() -> {
                if (key != null && key.isValid()) {
                    key.interestOpsOr(SelectionKey.OP_WRITE);
                }
            });
            return;
        }
        try {
            k.interestOpsOr(SelectionKey.OP_WRITE);
        } catch (CancelledKeyException e) {
            return; // closed: nothing will be written any more
        }
        if (Thread.currentThread() != node.thread) {
            node.selector.wakeup();
        }
    }

    /** I/O thread: writes what waits in the outbox. */
    void flush() {
        synchronized (outLock) {
            try {
                while (!outbox.isEmpty()) {
                    // the head of the backlog in one system call (a cork's frames: up to 32 buffers), not one each
                    int n = 0;
                    long want = 0;
                    for (ByteBuffer b : outbox) {
                        backlog[n++] = b;
                        want += b.remaining();
                        if (n == backlog.length) {
                            break;
                        }
                    }
                    socketWrites++;
                    long written;
                    try {
                        written = ch.write(backlog, 0, n);
                    } finally {
                        java.util.Arrays.fill(backlog, 0, n, null);
                    }
                    while (!outbox.isEmpty() && !outbox.peekFirst().hasRemaining()) {
                        outbox.pollFirst();
                    }
                    if (written < want) {
                        return; // the socket is full: OP_WRITE stays on
                    }
                }
            } catch (IOException e) {
                closing = true;
                outbox.clear();
                execute(() -> handler.ioFailed(e));
                return;
            }
            key.interestOpsAnd(~SelectionKey.OP_WRITE);
            if (closing && lingerDeadline != 0) {
                shutdownOutput();
            }
            Runnable d = drained;
            drained = null;
            if (d != null && !closing) {
                execute(d); // under this socket's read lock, as every task of its handler
            }
        }
    }

    @Override
    public boolean queued() {
        synchronized (outLock) {
            return !outbox.isEmpty();
        }
    }

    @Override
    public int queuedBuffers() {
        synchronized (outLock) {
            return outbox.size();
        }
    }

    @Override
    public void whenDrained(Runnable task) {
        synchronized (outLock) {
            if (closing) {
                return;
            }
            if (!outbox.isEmpty()) {
                drained = task;
                return;
            }
        }
        execute(task);
    }

    private void shutdownOutput() {
        try {
            ch.shutdownOutput();
        } catch (IOException e) {
            LOG.debug("node '{}': shutting the output of a socket down: {}", node.name(), e.toString());
        }
    }

    @Override
    public void reading(boolean on) {
        wantRead = on;
        SelectionKey k = key;
        if (k == null || !k.isValid() || hold.owned() || hold.held()) {
            return; // followers hold the input: the I/O thread takes it back as wantRead says (heldInput)
        }
        try {
            if (on) {
                k.interestOpsOr(SelectionKey.OP_READ);
            } else {
                k.interestOpsAnd(~SelectionKey.OP_READ);
            }
        } catch (CancelledKeyException e) {
            // closed meanwhile
        }
    }

    @Override
    public void execute(Runnable task) {
        node.execute(() -> {
            readLock.lock();
            try {
                task.run();
            } finally {
                readLock.unlock();
            }
        });
    }

    /** The I/O thread, or a follower while it reads this socket. */
    @Override
    public boolean inIoThread() {
        return Thread.currentThread() == node.thread || readLock.isHeldByCurrentThread();
    }

    @Override
    public boolean onIoThread() {
        return Thread.currentThread() == node.thread;
    }

    @Override
    public void closeAfterFlush() {
        synchronized (outLock) {
            if (closing) {
                return;
            }
            closing = true;
        }
        execute(() -> {
            if (closed || lingerDeadline != 0) {
                return;
            }
            lingerDeadline = System.nanoTime() + SelectorNode.LINGER_NANOS;
            synchronized (outLock) {
                if (outbox.isEmpty()) {
                    shutdownOutput();
                }
            }
        });
    }

    @Override
    public void close() {
        synchronized (outLock) {
            closing = true;
        }
        if (Thread.currentThread() == node.thread) {
            doClose();
        } else {
            node.execute(this::doClose);
        }
    }

    /** I/O thread: closes the socket now and tells the handler. Idempotent. */
    void doClose() {
        if (closed) {
            return;
        }
        closed = true;
        node.held.remove(this);
        synchronized (outLock) {
            closing = true;
            outbox.clear();
        }
        if (key != null) {
            key.cancel();
        }
        synchronized (this) {
            Selector fs = followSelector;
            if (fs != null) {
                try {
                    fs.close(); // a follower waiting in it returns
                } catch (IOException e) {
                    LOG.debug("node '{}': closing a follower's selector: {}", node.name(), e.toString());
                }
            }
        }
        try {
            ch.close();
        } catch (IOException e) {
            LOG.debug("node '{}': closing a socket: {}", node.name(), e.toString());
        }
        readLock.lock();
        try {
            handler.inactive();
        } finally {
            readLock.unlock();
        }
    }

    @Override
    public boolean isOpen() {
        return !closed;
    }

    @Override
    public UnixDomainPrincipal peerCredentials() throws IOException {
        return ch.getOption(ExtendedSocketOptions.SO_PEERCRED);
    }

    @Override
    public String sourceAddress() {
        return active ? null : node.sourceAddressOf(ch);
    }

    @Override
    public String describePeer() {
        return active ? dialed : node.describeAccepted(ch);
    }

    // ---- the I/O thread's view: SelectorNode.Attachment ----

    @Override
    public void ready(SelectionKey k) {
        try {
            if (!k.isValid()) {
                return;
            }
            if (k.isConnectable()) {
                finishConnect();
                return;
            }
            if (k.isWritable()) {
                flush();
            }
            if (k.isValid() && k.isReadable()) {
                readable();
            }
        } catch (CancelledKeyException e) {
            doClose();
        }
    }

    @Override
    public void closeNow() {
        doClose();
    }
}
