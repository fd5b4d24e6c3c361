package io.rdmx.verbs;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.Region;
import io.rdmx.transport.internal.RegionImpl;
import io.rdmx.transport.testsuite.RdmaScopeSuite;

/** Keys confined in hardware on verbs (a protection domain per queue pair), on Soft-RoCE. */
class VerbsScopeTest extends RdmaScopeSuite {
    @Override
    protected Fabric fabric() {
        return new VerbsFabric();
    }

    @Override
    protected void assumeUsable() {
        RequiresRdma.assume();
    }

    @Override
    protected int domains(Region r) {
        return ((Registrations) ((RegionImpl) r).handle()).domains();
    }
}
