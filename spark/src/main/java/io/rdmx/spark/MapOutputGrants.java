package io.rdmx.spark;

import io.rdmx.transport.Connection;
import io.rdmx.transport.Node;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RdmxTimeoutException;
import io.rdmx.transport.Region;
import io.rdmx.transport.RemoteRegion;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The map output files one executor grants to its application's peers for one-sided READ, on one provider: a
 * node of their own (the READ node: no channel engine, no handler thread; the provider's own I/O answers READs,
 * or the NIC), to which readers connect, and each map task's data file registered read-only on it
 * ({@link Node#registerFile}, node-wide: the node's secret admits the application's executors only) when a reader
 * first asks where it is ({@link FetchProtocol#METHOD_LOCATE}). Regions are released when their shuffle is
 * unregistered and when the executor stops ({@link #close}), before the node closes: none is left for the node to
 * report.
 *
 * <p>A data file of 2 GiB or more (a region's length is an {@code int}) is not granted: its blocks are fetched by
 * RPC. Thread-safe: locations are asked for on the block server's handler threads.
 */
final class MapOutputGrants implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(MapOutputGrants.class);

    private record Key(int shuffleId, long mapId) {
    }

    private record Grant(Region region, long[] offsets) {
    }

    private final Node node;
    private final BlockSource source;
    private final Map<Key, Grant> grants = new HashMap<>();
    private final Thread acceptor;
    private final List<Connection> accepted = new ArrayList<>();
    private boolean closed;

    /**
     * @param node the READ node, taken by this object (closed with it)
     * @param source where the map output files are
     */
    MapOutputGrants(Node node, BlockSource source) {
        this.node = node;
        this.source = source;
        this.acceptor = new Thread(this::accept, "blocks-serve-accept-" + node.name());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** Takes the readers' connections (and keeps them, for per-connection descriptors) until closed. */
    private void accept() {
        while (true) {
            synchronized (this) {
                if (closed) {
                    return;
                }
            }
            try {
                // no polling: close() interrupts this thread and closes the node, either of which ends the wait
                Connection c = node.accept(Duration.ofHours(1));
                synchronized (this) {
                    accepted.removeIf(x -> !x.isOpen());
                    accepted.add(c);
                }
            } catch (RdmxTimeoutException e) {
                // an hour without a reader: wait again
            } catch (RdmxException e) {
                if (node.isOpen()) {
                    LOG.warn("rdmx shuffle: READ node {} stops accepting readers: {}", node.address(), e.toString());
                }
                return;
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** @return the READ node's address, for the advertisement */
    String address() {
        return node.address();
    }

    /**
     * Answers a location request: grants the map output's data file (once) and tells the reader where it is.
     *
     * @param request a valid {@link FetchProtocol#locateRequest}
     * @param peer who asks (for errors)
     * @return the {@link FetchProtocol#location} answer
     * @throws IOException if the map output is unknown, too large for a region, or cannot be registered here (the
     *         reader fetches it by RPC)
     */
    ByteBuffer locate(ByteBuffer request, String peer) throws IOException {
        int shuffleId = FetchProtocol.shuffleId(request);
        long mapId = FetchProtocol.mapId(request);
        Grant g = grant(shuffleId, mapId);
        RemoteRegion d;
        try {
            d = g.region().descriptor(connectionOf(FetchProtocol.readerNode(request)));
        } catch (RdmxException e) {
            throw new IOException("map output shuffle_" + shuffleId + "_" + mapId + " for " + peer + ": " + e, e);
        }
        return FetchProtocol.location(d, g.offsets());
    }

    /** @return the accepted connection of the reader node of that name, or null (keys are node-wide then) */
    private synchronized Connection connectionOf(String readerNode) {
        for (Connection c : accepted) {
            if (c.peerName().equals(readerNode) && c.isOpen()) {
                return c;
            }
        }
        return null;
    }

    private Grant grant(int shuffleId, long mapId) throws IOException {
        Key k = new Key(shuffleId, mapId);
        synchronized (this) {
            if (closed) {
                throw new IOException("executor stopping: no READ grants");
            }
            Grant g = grants.get(k);
            if (g != null) {
                return g;
            }
        }
        BlockSource.MapOutputFile f = source.mapOutput(shuffleId, mapId);
        long length = f.offsets()[f.offsets().length - 1];
        if (length < 1 || length > Integer.MAX_VALUE) {
            throw new IOException("map output shuffle_" + shuffleId + "_" + mapId + " length=" + length
                + " is not granted for READ (1 byte to 2 GiB - 1): fetch its blocks by RPC");
        }
        Region r;
        try {
            r = node.registerFile(f.data(), 0, (int) length, "");
        } catch (UnsupportedOperationException | RdmxException | IllegalArgumentException e) {
            throw new IOException("map output shuffle_" + shuffleId + "_" + mapId + " (" + f.data()
                + ") cannot be granted for READ on " + node.fabric().name() + ": " + e.getMessage(), e);
        }
        synchronized (this) {
            Grant g = grants.get(k);
            if (closed || g != null) {
                r.release(); // closed meanwhile, or granted by another thread first
                if (g == null) {
                    throw new IOException("executor stopping: no READ grants");
                }
                return g;
            }
            g = new Grant(r, f.offsets());
            grants.put(k, g);
            return g;
        }
    }

    /**
     * Releases the regions of a shuffle (its files are deleted next).
     *
     * @param shuffleId the shuffle
     * @return regions released
     */
    synchronized int unregister(int shuffleId) {
        int n = 0;
        for (var it = grants.entrySet().iterator(); it.hasNext();) {
            var e = it.next();
            if (e.getKey().shuffleId() == shuffleId) {
                e.getValue().region().release();
                it.remove();
                n++;
            }
        }
        return n;
    }

    /** @return regions granted now */
    synchronized int granted() {
        return grants.size();
    }

    /** Releases every region, then closes the node. Idempotent. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            for (Grant g : grants.values()) {
                g.region().release();
            }
            grants.clear();
        }
        acceptor.interrupt();
        node.close();
        try {
            acceptor.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
