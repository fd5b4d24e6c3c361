package io.rdmx.transport.testsuite;

import io.rdmx.transport.Connection;
import io.rdmx.transport.Node;
import io.rdmx.transport.shm.ShmConnection;
import io.rdmx.transport.stream.StreamConnection;

/** Kills a stream-provider node as a dying process would: sockets close, no ERROR frame is sent. */
public final class StreamKill {
    private StreamKill() {
    }

    /**
     * @param node a tcp or shm node
     */
    public static void kill(Node node) {
        for (Connection c : node.connections()) {
            if (c instanceof ShmConnection) {
                ((ShmConnection) c).abortSocket();
            } else {
                ((StreamConnection) c).channel().close().awaitUninterruptibly();
            }
        }
        node.close();
    }
}
