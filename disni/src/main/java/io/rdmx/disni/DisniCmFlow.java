package io.rdmx.disni;

import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaConnParam;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.internal.RdmaCmFlow;
import io.rdmx.transport.internal.RegionImpl;
import io.rdmx.transport.internal.SetupMessage;
import java.io.IOException;

/** The shared rdma_cm setup flow ({@link RdmaCmFlow}) on DiSNI. */
final class DisniCmFlow extends RdmaCmFlow<DisniSetup, DisniConnection> {
    private final DisniNode node;

    DisniCmFlow(DisniNode node) {
        super(node, "disni", DisniNode.LOG);
        this.node = node;
    }

    @Override
    protected Iterable<DisniSetup> setups() {
        return node.setups();
    }

    @Override
    protected String eventName(int type) {
        RdmaCmEvent.EventType[] types = RdmaCmEvent.EventType.values();
        return type >= 0 && type < types.length ? types[type].name() : "rdma_cm event " + type;
    }

    /**
     * rdma_cm's connection parameters: retries only. DiSNI 2.1 refuses to set the RDMA READ depths (its setters
     * throw "Operation currently not supported"): libdisni sets both to the device's {@code max_qp_rd_atom}.
     */
    static RdmaConnParam connParam() throws IOException {
        RdmaConnParam p = new RdmaConnParam();
        p.setRetry_count((byte) 7);
        p.setRnr_retry_count((byte) 7);
        return p;
    }

    @Override
    protected void resolveRoute(DisniSetup s, int timeoutMs) throws IOException {
        s.id.resolveRoute(timeoutMs);
    }

    @Override
    protected void connect(DisniSetup s) throws IOException {
        s.id.connect(connParam());
    }

    @Override
    protected void accept(DisniSetup s) throws IOException {
        s.id.accept(connParam());
    }

    @Override
    protected void reject(DisniSetup s) {
        // DiSNI has no rdma_reject: destroying the id refuses the request
    }

    @Override
    protected int remoteKeyOf(DisniSetup s, RegionImpl region) throws RdmxException {
        IbvMr mr = s.domain.registrationOf((Registrations) region.handle());
        return mr.getRkey();
    }

    @Override
    protected DisniConnection newConnection(DisniSetup s, SetupMessage m, String peerAddress) {
        return new DisniConnection(node, m.name, peerAddress, m.regions, s.id, s.qp, s.domain, s.probeSource(),
            s.ctrlMr.getLkey(), m.probe);
    }

    @Override
    protected void forget(DisniSetup s) {
        node.forget(s);
    }

}
