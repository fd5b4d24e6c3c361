package io.rdmx.rpc;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * A request as a handler sees it: method, call id, the client's 16-byte id, the caller's node and the body; and,
 * for an {@link RpcAsyncHandler}, the way to answer it later from any thread ({@link #respond},
 * {@link #respondError}).
 */
public final class RpcCall implements Runnable {
    private static final AtomicIntegerFieldUpdater<RpcCall> ANSWERED =
        AtomicIntegerFieldUpdater.newUpdater(RpcCall.class, "answered");

    private final Answerer answerer;
    private final String peer;
    private final String callerAddress;
    private final ClientLinks.PeerSlot slot;
    private final int method;
    private final long callId;
    private final long clientHi;
    private final long clientLo;
    private final byte[] body;
    private final DispatchTable.Route route;
    private volatile int answered;

    /**
     * @param answerer where its answer goes
     * @param peer the calling node's name
     * @param callerAddress where the caller really is ({@link #callerAddress()}), or null
     * @param slot the connection the request came on, or null if its client was not registered yet
     * @param method the method
     * @param callId the call id
     * @param clientHi client id, first 8 bytes
     * @param clientLo client id, last 8 bytes
     * @param body the request body
     * @param route the method's route: its handler, and where that runs
     */
    RpcCall(Answerer answerer, String peer, String callerAddress, ClientLinks.PeerSlot slot, int method, long callId,
            long clientHi, long clientLo, byte[] body, DispatchTable.Route route) {
        this.answerer = answerer;
        this.peer = peer;
        this.callerAddress = callerAddress;
        this.slot = slot;
        this.method = method;
        this.callId = callId;
        this.clientHi = clientHi;
        this.clientLo = clientLo;
        this.body = body;
        this.route = route;
    }

    /** @return the method */
    public int method() {
        return method;
    }

    /** @return the call id the client chose (unique among that client's outstanding calls) */
    public long callId() {
        return callId;
    }

    /** @return the client id's first 8 bytes (big-endian order of {@link #clientId()}) */
    public long clientIdHigh() {
        return clientHi;
    }

    /** @return the client id's last 8 bytes */
    public long clientIdLow() {
        return clientLo;
    }

    /** @return a copy of the 16-byte client id */
    public byte[] clientId() {
        return ClientIds.toBytes(clientHi, clientLo);
    }

    /** @return the calling node's name */
    public String peer() {
        return peer;
    }

    /**
     * Where the caller really is, as the transport established it when it accepted the caller's connection, never
     * what the caller claims (its node name, its announced address, anything in the request): the IP address the
     * connection's socket came from (tcp), or the loopback address for a process of this host (shm's Unix socket,
     * whose peer runs as this user). See {@link io.rdmx.channel.PeerChannel#acceptedFrom()}.
     *
     * @return an IP address literal, or null where the transport cannot tell (refuse the caller where its address
     *     matters)
     */
    public String callerAddress() {
        return callerAddress;
    }

    /** @return the request body: a heap buffer over an array of its own, position 0; the handler may keep it */
    public ByteBuffer request() {
        return ByteBuffer.wrap(body);
    }

    /** @return request bytes */
    public int requestLength() {
        return body.length;
    }

    /**
     * Answers the call from the calling thread: the body is written into the client's ring before this returns
     * (blocking up to {@link RpcConfig#writeTimeout()} for ring space; on the server's reader thread, which
     * never waits, it goes at once if there is space now, else a copy is written by a handler thread), so the
     * buffer may be reused afterwards. A body larger than
     * {@link RpcConfig#maxMessageBytes()} is answered with a {@link RpcMessageTooLargeException} error instead.
     *
     * @param response the response body (its remaining bytes; position unchanged), or null for an empty one
     * @return true if the answer was written; false if it was dropped (the client is gone, the server stopped,
     *         the ring stayed full past the write timeout, or the thread was interrupted): the client then times
     *         out, or has failed the call already; a client that timed out drops a late answer
     * @throws IllegalStateException if the call was answered already (naming the call and its peer)
     */
    public boolean respond(ByteBuffer response) {
        claimAnswer();
        return answerer.answer(this, RpcFrameDescriptor.KIND_RESPONSE, response, null);
    }

    /**
     * Answers the call as {@link #respond(ByteBuffer)} does, the answering thread writing the body straight into
     * the client's ring ({@link RpcBody}: no array of its size, no copy of it; on the server's reader thread, or
     * for a body larger than a ring record, it is written into an array first). If the writer fails, the client
     * gets an error answer naming the call, or (when its frame went out already) a zero-filled body.
     *
     * @param response writes the response body
     * @return as {@link #respond(ByteBuffer)}
     * @throws IllegalStateException if the call was answered already
     * @throws IllegalArgumentException if the body's length is negative
     */
    public boolean respond(RpcBody response) {
        if (response.length() < 0) {
            throw new IllegalArgumentException("response body of call id=" + callId + " of '" + peer + "' has length="
                + response.length());
        }
        claimAnswer();
        return answerer.answer(this, RpcFrameDescriptor.KIND_RESPONSE, null, response);
    }

    /**
     * Answers the call with a remote error, carried to the caller as a {@link RemoteRpcException}.
     *
     * @param className the error's class name
     * @param message its message, or null
     * @return as {@link #respond}
     * @throws IllegalStateException if the call was answered already
     */
    public boolean respondError(String className, String message) {
        claimAnswer();
        return answerer.answerError(this, className, message);
    }

    /** @return true once {@link #respond} or {@link #respondError} was called (or the server answered for it) */
    public boolean isAnswered() {
        return answered != 0;
    }

    /** @return the connection the request came on, or null if its client was not registered yet */
    ClientLinks.PeerSlot slot() {
        return slot;
    }

    /** @return the method's route: its handler, and where that runs */
    DispatchTable.Route route() {
        return route;
    }

    /** @return where the call's answer goes */
    Answerer answerer() {
        return answerer;
    }

    /** Takes the one answer of the call. */
    private void claimAnswer() {
        if (!ANSWERED.compareAndSet(this, 0, 1)) {
            throw new IllegalStateException("call id=" + callId + " of '" + peer + "' (method=" + method
                + ") was answered already");
        }
    }

    /** @return true if this thread takes the one answer (the server answering for its handler) */
    boolean tryClaimAnswer() {
        return ANSWERED.compareAndSet(this, 0, 1);
    }

    /** Handler thread: serves the call and sends the answer. */
    @Override
    public void run() {
        route.serve(this);
    }

    @Override
    public String toString() {
        return "RpcCall{peer=" + peer + ", method=" + method + ", callId=" + callId + ", length=" + body.length + "}";
    }
}
