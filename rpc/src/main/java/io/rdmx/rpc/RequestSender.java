package io.rdmx.rpc;

import io.rdmx.channel.PeerChannel;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RdmxTimeoutException;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * An {@link RpcClient}'s send path, on the calling thread: checks the request's size, connects ({@link ServerLinks}),
 * puts the call in the {@link CallTable} and writes the request into the server's ring ({@link FrameSender}). A
 * call that cannot be sent is failed with an exception naming the call and the server, and that exception thrown.
 */
final class RequestSender {
    private final RpcConfig config;
    private final String name;
    private final long clientHi;
    private final long clientLo;
    private final ServerLinks links;
    private final CallTable table;
    private final BooleanSupplier running;

    RequestSender(RpcConfig config, String name, long clientHi, long clientLo, ServerLinks links, CallTable table,
                  BooleanSupplier running) {
        this.config = config;
        this.name = name;
        this.clientHi = clientHi;
        this.clientLo = clientLo;
        this.links = links;
        this.table = table;
        this.running = running;
    }

    /**
     * Registers, connects and writes the request (a buffer, or a body writer); on failure the call is failed and
     * its exception thrown.
     *
     * @param p the call
     * @param method the method
     * @param request the request body (remaining bytes), or null if {@code body} writes it
     * @param body writes the request body, or null
     */
    void send(PendingCall p, int method, ByteBuffer request, RpcBody body) throws RpcException, InterruptedException {
        if (!running.getAsBoolean()) {
            throw failNow(p, RpcClient.closed(name));
        }
        int length = body != null ? body.length() : request.remaining();
        if (length < 0 || length > config.maxMessageBytes()) {
            throw failNow(p, new RpcMessageTooLargeException("request to address=" + p.address + " is "
                + length + " bytes, more than " + RpcConfig.MAX_MESSAGE_BYTES_PROP + "="
                + config.maxMessageBytes() + " of client '" + name + "'; not sent", length,
                config.maxMessageBytes()));
        }
        ServerLinks.Link link;
        try {
            link = links.link(p.address, p.deadline, p.timeoutNanos);
        } catch (RpcException e) {
            throw failNow(p, e);
        }
        PeerChannel peer = link.peer;
        p.peer = peer;
        table.register(p);
        if (!running.getAsBoolean()) {
            table.fail(p, RpcClient.closed(name));
            throw RpcClient.closed(name);
        }
        try {
            if (body != null) {
                FrameSender.send(link.writer, link.lock, RpcFrameDescriptor.KIND_REQUEST, method, p.callId, clientHi,
                    clientLo, body, p.deadline);
            } else {
                FrameSender.send(link.writer, link.lock, RpcFrameDescriptor.KIND_REQUEST, method, p.callId, clientHi,
                    clientLo, request, p.deadline);
            }
        } catch (FrameSender.BodyFailed e) {
            throw table.failSending(p, new RpcException("call id=" + p.callId + " to server '" + peer.name()
                + "' (address=" + p.address + "): " + e.getMessage(), e.getCause() != null ? e.getCause() : e));
        } catch (ConnectionClosedException e) {
            throw table.failSending(p, new RpcPeerException(peer.name(), "server '" + peer.name() + "' (address="
                + p.address + ") lost before call id=" + p.callId + " was sent: " + e.getMessage(), e));
        } catch (RdmxTimeoutException e) {
            table.countTimedOut();
            throw table.failSending(p, new RpcTimeoutException("call id=" + p.callId + " to server '" + peer.name()
                + "' (address=" + p.address + ") not sent within its timeout of "
                + TimeUnit.NANOSECONDS.toMillis(p.timeoutNanos) + " ms: " + e.getMessage(), e));
        } catch (RdmxException e) {
            throw table.failSending(p, new RpcPeerException(peer.name(), "call id=" + p.callId + " to server '"
                + peer.name() + "' not sent: " + e.getMessage(), e));
        } catch (InterruptedException e) {
            table.fail(p, new RpcException("call id=" + p.callId + " to address=" + p.address + " interrupted"));
            throw e;
        }
    }

    private static RpcException failNow(PendingCall p, RpcException e) {
        p.completeExceptionally(e);
        return e;
    }
}
