package io.rdmx.disni;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.Region;
import io.rdmx.transport.internal.RegionImpl;
import io.rdmx.transport.testsuite.RdmaReadSuite;

/** One-sided READ on disni ({@code IBV_WR_RDMA_READ} through DiSNI), on Soft-RoCE. */
class DisniReadTest extends RdmaReadSuite {
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
