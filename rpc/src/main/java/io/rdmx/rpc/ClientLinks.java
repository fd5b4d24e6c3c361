package io.rdmx.rpc;

import io.rdmx.channel.ChannelEngine;
import io.rdmx.channel.ChannelWriter;
import io.rdmx.channel.PeerChannel;
import io.rdmx.transport.Connection;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RdmxTimeoutException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An {@link RpcServer}'s connections to its clients, by client node name: registered by the accept thread
 * ({@code rdmx-rpc-accept-<node>}) as the engine accepts them, each with the lock of its one writer. A request may
 * be read before its client is registered: its answer waits (bounded) for the registration ({@link #slot}).
 */
final class ClientLinks {
    private static final Logger LOG = LoggerFactory.getLogger(RpcServer.class);

    private final ChannelEngine engine;
    private final String name;
    private final BooleanSupplier running;
    private final Duration poll;
    private final Map<String, PeerSlot> peers = new ConcurrentHashMap<>();
    private final Thread acceptThread;

    /** A client's channel and the lock of its one writer. */
    static final class PeerSlot {
        final PeerChannel peer;
        final ChannelWriter writer;
        final FrameSender.Lane lock = new FrameSender.Lane();

        PeerSlot(PeerChannel peer) {
            this.peer = peer;
            this.writer = peer.writer(0, 0);
        }
    }

    /**
     * @param engine the engine whose accepted peers these are
     * @param name the server's node name
     * @param running false once the server is stopped
     * @param poll how long one accept waits before it looks at {@code running} again
     */
    ClientLinks(ChannelEngine engine, String name, BooleanSupplier running, Duration poll) {
        this.engine = engine;
        this.name = name;
        this.running = running;
        this.poll = poll;
        this.acceptThread = new Thread(this::acceptLoop, "rdmx-rpc-accept-" + name);
        this.acceptThread.setDaemon(true);
    }

    /** Starts the accept thread. */
    void start() {
        acceptThread.start();
    }

    /** The server stopped: wakes the answers waiting for a client's registration. */
    void stop() {
        synchronized (peers) {
            peers.notifyAll();
        }
    }

    /** Waits (bounded) for the accept thread to end. */
    void join(long millis) throws InterruptedException {
        acceptThread.join(millis);
    }

    private void acceptLoop() {
        while (running.getAsBoolean()) {
            try {
                PeerChannel p = engine.accept(poll);
                synchronized (peers) {
                    peers.put(p.name(), new PeerSlot(p));
                    peers.notifyAll();
                }
            } catch (RdmxTimeoutException e) {
                continue;
            } catch (RdmxException e) {
                if (!engine.isOpen()) {
                    return;
                }
                LOG.debug("rpc server '{}': a client's channel failed during its handshake: {}", name, e.getMessage());
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** @return the client's registered connection, or null (not registered yet, or gone) */
    PeerSlot registered(String peer) {
        return peers.get(peer);
    }

    /**
     * The channel to a client; waits (bounded) for the accept thread when a request came before it registered
     * the client.
     *
     * @return the slot, or null if the client is gone or did not register in time
     */
    PeerSlot slot(String peer, long deadline) {
        PeerSlot s = peers.get(peer);
        if (s != null) {
            return s.peer.isOpen() ? s : null;
        }
        synchronized (peers) {
            while ((s = peers.get(peer)) == null) {
                long left = deadline - System.nanoTime();
                if (left <= 0 || !running.getAsBoolean() || !connected(peer)) {
                    return null;                  // a client gone before it was registered: nothing to wait for
                }
                try {
                    peers.wait(Math.min(TimeUnit.NANOSECONDS.toMillis(left) + 1, 50));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return null;
                }
            }
        }
        return s.peer.isOpen() ? s : null;
    }

    /** @return true if the node has an open connection to the peer (not yet registered by the accept thread) */
    private boolean connected(String peer) {
        for (Connection c : engine.node().connections()) {
            if (peer.equals(c.peerName()) && c.isOpen()) {
                return true;
            }
        }
        return false;
    }

    /** A client's channel failed: its registration goes, unless it is already a new, open one. */
    void gone(String peer) {
        peers.computeIfPresent(peer, (k, s) -> s.peer.isOpen() ? s : null);
    }

    /** @return true while an open channel to that client is registered */
    boolean has(String peer) {
        PeerSlot s = peers.get(peer);
        return s != null && s.peer.isOpen();
    }
}
