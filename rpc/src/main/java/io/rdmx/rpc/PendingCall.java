package io.rdmx.rpc;

import io.rdmx.channel.PeerChannel;
import io.rdmx.transport.internal.WaitLoop;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * One call of an {@link RpcClient}: the future its caller gets (the response body, or what its
 * {@link RpcResponseReader} decoded), its place in the {@link CallTable} and, for a blocking caller, what it shows
 * the {@link ReaderRole} while it waits for a reader.
 */
final class PendingCall extends CompletableFuture<Object> implements ReaderRole.Follower {
    /** {@link #hand}: waiting (nothing handed), handed the reader role, left without it. */
    private static final int WAITING = 0;
    private static final int HANDED = 1;
    private static final int LEFT = 2;
    private static final VarHandle HAND;

    static {
        try {
            HAND = MethodHandles.lookup().findVarHandle(PendingCall.class, "hand", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final String address;
    final boolean async;
    final long deadline;
    final long timeoutNanos;
    /** Decodes the response on the thread reading responses, or null: the body as an array. */
    RpcResponseReader<?> reader;
    volatile long callId;
    volatile PeerChannel peer;
    /** A blocking call's caller (async: null). */
    volatile Thread waiter;
    /** The wait loop its blocking caller sleeps in (set as it starts waiting): completions and hand-offs wake it. */
    volatile WaitLoop wait;
    /** Set by the caller once the call is in the table (from then on, only who takes it out completes it). */
    volatile boolean registered;
    /** In the reader role's follower queue (set by its caller, cleared by a reader that hands it the role). */
    volatile boolean queued;
    /** Whether a leaving reader handed its caller the role: {@link #WAITING}, {@link #HANDED} or {@link #LEFT}. */
    private volatile int hand;

    PendingCall(String address, boolean async, long deadline, long timeoutNanos) {
        this.address = address;
        this.async = async;
        this.deadline = deadline;
        this.timeoutNanos = timeoutNanos;
    }

    /** @return true if the call was sent to that server: only its answer is taken for the call's */
    boolean answeredBy(String server) {
        PeerChannel to = peer;
        return to != null && to.name().equals(server);
    }

    /** @return the server's name once the call was sent to one, else the address it was made to */
    String server() {
        PeerChannel to = peer;
        return to == null ? address : to.name();
    }

    /**
     * The caller: the call's outcome, once done.
     *
     * @return the response body, or what the call's reader decoded
     * @throws RpcException what the call failed with
     * @throws InterruptedException if interrupted
     */
    Object result() throws RpcException, InterruptedException {
        try {
            return get();
        } catch (ExecutionException e) {
            throw asRpcException(e.getCause());
        }
    }

    /** @return what the call failed with, if it is done and failed, else null */
    RpcException failure() {
        try {
            getNow(null);
        } catch (CompletionException | CancellationException c) {
            return asRpcException(c instanceof CompletionException ? c.getCause() : c);
        }
        return null;
    }

    private static RpcException asRpcException(Throwable t) {
        if (t instanceof RpcException) {
            return (RpcException) t;
        }
        return new RpcException(String.valueOf(t), t);
    }

    @Override
    public boolean done() {
        return isDone();
    }

    @Override
    public boolean hand() {
        return HAND.compareAndSet(this, WAITING, HANDED);
    }

    @Override
    public boolean leave() {
        return HAND.compareAndSet(this, WAITING, LEFT) || hand == LEFT;
    }

    @Override
    public void rearm() {
        hand = WAITING;
    }

    @Override
    public void dequeued() {
        queued = false;
    }
}
