package io.rdmx.rpc;

import java.nio.ByteBuffer;

/** A request as a handler sees it: method, call id, the client's 16-byte id, the caller's node and the body. */
public final class RpcCall implements Runnable {
    private final RpcServer server;
    private final String peer;
    private final int method;
    private final long callId;
    private final long clientHi;
    private final long clientLo;
    private final byte[] body;

    RpcCall(RpcServer server, String peer, int method, long callId, long clientHi, long clientLo, byte[] body) {
        this.server = server;
        this.peer = peer;
        this.method = method;
        this.callId = callId;
        this.clientHi = clientHi;
        this.clientLo = clientLo;
        this.body = body;
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

    /** @return the request body: a heap buffer over an array of its own, position 0; the handler may keep it */
    public ByteBuffer request() {
        return ByteBuffer.wrap(body);
    }

    /** @return request bytes */
    public int requestLength() {
        return body.length;
    }

    /** Handler thread: serves the call and sends the answer. */
    @Override
    public void run() {
        server.serve(this);
    }

    @Override
    public String toString() {
        return "RpcCall{peer=" + peer + ", method=" + method + ", callId=" + callId + ", length=" + body.length + "}";
    }
}
