package io.rdmx.transport.internal;

import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RemoteRegion;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * One queue pair's rdma_cm setup as the RDMA providers share it ({@link RdmaCmFlow}): which side it is, whom it
 * dialed, the caller's future and deadline, the handshake's state under a cluster secret, and the connection once
 * the handshake made one. The provider's subclass holds the queue pair, its protection domain and its control
 * region, and makes the calls on them that the flow asks for (the methods below; the calls on the rdma_cm id are the
 * flow's own hooks).
 *
 * @param <C> the provider's connection
 */
public abstract class CmSetup<C extends AbstractConnection> {
    /** Whether this side dialed (rdma_connect) rather than accepted. */
    public final boolean active;
    /** The address dialed (active side), null on the passive side. */
    public final String dialAddress;
    /** The caller's connect (active side), null on the passive side. */
    public final CompletableFuture<AbstractConnection> future;
    /** When the setup must be done ({@code System.nanoTime()}): the connect timeout, or the peer timeout. */
    public final long deadlineNanos;
    /** Under a secret: this side's nonce (the thread handling the setup's messages). */
    byte[] nonce;
    /** Passive side under a secret: the peer's HELLO, once our CHALLENGE answered it. */
    SetupMessage hello;
    /** Active side under a secret: the peer proved itself and we sent our PROVE. */
    boolean proved;
    private volatile C conn;
    private boolean tornDown;

    protected CmSetup(boolean active, String dialAddress, CompletableFuture<AbstractConnection> future,
                      long deadlineNanos) {
        this.active = active;
        this.dialAddress = dialAddress;
        this.future = future;
        this.deadlineNanos = deadlineNanos;
    }

    /** @return the connection the handshake made, or null while it runs (or if it failed) */
    public final C connection() {
        return conn;
    }

    final void attach(C c) {
        conn = c;
    }

    /** @return the peer as an error message names it */
    public String peerLabel() {
        C c = conn;
        return c != null ? "peer '" + c.peerName() + "' (" + c.peerAddress() + ")"
            : active ? "address=" + dialAddress : "an incoming peer";
    }

    /**
     * Marks the setup torn down; the first call returns true, and the teardown runs then ({@link RdmaCmFlow#destroy}).
     * A provider whose posting threads check the queue pair under a lock of its own overrides it to mark it there.
     *
     * @return whether this call is the first
     */
    protected boolean beginTeardown() {
        synchronized (this) {
            if (tornDown) {
                return false;
            }
            tornDown = true;
            return true;
        }
    }

    // ------------------------------------------------------------------ the provider's calls on the queue pair

    /** The queue pair is in RTS: after rdma_accept (passive), at ESTABLISHED (active). */
    protected void readyToSend() {
    }

    /** What the queue pair needs of the node's completion queues (a CQ of its own, or room in a shared one). */
    protected abstract void prepareQueues() throws Throwable;

    /** The queue pair's own protection domain. */
    protected abstract void allocateDomain() throws Throwable;

    /** The RC queue pair on the setup's rdma_cm id, in its domain. */
    protected abstract void createQp() throws Throwable;

    /** The control region, registered in the queue pair's domain with remote WRITE (the keep-alive target). */
    protected abstract void registerControl() throws Throwable;

    /**
     * Posts the receive of the next setup message into the control region's receive half. Under a secret each side
     * has one more message to receive; it posts its receive once it decoded the last one and before it answers it,
     * so the next never finds none (and, without a secret, no setup receive is left for a user's SEND).
     *
     * @throws RdmxException if the post fails or the queue pair is closed
     */
    protected abstract void postSetupReceive() throws RdmxException;

    /** @return where the next setup message is encoded: the control region's send half, from its start */
    protected abstract ByteBuffer setupSendArea();

    /** Posts (signaled SEND) the setup message just encoded in {@link #setupSendArea}. */
    protected abstract void postSetupSend(int length) throws RdmxException;

    /** @return where the peer WRITEs its keep-alive probes: the end of the control region */
    protected abstract RemoteRegion probeTarget();

    /** Drives the connection's keep-alive ({@link KeepAlive}); the rdma_cm thread, once connected. */
    protected abstract void keepAlive(long now);

    /** Delivers the completions the peer caused before it disconnected (before its connection fails). */
    protected void deliverPending() {
    }

    /** Disconnects and tears down a setup the handshake ended without a connection (refused, a duplicate). */
    protected abstract void close();

    /** Destroys the queue pair (and the CQ it alone used), if made. */
    protected abstract void destroyQueuePair() throws Throwable;

    /** Deregisters the control region, if registered. */
    protected abstract void deregisterControl() throws Throwable;

    /** Deregisters the regions registered in the queue pair's domain, then deallocates it, if allocated. */
    protected abstract void destroyDomain() throws Throwable;

    /** Destroys the rdma_cm id; after it nothing of the setup is left but its memory. */
    protected abstract void destroyId() throws Throwable;

    /** After the teardown, whether or not a step of it failed: the setup's memory may go. */
    protected void tornDown() {
    }
}
