package io.rdmx.channel;

import io.rdmx.transport.Connection;
import io.rdmx.transport.Node;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RdmxTimeoutException;
import io.rdmx.transport.internal.SafeLog;
import java.time.Duration;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link ChannelEngine}'s acceptor thread ({@code rdmx-accept-<node>}): takes the node's incoming connections,
 * starts each peer's handshake ({@link ChannelEngine#peerFor}) and queues the peer for
 * {@link ChannelEngine#accept}, until the engine closes (which interrupts its wait, so a close never waits for it)
 * or the node closes.
 */
final class ChannelAcceptor {
    private static final Logger LOG = LoggerFactory.getLogger(ChannelAcceptor.class);
    /** One wait of the acceptor in {@link Node#accept}: long, since {@link #stop} interrupts it. */
    private static final Duration ACCEPT_WAIT = Duration.ofSeconds(30);

    private final ChannelEngine engine;
    private final Node node;
    private final Thread thread;
    /**
     * Guards {@link #waiting}: {@link #stop} interrupts the acceptor only while it waits in {@link Node#accept},
     * and the acceptor clears a late interrupt before it does anything else.
     */
    private final Object lock = new Object();
    /** Guarded by {@link #lock}: the acceptor is inside {@link Node#accept}. */
    private boolean waiting;
    private final LinkedBlockingQueue<PeerChannel> accepted = new LinkedBlockingQueue<>();

    ChannelAcceptor(ChannelEngine engine) {
        this.engine = engine;
        this.node = engine.node();
        this.thread = new Thread(this::run, "rdmx-accept-" + node.name());
        this.thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    /**
     * @param timeout see {@link ChannelEngine#accept}
     * @return the next peer, handshake complete
     */
    PeerChannel next(Duration timeout) throws RdmxException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        PeerChannel p = accepted.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
        if (p == null) {
            throw new RdmxTimeoutException("no peer connected to node '" + node.name() + "' within "
                + timeout.toMillis() + " ms");
        }
        long left = Math.max(1, deadline - System.nanoTime());
        return p.awaitReady(Duration.ofNanos(Math.max(left, node.options().handshakeTimeout().toNanos())));
    }

    private void run() {
        while (engine.isOpen()) {
            try {
                Connection c = acceptOne();
                if (c != null) {
                    PeerChannel p;
                    try {
                        p = engine.peerFor(c);
                    } catch (RdmxException e) {
                        c.close(); // the engine closed after accept returned it: the peer sees it end
                        throw e;
                    } catch (Throwable e) {
                        // that connection alone goes; the acceptor takes the next
                        c.close();
                        SafeLog.error(LOG, "node '" + node.name() + "': setting up an accepted channel failed", e);
                        continue;
                    }
                    accepted.offer(p);
                }
            } catch (RdmxTimeoutException e) {
                continue;
            } catch (RdmxException e) {
                if (engine.isOpen() && node.isOpen()) {
                    LOG.warn("node '{}': accepting a channel failed: {}", node.name(), e.getMessage());
                } else {
                    return;
                }
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /**
     * One wait in {@link Node#accept}, interrupted by {@link #stop} only while in it: the flag is cleared before
     * the acceptor goes on, so a late interrupt never reaches a handshake's I/O.
     *
     * @return the connection, or null when the engine is closing
     */
    private Connection acceptOne() throws RdmxException, InterruptedException {
        synchronized (lock) {
            if (!engine.isOpen()) {
                return null;
            }
            waiting = true;
        }
        Connection c;
        try {
            c = node.accept(ACCEPT_WAIT);
        } finally {
            synchronized (lock) {
                waiting = false;
                Thread.interrupted(); // stop's interrupt, if it came as accept returned
            }
        }
        return c; // if the engine closed meanwhile, peerFor refuses it and run closes it
    }

    /** The engine closes (no longer open): ends the acceptor's wait now, not at the next connection or timeout. */
    void stop() {
        synchronized (lock) {
            if (waiting) {
                thread.interrupt();
            }
        }
    }

    /** Waits (5 s at most) for the acceptor to end. */
    void join() throws InterruptedException {
        thread.join(5000);
    }
}
