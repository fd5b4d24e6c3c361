package io.rdmx.verbs;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.Region;
import io.rdmx.transport.internal.RegionImpl;
import io.rdmx.transport.testsuite.RdmaReadSuite;

/** One-sided READ on verbs ({@code IBV_WR_RDMA_READ} through FFM), on Soft-RoCE. */
class VerbsReadTest extends RdmaReadSuite {
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
