package io.rdmx.verbs;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import io.rdmx.transport.RdmxException;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * One queue pair's own protection domain ({@link Endpoint}) and the regions registered in it: keys registered here
 * are honoured on that queue pair alone. Guarded by the endpoint's lock (but {@link #forget}, any thread); a
 * region's registration here is made by {@link Registrations#in}, under that lock, while the endpoint is usable.
 */
@SuppressWarnings("restricted")
final class EndpointDomain {
    private MemorySegment pd = MemorySegment.NULL;
    /** The regions registered in {@link #pd}, with their registration. */
    private final Map<Registrations, MemorySegment> registered = new HashMap<>();
    /** Released regions whose registration here is gone: dropped from {@link #registered} under the lock. */
    private final ConcurrentLinkedQueue<Registrations> forgotten = new ConcurrentLinkedQueue<>();
    /** The last region posted from, and its local key in {@link #pd}. */
    private Registrations lastPosted;
    private int lastLkey;
    /** The registrations to drop at the teardown ({@link #close}). */
    private List<Registrations> dropping = List.of();

    /** @param pd the {@code struct ibv_pd} allocated for the queue pair */
    void allocated(MemorySegment pd) {
        this.pd = pd;
    }

    MemorySegment pd() {
        return pd;
    }

    /**
     * A region's registration in this domain, made if there is none. Under the endpoint's lock, the endpoint usable.
     *
     * @param regs the region's registrations
     * @param ep the endpoint
     * @return the {@code struct ibv_mr}
     * @throws RdmxException if the registration fails
     * @throws IllegalStateException if the region was released
     */
    MemorySegment registrationOf(Registrations regs, Endpoint ep) throws RdmxException {
        for (Registrations r; (r = forgotten.poll()) != null; ) {
            registered.remove(r);
            if (lastPosted == r) {
                lastPosted = null;
            }
        }
        MemorySegment mr = registered.get(regs);
        if (mr == null) {
            mr = regs.in(ep);
            registered.put(regs, mr);
        }
        return mr;
    }

    /** The local key of a region posted on the queue pair (the last one's is kept). Under the endpoint's lock. */
    int localKeyOf(Registrations regs, Endpoint ep) throws RdmxException {
        if (regs == lastPosted) {
            return lastLkey;
        }
        lastLkey = registrationOf(regs, ep).get(JAVA_INT, Native.IbvMr.LKEY);
        lastPosted = regs;
        return lastLkey;
    }

    /** A released region's registration here is gone; any thread. */
    void forget(Registrations regs) {
        forgotten.add(regs);
    }

    /** No registration is added from here on (the endpoint is unusable): the ones made are dropped by destroy. */
    void close() {
        dropping = new ArrayList<>(registered.keySet());
        registered.clear();
        lastPosted = null;
    }

    /**
     * Deregisters the regions' registrations in this domain, then deallocates it (after the queue pair and the
     * control region are gone).
     *
     * @param ep the endpoint, torn down
     * @throws Throwable if the call to ibv_dealloc_pd does
     */
    void destroy(Endpoint ep) throws Throwable {
        for (Registrations r : dropping) {
            r.drop(ep);
        }
        dropping = List.of();
        if (!pd.equals(MemorySegment.NULL)) {
            int rc = (int) Lib.DEALLOC_PD.invoke(Lib.state(), pd);
            if (rc != 0) {
                ep.node.log().warn("verbs: ibv_dealloc_pd for {} failed: {}", ep.peerLabel(), rc);
            }
        }
    }
}
