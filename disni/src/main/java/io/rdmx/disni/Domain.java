package io.rdmx.disni;

import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import io.rdmx.transport.RdmxException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One queue pair's own protection domain and the regions registered in it ({@link Registrations}): keys
 * registered here are honoured on that queue pair alone. Thread-safe (its monitor; before a region's).
 */
final class Domain {
    private final IbvPd pd;
    private final Map<Registrations, IbvMr> registered = new HashMap<>();
    private boolean destroyed;

    Domain(IbvPd pd) {
        this.pd = pd;
    }

    IbvPd pd() {
        return pd;
    }

    /**
     * A region's registration in this domain, made if there is none.
     *
     * @param regs the region's registrations
     * @return the registration
     * @throws RdmxException if the domain is destroyed (its connection is down) or the registration fails
     * @throws IllegalStateException if the region was released
     */
    synchronized IbvMr registrationOf(Registrations regs) throws RdmxException {
        if (destroyed) {
            throw new RdmxException("disni: the connection is closed");
        }
        IbvMr mr = registered.get(regs);
        if (mr == null) {
            mr = regs.in(this);
            registered.put(regs, mr);
        }
        return mr;
    }

    /**
     * A released region's registration here is gone ({@link Registrations#release}).
     *
     * @param regs the region's registrations
     */
    synchronized void forget(Registrations regs) {
        registered.remove(regs);
    }

    /**
     * Drops every registration in the domain, then deallocates it (after its queue pair and control region are
     * gone). Idempotent.
     *
     * @throws IOException if DiSNI fails to deallocate it
     */
    void destroy() throws IOException {
        List<Registrations> regs;
        synchronized (this) {
            if (destroyed) {
                return;
            }
            destroyed = true;
            regs = new ArrayList<>(registered.keySet()); // none is added once destroyed
            registered.clear();
        }
        for (Registrations r : regs) {
            r.drop(this);
        }
        try {
            pd.deallocPd();
        } catch (IOException e) {
            throw e;
        } catch (Exception e) { // DiSNI declares Exception
            throw new IOException("ibv_dealloc_pd failed: " + e.getMessage(), e);
        }
    }
}
