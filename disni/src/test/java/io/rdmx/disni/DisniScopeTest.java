package io.rdmx.disni;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.Region;
import io.rdmx.transport.internal.RegionImpl;
import io.rdmx.transport.testsuite.RdmaScopeSuite;

/** Keys confined in hardware on disni (a protection domain per queue pair), on Soft-RoCE. */
class DisniScopeTest extends RdmaScopeSuite {
    @Override
    protected Fabric fabric() {
        return new DisniFabric();
    }

    @Override
    protected void assumeUsable() {
        RequiresDisni.assume();
    }

    @Override
    protected int domains(Region r) {
        return ((Registrations) ((RegionImpl) r).handle()).domains();
    }
}
