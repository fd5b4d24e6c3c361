package io.rdmx.verbs;

import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.internal.RegionImpl;
import java.util.List;

/**
 * A verbs connection: an RC queue pair set up by rdma_cm ({@link Endpoint}), created once the region exchange
 * over the queue pair finished. Posting goes straight to the hardware queues; completions come from the
 * node's progress thread.
 */
final class VerbsConnection extends AbstractConnection {
    private final Endpoint ep;

    VerbsConnection(VerbsNode node, String peerName, String peerAddress, List<RemoteRegion> regions, Endpoint ep) {
        super(node, peerName, peerAddress, regions);
        this.ep = ep;
    }

    Endpoint endpoint() {
        return ep;
    }

    @Override
    protected int postSendQueue(Opcode op, long wrId, RegionImpl local, int localOffset, int length,
                                RemoteRegion remote, long remoteOffset, int imm, boolean signaled)
        throws ConnectionClosedException {
        return ep.postSend(op, wrId, local, localOffset, length, remote, remoteOffset, imm, signaled);
    }

    @Override
    protected int postRecv(long wrId, RegionImpl local, int localOffset, int length) throws ConnectionClosedException {
        return ep.postRecv(wrId, local, localOffset, length);
    }

    /** @throws ConnectionClosedException naming the peer: the endpoint was closed under a poster */
    void throwClosed() throws ConnectionClosedException {
        checkOpen();
        throw new ConnectionClosedException(peerName(), "connection from '" + node.name() + "' to peer '"
            + peerName() + "' is closed", null);
    }

    @Override
    protected void onRecvPosted() {
        // receives go to the hardware receive queue (postRecv), never to the shared queue
    }

    @Override
    protected void flushSendQueue() {
        ep.flushAll(flushDetail());
    }

    @Override
    protected void closeTransport(Throwable cause) {
        ep.close();
    }
}
