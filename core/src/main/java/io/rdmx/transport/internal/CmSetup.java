package io.rdmx.transport.internal;

import java.util.concurrent.CompletableFuture;

/**
 * One queue pair's rdma_cm setup as the RDMA providers share it ({@link RdmaCmFlow}): which side it is, whom it
 * dialed, the caller's future and deadline, the handshake's state under a cluster secret, and the connection once
 * the handshake made one. The provider's subclass holds the queue pair, its protection domain and its control
 * region.
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
}
