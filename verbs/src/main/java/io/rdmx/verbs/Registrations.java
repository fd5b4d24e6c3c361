package io.rdmx.verbs;

import io.rdmx.transport.Access;
import io.rdmx.transport.RdmxException;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The registrations of one region's memory, one per protection domain it is used in. Every queue pair has a
 * protection domain of its own ({@link Endpoint}), and the NIC honours a key only on queue pairs of the domain it
 * was registered in: so a region is registered in a connection's domain when it is first used there, as the
 * source or target of a post (local access only), or described to that connection's peer (remote access, if the
 * region allows that peer: exported node-wide, or granted to that very connection). A key told to one peer is
 * thereby refused by the hardware on every other connection.
 *
 * <p>Lock order: an endpoint's lock, then this object's monitor. Every registration in an endpoint's domain is
 * made under that endpoint's lock while it is usable, so once it is destroyed none is added; it then drops its
 * own ({@link #drop}) before it deallocates its domain. Releasing the region deregisters all of them.
 */
final class Registrations {
    private final VerbsNode node;
    private final MemorySegment memory;
    private final int access;
    /** The endpoint the region is granted to, or null: exported node-wide (or local only). */
    private final Endpoint grantee;
    private final Map<Endpoint, MemorySegment> mrs = new HashMap<>();
    private boolean released;

    Registrations(VerbsNode node, MemorySegment memory, int access, Endpoint grantee) {
        this.node = node;
        this.memory = memory;
        this.access = access;
        this.grantee = grantee;
    }

    /**
     * The registration in an endpoint's protection domain, made if there is none. Caller holds {@code ep.lock}
     * and checked the endpoint is usable.
     *
     * @param ep the endpoint
     * @return the {@code struct ibv_mr}
     * @throws RdmxException if the registration fails
     * @throws IllegalStateException if the region was released
     */
    synchronized MemorySegment in(Endpoint ep) throws RdmxException {
        MemorySegment mr = mrs.get(ep);
        if (mr != null) {
            return mr;
        }
        if (released) {
            throw new IllegalStateException("verbs: region at " + Long.toHexString(memory.address())
                + " is released");
        }
        boolean remote = (access & Access.REMOTE_WRITE) != 0 && (grantee == null || grantee == ep);
        mr = node.register(ep.pd(), memory, remote ? Access.ALL : Access.LOCAL_WRITE);
        mrs.put(ep, mr);
        return mr;
    }

    /**
     * Deregisters the registration in a destroyed endpoint's domain, if any (the endpoint, before it deallocates
     * its domain).
     *
     * @param ep the endpoint
     */
    void drop(Endpoint ep) {
        MemorySegment mr;
        synchronized (this) {
            mr = mrs.remove(ep);
            if (mr != null) {
                node.deregister(mr);
            }
        }
    }

    /** Deregisters every registration (the region's release); any thread. */
    void release() {
        List<Endpoint> users;
        synchronized (this) {
            released = true;
            users = new ArrayList<>(mrs.keySet());
            for (MemorySegment mr : mrs.values()) {
                node.deregister(mr);
            }
            mrs.clear();
        }
        for (Endpoint ep : users) {
            ep.forget(this);
        }
    }

    /** @return how many protection domains the memory is registered in (tests) */
    synchronized int domains() {
        return mrs.size();
    }
}
