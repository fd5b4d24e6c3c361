package io.rdmx.disni;

import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.RdmaCmId;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.internal.CmSetup;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * A queue pair from rdma_cm's first event until it is torn down ({@link DisniCmFlow}): its rdma_cm id, its own
 * protection domain, the queue pair on the node's shared CQ, and its control region ({@link DisniNode}'s diagram).
 */
final class DisniSetup extends CmSetup<DisniConnection> {
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

    DisniSetup(RdmaCmId id, boolean active, String dialAddress, CompletableFuture<AbstractConnection> future,
               long deadlineNanos) {
        super(active, dialAddress, future, deadlineNanos);
        this.id = id;
    }
}
