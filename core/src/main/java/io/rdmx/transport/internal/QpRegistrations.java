package io.rdmx.transport.internal;

import io.rdmx.transport.Access;
import io.rdmx.transport.RdmxException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The registrations of one region's memory on an RDMA provider, one per protection domain it is used in. Every
 * queue pair has a protection domain of its own ({@link RdmaCmFlow}), and the NIC honours a key only on queue pairs
 * of the domain it was registered in: so a region is registered in a connection's domain when it is first used
 * there, as the source or target of a post (local access only), or described to that connection's peer (remote
 * access, if the region allows that peer: exported node-wide, or granted to that very connection). A key told to one
 * peer is thereby refused by the hardware on every other connection.
 *
 * <p>Lock order: the domain's guard (its queue pair's lock, or its monitor), then this object's monitor. Every
 * registration in a domain is made under the domain's guard while it is live, so once it is torn down none is
 * added; it then drops its own ({@link #drop}) before it deallocates the domain. Releasing the region deregisters
 * all of them and tells each domain ({@link #forgotten}).
 *
 * @param <D> the provider's domain (what a queue pair's protection domain is known by)
 * @param <M> the provider's registration ({@code struct ibv_mr})
 */
public abstract class QpRegistrations<D, M> {
    private final int access;
    /** The domain the region is granted to, or null: exported node-wide (or local only). */
    private final D grantee;
    private final Map<D, M> mrs = new HashMap<>();
    private boolean released;

    /**
     * @param access the region's SPI access flags
     * @param grantee the domain of the one connection the region is granted to, or null
     */
    protected QpRegistrations(int access, D grantee) {
        this.access = access;
        this.grantee = grantee;
    }

    /**
     * Registers the memory in a domain.
     *
     * @param domain the domain
     * @param access {@link Access#LOCAL_WRITE} with the region's remote bits ({@link Access#REMOTE_WRITE},
     *     {@link Access#REMOTE_READ}) where the domain's peer may reach it, else {@link Access#LOCAL_WRITE} alone
     * @return the registration
     * @throws RdmxException naming the usual cause
     */
    protected abstract M register(D domain, int access) throws RdmxException;

    /** Deregisters one registration (logs a failure). */
    protected abstract void deregister(M mr);

    /** Tells a domain that the region's registration there is gone (the region was released). */
    protected abstract void forgotten(D domain);

    /** @return the region, as the error of a use after its release names it */
    protected abstract String describe();

    /**
     * The registration in a domain, made if there is none. Caller holds the domain's guard and checked it is live.
     *
     * @param domain the domain
     * @return the registration
     * @throws RdmxException if the registration fails
     * @throws IllegalStateException if the region was released
     */
    public final synchronized M in(D domain) throws RdmxException {
        M mr = mrs.get(domain);
        if (mr != null) {
            return mr;
        }
        if (released) {
            throw new IllegalStateException(describe() + " is released");
        }
        int remoteBits = access & (Access.REMOTE_WRITE | Access.REMOTE_READ);
        boolean remote = remoteBits != 0 && (grantee == null || grantee == domain);
        mr = register(domain, remote ? Access.LOCAL_WRITE | remoteBits : Access.LOCAL_WRITE);
        mrs.put(domain, mr);
        return mr;
    }

    /**
     * Deregisters the registration in a torn-down domain, if any (before the domain is deallocated).
     *
     * @param domain the domain
     */
    public final synchronized void drop(D domain) {
        M mr = mrs.remove(domain);
        if (mr != null) {
            deregister(mr);
        }
    }

    /** Deregisters every registration (the region's release); any thread. */
    public final void release() {
        List<D> users;
        synchronized (this) {
            released = true;
            users = new ArrayList<>(mrs.keySet());
            for (M mr : mrs.values()) {
                deregister(mr);
            }
            mrs.clear();
        }
        for (D d : users) {
            forgotten(d);
        }
    }

    /** @return how many protection domains the memory is registered in (tests) */
    public final synchronized int domains() {
        return mrs.size();
    }
}
