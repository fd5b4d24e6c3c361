package io.rdmx.transport.testsuite;

import io.rdmx.transport.Connection;
import io.rdmx.transport.Node;
import io.rdmx.transport.internal.AbstractConnection;

/** Kills a socket-provider node as a dying process would: sockets close, no ERROR frame is sent. */
public final class StreamKill {
    private StreamKill() {
    }

    /**
     * @param node a node of a provider whose connections can be aborted (shm, tcp)
     */
    public static void kill(Node node) {
        for (Connection c : node.connections()) {
            ((AbstractConnection) c).abort();
        }
        node.close();
    }
}
