package io.rdmx.rpc;

import io.rdmx.channel.PeerChannel;
import io.rdmx.transport.internal.WaitLoop;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The calls an {@link RpcClient} has outstanding: a table of {@link RpcConfig#maxOutstandingCalls()} slots indexed
 * by the call id's low bits (no map entry, no boxing per call). A call goes in when its caller registers it (the
 * id is chosen then) and comes out exactly once, by a compare-and-set of its slot: whoever takes it out (the thread
 * reading its response, the timeout scan, a server's loss, the client's close, its own caller failing it) is the
 * one that completes it. A response is matched with the call by id and by the server the call was sent to, never by
 * id alone.
 */
final class CallTable {
    private static final Logger LOG = LoggerFactory.getLogger(RpcClient.class);

    private final String name;
    private final AtomicReferenceArray<PendingCall> slots;
    private final int mask;
    private final AtomicLong ids;
    private final AtomicInteger asyncOutstanding = new AtomicInteger();
    /** Told when the first asynchronous call of a quiet period goes in (the client's reader thread reads for it). */
    private final Runnable asyncWaiting;
    private final LongAdder lateResponses = new LongAdder();
    private final LongAdder foreignResponses = new LongAdder();
    private final LongAdder timedOut = new LongAdder();

    /**
     * @param name the client's node name (for errors)
     * @param size slots, a power of two
     * @param firstId the first call id tried
     * @param asyncWaiting run when an asynchronous call goes in and no other was outstanding
     */
    CallTable(String name, int size, long firstId, Runnable asyncWaiting) {
        if (size <= 0 || Integer.bitCount(size) != 1) {
            throw new IllegalArgumentException("call table of client '" + name + "': size=" + size
                + " is not a power of two");
        }
        this.name = name;
        this.slots = new AtomicReferenceArray<>(size);
        this.mask = size - 1;
        this.ids = new AtomicLong(firstId);
        this.asyncWaiting = asyncWaiting;
    }

    /**
     * The caller: gives the call an id whose slot is free and puts it in (from then on, only whoever takes it out
     * completes it).
     *
     * @throws RpcException if every slot tried is taken (the call is failed with it)
     */
    void register(PendingCall p) throws RpcException {
        for (int i = 0; i <= mask; i++) {
            long id = ids.getAndIncrement() & Long.MAX_VALUE;
            p.callId = id;
            if (slots.compareAndSet((int) id & mask, null, p)) {
                p.registered = true;
                if (p.async && asyncOutstanding.incrementAndGet() == 1) {
                    asyncWaiting.run();   // it reads (and scans deadlines) while async calls wait
                }
                return;
            }
        }
        RpcException e = new RpcException("rpc client '" + name + "' has " + (mask + 1) + " calls outstanding, the"
            + " most " + RpcConfig.MAX_OUTSTANDING_PROP + " allows; call to address=" + p.address + " refused");
        p.completeExceptionally(e);
        throw e;
    }

    /**
     * The reading thread: the call a response from that server answers, left in the table, if it has a reader to
     * decode it (to be taken with {@link #take(long, String)} once the response is known to be decoded in place).
     *
     * @return the call, or null (no such call outstanding at that server, or no reader: the body as an array)
     */
    PendingCall decoding(long callId, String server) {
        PendingCall q = slots.get((int) callId & mask);
        return q == null || q.callId != callId || q.reader == null || !q.answeredBy(server) ? null : q;
    }

    /**
     * The reading thread: takes out of the table the call a server's response answers. A response for a call id
     * that is not outstanding is late (counted in {@link #lateResponses()}); one for a call outstanding at another
     * server is foreign (counted in {@link #foreignResponses()}, logged once per server) and leaves the call alone.
     *
     * @param callId the response's call id
     * @param server the peer the response came from
     * @return the call, or null (dropped and counted)
     */
    PendingCall take(long callId, String server) {
        PendingCall p = slots.get((int) callId & mask);
        if (p == null || p.callId != callId) {
            lateResponses.increment();
            return null;
        }
        if (!p.answeredBy(server)) {
            if (foreignResponses.sum() == 0 || LOG.isDebugEnabled()) {
                LOG.warn("rpc client '{}': server '{}' answered call id={}, which was sent to '{}': dropped", name,
                    server, callId, p.server());
            }
            foreignResponses.increment();
            return null;
        }
        PendingCall t = take(callId);
        if (t == null) {
            lateResponses.increment(); // its caller gave up on it meanwhile
        }
        return t;
    }

    /** Takes a call out of the table (the one thread that does so completes it). */
    private PendingCall take(long callId) {
        int i = (int) callId & mask;
        PendingCall p = slots.get(i);
        if (p == null || p.callId != callId || !slots.compareAndSet(i, p, null)) {
            return null;
        }
        if (p.async) {
            asyncOutstanding.decrementAndGet();
        }
        return p;
    }

    /**
     * Fails a call if no other thread completes it: the one that takes it out of the table completes it; a call
     * that never got into the table is its caller's alone. Wakes its caller.
     *
     * @return true if this failed it
     */
    boolean fail(PendingCall p, RpcException e) {
        if (p.registered) {
            if (!slots.compareAndSet((int) p.callId & mask, p, null)) {
                return false;
            }
            if (p.async) {
                asyncOutstanding.decrementAndGet();
            }
        }
        boolean done = p.completeExceptionally(e);
        wake(p);
        return done;
    }

    /**
     * Fails a call that could not be sent, unless another thread failed it first (the client closed, the server
     * was lost): then that first cause is the call's.
     *
     * @return the exception the call failed with
     */
    RpcException failSending(PendingCall p, RpcException e) {
        if (fail(p, e)) {
            return e;
        }
        RpcException first = p.failure();
        return first != null ? first : e;
    }

    /** Fails a call whose deadline passed, if nothing else completed it first (counted in {@link #timedOut()}). */
    void expire(PendingCall p) {
        if (fail(p, new RpcTimeoutException("call id=" + p.callId + " to server '" + p.server() + "' (address="
            + p.address + ") got no answer within its timeout of " + TimeUnit.NANOSECONDS.toMillis(p.timeoutNanos)
            + " ms"))) {
            timedOut.increment();
        }
    }

    /**
     * The reading thread: fails the asynchronous calls whose deadline passed (a blocking caller times out its own
     * call).
     *
     * @param now {@code System.nanoTime()}
     */
    void expireDue(long now) {
        for (int i = 0; i <= mask; i++) {
            PendingCall p = slots.get(i);
            if (p != null && p.async && now - p.deadline >= 0) {
                expire(p);
            }
        }
    }

    /**
     * Fails the calls sent to a server.
     *
     * @param server the server's name
     * @param e the cause: a protocol error is every call's own, any other is wrapped per call, naming it
     * @param onlyClosed only the calls sent on a channel that is closed now (a server restarted under the same
     *     name keeps the calls sent on its new channel)
     */
    void failCallsTo(String server, RpcPeerException e, boolean onlyClosed) {
        for (int i = 0; i <= mask; i++) {
            PendingCall p = slots.get(i);
            PeerChannel peer = p == null ? null : p.peer;
            if (peer != null && server.equals(peer.name()) && !(onlyClosed && peer.isOpen())) {
                RpcPeerException x = e instanceof RpcProtocolException ? e
                    : new RpcPeerException(server, "call id=" + p.callId + " failed: " + e.getMessage(), e.getCause());
                fail(p, x);
            }
        }
    }

    /** Fails every outstanding call, naming it, its server and why. */
    void failAll(String why) {
        for (int i = 0; i <= mask; i++) {
            PendingCall p = slots.get(i);
            if (p != null) {
                fail(p, new RpcException("call id=" + p.callId + " to server '" + p.server() + "' failed: " + why
                    + " with the call outstanding"));
            }
        }
    }

    /** Wakes a call's blocking caller, unless that is the calling thread (it read its own response: awake). */
    static void wake(PendingCall p) {
        WaitLoop w = p.wait;
        if (w != null && p.waiter != Thread.currentThread()) {
            w.wake();
        }
    }

    /** @return asynchronous calls outstanding now */
    int asyncOutstanding() {
        return asyncOutstanding.get();
    }

    /** @return calls outstanding now (a scan of the table) */
    int outstanding() {
        int n = 0;
        for (int i = 0; i <= mask; i++) {
            if (slots.get(i) != null) {
                n++;
            }
        }
        return n;
    }

    /** @return responses that came after their call was done (dropped) */
    long lateResponses() {
        return lateResponses.sum();
    }

    /** @return responses from a server for a call outstanding at another server (dropped) */
    long foreignResponses() {
        return foreignResponses.sum();
    }

    /** @return calls that timed out (sending or waiting for their answer) */
    long timedOut() {
        return timedOut.sum();
    }

    /** The send path: a call not sent within its timeout. */
    void countTimedOut() {
        timedOut.increment();
    }
}
