package io.rdmx.disni;

import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.RdmaCmId;
import io.rdmx.transport.Access;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.internal.CmSetup;
import io.rdmx.transport.internal.KeepAlive;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.LinkedList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A queue pair from rdma_cm's first event until it is torn down ({@link DisniCmFlow}): its rdma_cm id, its own
 * protection domain, the queue pair on the node's shared CQ, and its control region ({@link DisniNode}'s diagram).
 */
final class DisniSetup extends CmSetup<DisniConnection> {
    private final DisniNode node;
    final RdmaCmId id;
    /** Whether entries of the node's shared CQ are reserved for this queue pair. */
    boolean reserved;
    IbvQP qp;
    /** The queue pair's number (completions are routed by it), once {@link #qp} is made. */
    int qpNum;
    /** The queue pair's own protection domain. */
    Domain domain;
    ByteBuffer ctrl;
    IbvMr ctrlMr;

    DisniSetup(DisniNode node, RdmaCmId id, boolean active, String dialAddress,
               CompletableFuture<AbstractConnection> future, long deadlineNanos) {
        super(active, dialAddress, future, deadlineNanos);
        this.node = node;
        this.id = id;
    }

    @Override
    protected void prepareQueues() throws RdmxException {
        node.reserveCq();
        reserved = true;
    }

    @Override
    protected void allocateDomain() throws IOException {
        domain = new Domain(node.context().allocPd());
    }

    @Override
    protected void createQp() throws IOException {
        IbvQPInitAttr attr = new IbvQPInitAttr();
        attr.cap().setMax_send_wr(node.options().sendQueueDepth() + 4);
        attr.cap().setMax_recv_wr(node.options().recvQueueDepth() + 2);
        attr.cap().setMax_send_sge(1);
        attr.cap().setMax_recv_sge(1);
        attr.setQp_type(IbvQP.IBV_QPT_RC);
        attr.setSend_cq(node.cq());
        attr.setRecv_cq(node.cq());
        IbvQP created = id.createQP(domain.pd(), attr);
        qpNum = created.getQp_num();
        qp = created;
        node.qpCreated(this);
    }

    @Override
    protected void registerControl() throws RdmxException {
        ctrl = ByteBuffer.allocateDirect(2 * DisniNode.CTRL);
        // remote WRITE: the peer's keep-alive probes land at the end of the region
        ctrlMr = node.register(domain.pd(), ctrl, Access.ALL);
    }

    @Override
    protected void postSetupReceive() throws RdmxException {
        try {
            DisniNode.postRecv(qp, DisniNode.CTRL_RECV, ctrlMr.getAddr(), DisniNode.CTRL, ctrlMr.getLkey());
        } catch (IOException e) {
            throw new RdmxException("disni: posting the setup receive for " + peerLabel() + " failed: "
                + e.getMessage(), e);
        }
    }

    @Override
    protected ByteBuffer setupSendArea() {
        return ctrl.duplicate().limit(2 * DisniNode.CTRL - KeepAlive.TARGET_BYTES).position(DisniNode.CTRL)
            .slice();
    }

    @Override
    protected void postSetupSend(int length) throws RdmxException {
        IbvSendWR wr = new IbvSendWR();
        wr.setWr_id(DisniNode.CTRL_SEND);
        wr.setOpcode(IbvSendWR.IBV_WR_SEND);
        wr.setSend_flags(IbvSendWR.IBV_SEND_SIGNALED);
        IbvSge sge = new IbvSge();
        sge.setAddr(ctrlMr.getAddr() + DisniNode.CTRL);
        sge.setLength(length);
        sge.setLkey(ctrlMr.getLkey());
        LinkedList<IbvSge> sges = new LinkedList<>();
        sges.add(sge);
        wr.setSg_list(sges);
        wr.setNum_sge(1);
        try {
            qp.postSend(List.of(wr), null).execute().free();
        } catch (IOException e) {
            throw new RdmxException("disni: posting the setup message to " + peerLabel() + " failed: "
                + e.getMessage(), e);
        }
    }

    @Override
    protected RemoteRegion probeTarget() {
        return new RemoteRegion(probeSource(), KeepAlive.TARGET_BYTES, ctrlMr.getRkey());
    }

    @Override
    protected void keepAlive(long now) {
        connection().keepAlive(now);
    }

    @Override
    protected void close() {
        node.flow().destroy(this);
    }

    @Override
    protected void destroyQueuePair() throws IOException {
        if (qp != null) {
            id.destroyQP();
        }
        if (reserved) {
            node.releaseCq();
        }
    }

    @Override
    protected void deregisterControl() {
        if (ctrlMr != null) {
            node.deregister(ctrlMr);
        }
    }

    @Override
    protected void destroyDomain() throws IOException {
        if (domain != null) {
            domain.destroy(); // its registrations, then the domain
        }
    }

    @Override
    protected void destroyId() throws IOException {
        id.destroyId();
    }

    /** @return the address of the end of this setup's control region, also the source of its own probes */
    long probeSource() {
        return ctrlMr.getAddr() + 2L * DisniNode.CTRL - KeepAlive.TARGET_BYTES;
    }

    /** What completed before the peer disconnected is delivered, in order, before the connection's flush. */
    @Override
    protected void deliverPending() {
        try {
            node.drainCq();
        } catch (java.io.IOException e) {
            DisniNode.LOG.debug("disni: polling the CQ before a disconnect", e);
        }
    }
}
