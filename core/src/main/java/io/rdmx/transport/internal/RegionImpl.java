package io.rdmx.transport.internal;

import io.rdmx.transport.Access;
import io.rdmx.transport.Connection;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Region;
import io.rdmx.transport.RemoteRegion;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.atomic.AtomicInteger;

/** A registered region: memory, keys and a reference count. */
public final class RegionImpl implements Region {
    private final AbstractNode node;
    private final ByteBuffer memory;
    private final long address;
    private final int localKey;
    private final int remoteKey;
    private final int access;
    private final AtomicInteger refCnt = new AtomicInteger(1);
    private final Throwable site;
    private final Runnable onDeregister;
    private final String name;
    private final long seq;
    /** The one connection whose peer may reach the region, or null: every peer (exported node-wide). */
    private final AbstractConnection grantee;
    /** The provider's bookkeeping of the memory (verbs: its registrations per protection domain), or null. */
    private final Object handle;

    RegionImpl(AbstractNode node, ByteBuffer memory, long address, int localKey, int remoteKey, int access,
               Runnable onDeregister, String name, long seq, AbstractConnection grantee, Object handle) {
        this.node = node;
        this.handle = handle;
        this.grantee = grantee;
        this.name = name;
        this.seq = seq;
        this.memory = memory.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        this.address = address;
        this.localKey = localKey;
        this.remoteKey = remoteKey;
        this.access = access;
        this.onDeregister = onDeregister;
        this.site = LeakDetector.paranoid() ? new Throwable("region registered") : null;
    }

    /** @return the node that registered the region */
    public AbstractNode node() {
        return node;
    }

    /**
     * The memory shared view: callers must not change its position or limit.
     *
     * @return the memory
     */
    public ByteBuffer memory() {
        return memory;
    }

    @Override
    public long address() {
        return address;
    }

    @Override
    public int length() {
        return memory.capacity();
    }

    @Override
    public int localKey() {
        return localKey;
    }

    @Override
    public int remoteKey() {
        return remoteKey;
    }

    @Override
    public int access() {
        return access;
    }

    @Override
    public ByteBuffer buffer() {
        return memory.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    }

    @Override
    public RemoteRegion descriptor() {
        return new RemoteRegion(address, length(), remoteKey, name);
    }

    @Override
    public RemoteRegion descriptor(Connection via) throws RdmxException {
        if (!(via instanceof AbstractConnection c) || c.node() != node) {
            throw new IllegalArgumentException("connection " + via + " is not a connection of node '" + node.name()
                + "'");
        }
        if ((access & (Access.REMOTE_WRITE | Access.REMOTE_READ)) == 0) {
            throw new IllegalArgumentException(this + " is neither remotely writable nor readable");
        }
        if (grantee != null && grantee != via) {
            throw new IllegalArgumentException(this + " is granted to another connection than the one to '"
                + via.peerName() + "'");
        }
        if (!live()) {
            throw new IllegalStateException(this + " is released");
        }
        return node.describe(this, c);
    }

    @Override
    public String name() {
        return name;
    }

    /** @return the provider's bookkeeping of the memory ({@link AbstractNode.Allocation#handle()}), or null */
    public Object handle() {
        return handle;
    }

    /**
     * @return the connection the region is granted to ({@link Connection#register}), or null if it is exported
     *     to every peer ({@link io.rdmx.transport.Node#register})
     */
    public AbstractConnection grantee() {
        return grantee;
    }

    /**
     * Whether a peer's request arriving on a connection may reach this region: it is remotely writable, live,
     * and exported node-wide or granted to that very connection.
     *
     * @param via the connection the request arrived on (this node's side)
     * @return true if allowed
     */
    public boolean reachableVia(Connection via) {
        return live() && (access & Access.REMOTE_WRITE) != 0 && (grantee == null || grantee == via);
    }

    /**
     * Whether a peer's READ arriving on a connection may read this region: remotely readable, live, and exported
     * node-wide or granted to that very connection.
     *
     * @param via the connection the request arrived on (this node's side)
     * @return true if allowed
     */
    public boolean readableVia(Connection via) {
        return live() && (access & Access.REMOTE_READ) != 0 && (grantee == null || grantee == via);
    }

    /** @return the registration order within the node */
    long seq() {
        return seq;
    }

    @Override
    public int refCnt() {
        return refCnt.get();
    }

    /** @return true while not released */
    public boolean live() {
        return refCnt.get() > 0;
    }

    @Override
    public Region retain() {
        while (true) {
            int c = refCnt.get();
            if (c <= 0) {
                throw new IllegalStateException("retain of released region rkey=0x" + Integer.toHexString(remoteKey));
            }
            if (refCnt.compareAndSet(c, c + 1)) {
                return this;
            }
        }
    }

    @Override
    public boolean release() {
        while (true) {
            int c = refCnt.get();
            if (c <= 0) {
                throw new IllegalStateException("release of released region rkey=0x"
                    + Integer.toHexString(remoteKey));
            }
            if (refCnt.compareAndSet(c, c - 1)) {
                if (c == 1) {
                    node.deregister(this);
                    onDeregister.run();
                    return true;
                }
                return false;
            }
        }
    }

    /** Releases every remaining reference, reporting a leak. Called when the node closes. */
    void forceRelease() {
        int c = refCnt.getAndSet(0);
        if (c > 0) {
            LeakDetector.report(this + " of node '" + node.name() + "' (refCnt=" + c + ")", site);
            node.deregister(this);
            onDeregister.run();
        }
    }

    /**
     * Checks that a local access lies inside the region.
     *
     * @param offset offset
     * @param length length
     */
    public void checkLocal(long offset, long length) {
        if (!live()) {
            throw new IllegalStateException("region rkey=0x" + Integer.toHexString(remoteKey) + " is released");
        }
        if (offset < 0 || length < 0 || length > length() || offset > length() - length) {
            throw new IllegalArgumentException("local access offset=" + offset + " length=" + length
                + " outside region length=" + length());
        }
    }

    @Override
    public String toString() {
        return "Region{rkey=0x" + Integer.toHexString(remoteKey) + ", length=" + length() + ", access=" + access
            + (grantee == null ? "" : ", grantedTo='" + grantee.peerName() + "'") + "}";
    }
}
