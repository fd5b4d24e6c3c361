package io.rdmx.verbs;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.testsuite.RdmaAuthSuite;

/** The cluster secret on verbs: rdma_cm peers without it are refused before they learn a key (Soft-RoCE). */
class VerbsAuthTest extends RdmaAuthSuite {
    @Override
    protected Fabric fabric() {
        return new VerbsFabric();
    }

    @Override
    protected void assumeUsable() {
        RequiresRdma.assume();
    }
}
