package io.rdmx.transport.shm;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import java.net.InetSocketAddress;

/**
 * Stream-socket nodes on the JDK selector machinery of the shm provider, for other providers: one I/O thread
 * owning a {@link java.nio.channels.Selector} over every socket of the node, posting threads that write their
 * own frames (one gathering write of a reused header and the region's memory), and the receive state machine
 * of {@link io.rdmx.transport.wire.FrameReceiver}. The wire format is the stream protocol's, unchanged.
 */
public final class SelectorSockets {
    private SelectorSockets() {
    }

    /** How a provider's addresses map to socket addresses. */
    public interface Addressing {
        /**
         * @param address an address in the provider's format
         * @return the socket address
         * @throws RdmxException naming the address if it is malformed
         */
        InetSocketAddress parse(String address) throws RdmxException;

        /**
         * @param bound the bound listening address
         * @return the address to advertise
         */
        String format(InetSocketAddress bound);
    }

    /**
     * Opens a node on TCP sockets (TCP_NODELAY): WRITE data travels in frames, no peer credentials are checked,
     * no bells.
     *
     * @param fabric the provider (its name appears in thread names and messages)
     * @param options validated options
     * @param bind where to listen
     * @param addressing the provider's address format
     * @param followerReads whether a thread waiting for a connection's input reads its socket itself
     *                      ({@link io.rdmx.transport.Connection#awaitInput})
     * @return the node, listening, its I/O thread running
     * @throws RdmxException if it cannot listen
     * @throws IllegalArgumentException if {@code rdmx.cq.followerReads} is neither true nor false
     */
    public static Node openTcp(Fabric fabric, NodeOptions options, InetSocketAddress bind, Addressing addressing,
                               boolean followerReads) throws RdmxException {
        ShmNode n = new ShmNode(fabric, options, null, addressing, followerReads,
            io.rdmx.transport.internal.CompletionQueueImpl.followerReads());
        n.startTcp(bind);
        return n;
    }
}
