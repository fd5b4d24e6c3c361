package io.rdmx.disni;

import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaConnParam;
import io.rdmx.transport.Access;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.internal.KeepAlive;
import io.rdmx.transport.internal.RdmaCmFlow;
import io.rdmx.transport.internal.RegionImpl;
import io.rdmx.transport.internal.SetupMessage;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.LinkedList;
import java.util.List;

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
    protected void prepareQueues(DisniSetup s) throws RdmxException {
        node.reserveCq();
        s.reserved = true;
    }

    @Override
    protected void allocateDomain(DisniSetup s) throws IOException {
        s.domain = new Domain(node.context().allocPd());
    }

    @Override
    protected void createQp(DisniSetup s) throws IOException {
        IbvQPInitAttr attr = new IbvQPInitAttr();
        attr.cap().setMax_send_wr(node.options().sendQueueDepth() + 4);
        attr.cap().setMax_recv_wr(node.options().recvQueueDepth() + 2);
        attr.cap().setMax_send_sge(1);
        attr.cap().setMax_recv_sge(1);
        attr.setQp_type(IbvQP.IBV_QPT_RC);
        attr.setSend_cq(node.cq());
        attr.setRecv_cq(node.cq());
        IbvQP qp = s.id.createQP(s.domain.pd(), attr);
        s.qpNum = qp.getQp_num();
        s.qp = qp;
        node.qpCreated(s);
    }

    @Override
    protected void registerControl(DisniSetup s) throws RdmxException {
        s.ctrl = ByteBuffer.allocateDirect(2 * DisniNode.CTRL);
        // remote WRITE: the peer's keep-alive probes land at the end of the region
        s.ctrlMr = node.register(s.domain.pd(), s.ctrl, Access.ALL);
    }

    @Override
    protected void postSetupReceive(DisniSetup s) throws RdmxException {
        try {
            DisniNode.postRecv(s.qp, DisniNode.CTRL_RECV, s.ctrlMr.getAddr(), DisniNode.CTRL, s.ctrlMr.getLkey());
        } catch (IOException e) {
            throw new RdmxException("disni: posting the setup receive for " + s.peerLabel() + " failed: "
                + e.getMessage(), e);
        }
    }

    @Override
    protected ByteBuffer setupSendArea(DisniSetup s) {
        return s.ctrl.duplicate().limit(2 * DisniNode.CTRL - KeepAlive.TARGET_BYTES).position(DisniNode.CTRL).slice();
    }

    @Override
    protected void postSetupSend(DisniSetup s, int length) throws RdmxException {
        IbvSendWR wr = new IbvSendWR();
        wr.setWr_id(DisniNode.CTRL_SEND);
        wr.setOpcode(IbvSendWR.IBV_WR_SEND);
        wr.setSend_flags(IbvSendWR.IBV_SEND_SIGNALED);
        IbvSge sge = new IbvSge();
        sge.setAddr(s.ctrlMr.getAddr() + DisniNode.CTRL);
        sge.setLength(length);
        sge.setLkey(s.ctrlMr.getLkey());
        LinkedList<IbvSge> sges = new LinkedList<>();
        sges.add(sge);
        wr.setSg_list(sges);
        wr.setNum_sge(1);
        try {
            s.qp.postSend(List.of(wr), null).execute().free();
        } catch (IOException e) {
            throw new RdmxException("disni: posting the setup message to " + s.peerLabel() + " failed: "
                + e.getMessage(), e);
        }
    }

    @Override
    protected RemoteRegion probeTarget(DisniSetup s) {
        return new RemoteRegion(probeSource(s), KeepAlive.TARGET_BYTES, s.ctrlMr.getRkey());
    }

    /** @return the address of the end of {@code s}'s control region, also the source of its own probes */
    private static long probeSource(DisniSetup s) {
        return s.ctrlMr.getAddr() + 2L * DisniNode.CTRL - KeepAlive.TARGET_BYTES;
    }

    @Override
    protected int remoteKeyOf(DisniSetup s, RegionImpl region) throws RdmxException {
        IbvMr mr = s.domain.registrationOf((Registrations) region.handle());
        return mr.getRkey();
    }

    @Override
    protected DisniConnection newConnection(DisniSetup s, SetupMessage m, String peerAddress) {
        return new DisniConnection(node, m.name, peerAddress, m.regions, s.id, s.qp, s.domain, probeSource(s),
            s.ctrlMr.getLkey(), m.probe);
    }

    @Override
    protected void keepAlive(DisniSetup s, long now) {
        s.connection().keepAlive(now);
    }

    @Override
    protected void close(DisniSetup s) {
        destroy(s);
    }

    @Override
    protected void forget(DisniSetup s) {
        node.forget(s);
    }

    @Override
    protected void destroyQueuePair(DisniSetup s) throws IOException {
        if (s.qp != null) {
            s.id.destroyQP();
        }
        if (s.reserved) {
            node.releaseCq();
        }
    }

    @Override
    protected void deregisterControl(DisniSetup s) {
        if (s.ctrlMr != null) {
            node.deregister(s.ctrlMr);
        }
    }

    @Override
    protected void destroyDomain(DisniSetup s) throws IOException {
        if (s.domain != null) {
            s.domain.destroy(); // its registrations, then the domain
        }
    }

    @Override
    protected void destroyId(DisniSetup s) throws IOException {
        s.id.destroyId();
    }
}
