package io.rdmx.disni;

import com.ibm.disni.verbs.IbvMr;
import io.rdmx.transport.Access;
import io.rdmx.transport.RdmxException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The registrations of one region's memory, one per protection domain it is used in, as on {@code verbs}: every
 * queue pair has a protection domain of its own ({@link Domain}), and the NIC honours a key only on queue pairs of
 * the domain it was registered in. A region is registered in a connection's domain when first used there (local
 * access only) or described to that connection's peer (remote access, if the region allows that peer: exported
 * node-wide, or granted to that very connection). A key told to one peer is thereby refused by the hardware on every
 * other connection.
 *
 * <p>Lock order: a domain's monitor, then this object's monitor.
 */
final class Registrations {
    private final DisniNode node;
    private final ByteBuffer memory;
    private final int access;
    /** The domain of the connection the region is granted to, or null: exported node-wide (or local only). */
    private final Domain grantee;
    private final Map<Domain, IbvMr> mrs = new HashMap<>();
    private boolean released;

    Registrations(DisniNode node, ByteBuffer memory, int access, Domain grantee) {
        this.node = node;
        this.memory = memory;
        this.access = access;
        this.grantee = grantee;
    }

    /**
     * The registration in a domain, made if there is none. Caller holds the domain's monitor and checked that it is
     * not destroyed.
     *
     * @param d the domain
     * @return the registration
     * @throws RdmxException if the registration fails
     * @throws IllegalStateException if the region was released
     */
    synchronized IbvMr in(Domain d) throws RdmxException {
        IbvMr mr = mrs.get(d);
        if (mr != null) {
            return mr;
        }
        if (released) {
            throw new IllegalStateException("disni: region of " + memory.capacity() + " bytes is released");
        }
        boolean remote = (access & Access.REMOTE_WRITE) != 0 && (grantee == null || grantee == d);
        mr = node.register(d.pd(), memory, remote ? Access.ALL : Access.LOCAL_WRITE);
        mrs.put(d, mr);
        return mr;
    }

    /**
     * Deregisters the registration in a destroyed domain, if any (before the domain is deallocated).
     *
     * @param d the domain
     */
    synchronized void drop(Domain d) {
        IbvMr mr = mrs.remove(d);
        if (mr != null) {
            node.deregister(mr);
        }
    }

    /** Deregisters every registration (the region's release); any thread. */
    void release() {
        List<Domain> users;
        synchronized (this) {
            released = true;
            users = new ArrayList<>(mrs.keySet());
            for (IbvMr mr : mrs.values()) {
                node.deregister(mr);
            }
            mrs.clear();
        }
        for (Domain d : users) {
            d.forget(this);
        }
    }

    /** @return how many protection domains the memory is registered in (tests) */
    synchronized int domains() {
        return mrs.size();
    }
}
