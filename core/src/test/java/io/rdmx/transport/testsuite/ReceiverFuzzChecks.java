package io.rdmx.transport.testsuite;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmx.transport.Connection;
import io.rdmx.transport.Node;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.internal.AbstractConnection;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The verdict of the receive fuzz target ({@code ShmHandlerFuzzTest}, the selector engine's {@code SocketHandler}
 * that shm and tcp share, over the shared {@link io.rdmx.transport.wire.FrameReceiver}) on one input:
 * every failure is an {@link RdmxException} with a message, never the receiver's catch-all for an unexpected
 * runtime exception, and no such catch-all text went back to the peer.
 */
public final class ReceiverFuzzChecks {
    /**
     * How the receiver's messages start when it caught a RuntimeException it did not expect: no input may reach
     * it. (A prefix: a peer's own ERROR text, which may say anything, is quoted after a prefix of ours.)
     */
    public static final String INTERNAL_ERROR = "internal error handling a frame";

    private ReceiverFuzzChecks() {
    }

    /**
     * @param node the node under test
     * @param dial the dial's future (the dialing side), else an incomplete one
     * @return the connection the input established, or null
     */
    public static AbstractConnection connection(Node node, CompletableFuture<AbstractConnection> dial) {
        if (dial.isDone() && !dial.isCompletedExceptionally()) {
            return dial.join();
        }
        for (Connection c : node.connections()) {
            return (AbstractConnection) c;
        }
        return null;
    }

    /**
     * Checks how an input ended.
     *
     * @param c the connection it established, or null
     * @param dial the dial's future
     * @param sentBack the text of each ERROR and NAK frame written back to the peer
     */
    public static void verdict(AbstractConnection c, CompletableFuture<AbstractConnection> dial,
                               List<String> sentBack) {
        if (c != null && c.closeCause() != null) {
            checkCause("connection close cause", c.closeCause());
        }
        if (dial.isCompletedExceptionally()) {
            Throwable[] cause = new Throwable[1];
            dial.whenComplete((ok, e) -> cause[0] = e);
            checkCause("dial failure", cause[0]);
        }
        for (String s : sentBack) {
            assertFalse(s.startsWith(INTERNAL_ERROR), "frame sent back to the peer: " + s);
        }
    }

    /**
     * @param where what failed, for the message
     * @param e its cause
     */
    public static void checkCause(String where, Throwable e) {
        if (!(e instanceof RdmxException)) {
            fail(where + " is not an RdmxException: " + e, e);
        }
        if (e.getMessage() == null || e.getMessage().startsWith(INTERNAL_ERROR)) {
            fail(where + " is the handler's catch-all for an unexpected exception: " + e.getMessage(), e);
        }
    }
}
