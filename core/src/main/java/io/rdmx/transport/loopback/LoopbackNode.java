package io.rdmx.transport.loopback;

import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.PeerNotListeningException;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.internal.AbstractNode;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/** A node of the loopback provider. */
public final class LoopbackNode extends AbstractNode {
    private final String address;
    private final LoopbackFaults faults = new LoopbackFaults(this);
    private volatile ScheduledExecutorService delayer;

    LoopbackNode(LoopbackFabric fabric, NodeOptions options) {
        super(fabric, options);
        this.address = LoopbackFabric.SCHEME + options.name();
    }

    /** @return this node's fault injection */
    public LoopbackFaults faults() {
        return faults;
    }

    @Override
    public String address() {
        return address;
    }

    @Override
    protected Allocation allocate(int length, int access, int remoteKey) {
        return new Allocation(ByteBuffer.allocateDirect(length), () -> { });
    }

    @Override
    public AbstractConnection connect(String peerAddress, Duration timeout) throws RdmxException {
        checkOpen();
        synchronized (LoopbackFabric.class) {
            AbstractConnection existing = connectionAt(peerAddress);
            if (existing != null) {
                return existing;
            }
            LoopbackNode target = (LoopbackNode) LoopbackFabric.lookup(peerAddress);
            if (target == null || !target.isOpen()) {
                throw new PeerNotListeningException("connect from '" + name() + "' to address=" + peerAddress
                    + " failed: no loopback node listens there");
            }
            if (target == this) {
                throw new RdmxException("node '" + name() + "' cannot connect to itself");
            }
            LoopbackConnection mine = new LoopbackConnection(this, target.name(), target.address(),
                target.exportedRegions());
            LoopbackConnection theirs = new LoopbackConnection(target, name(), address, exportedRegions());
            mine.peer = theirs;
            theirs.peer = mine;
            // one process: both addresses are the nodes' own, from the fabric's table, not claims
            mine.trustAddress();
            theirs.trustAddress();
            if (!target.addConnection(theirs)) {
                throw new RdmxException("connect from '" + name() + "' to '" + target.name()
                    + "' refused: the peer already has a connection to a node named '" + name() + "'");
            }
            if (!target.offerAccepted(theirs)) {
                theirs.fail(new RdmxException("accept backlog full"));
                throw new RdmxException("connect from '" + name() + "' to '" + target.name()
                    + "' refused: accept backlog full (acceptBacklog=" + target.options().acceptBacklog() + ")");
            }
            addConnection(mine);
            if (!mine.isOpen()) { // the target closed as we connected (its close closed theirs, and so mine)
                throw new ConnectionClosedException(target.name(), "connect from '" + name() + "' to '"
                    + target.name() + "' failed: the peer closed", mine.closeCause());
            }
            return mine;
        }
    }

    LoopbackConnection liveConnection(String peerName) {
        return (LoopbackConnection) connectionTo(peerName);
    }

    ScheduledExecutorService delayer() {
        ScheduledExecutorService d = delayer;
        if (d == null) {
            synchronized (this) {
                d = delayer;
                if (d == null) {
                    d = Executors.newSingleThreadScheduledExecutor(r -> {
                        Thread t = new Thread(r, "rdmx-loopback-delay-" + name());
                        t.setDaemon(true);
                        return t;
                    });
                    delayer = d;
                }
            }
        }
        return d;
    }

    void kill() {
        LoopbackFabric.NODES.remove(address, this);
        for (var c : connections()) {
            ((LoopbackConnection) c).fail(new ConnectionClosedException(c.peerName(), "node '" + name()
                + "' died (injected fault)", null));
        }
        close();
    }

    @Override
    protected void closeTransport() {
        LoopbackFabric.NODES.remove(address, this);
        ScheduledExecutorService d = delayer;
        if (d != null) {
            d.shutdown();
        }
    }
}
