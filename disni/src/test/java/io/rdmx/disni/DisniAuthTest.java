package io.rdmx.disni;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.testsuite.RdmaAuthSuite;

/** The cluster secret on disni: rdma_cm peers without it are refused before they learn a key (Soft-RoCE). */
class DisniAuthTest extends RdmaAuthSuite {
    @Override
    protected Fabric fabric() {
        return new DisniFabric();
    }

    @Override
    protected void assumeUsable() {
        RequiresDisni.assume();
    }
}
