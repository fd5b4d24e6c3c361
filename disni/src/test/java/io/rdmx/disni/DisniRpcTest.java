package io.rdmx.disni;

import io.rdmx.rpc.RpcSuite;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;

/**
 * Generic RPC, unchanged, on DiSNI: where libdisni loads and an RDMA device is usable ({@code
 * scripts/softroce-test.sh} with {@code RDMX_SOFTROCE_LIBDISNI}); skipped elsewhere with the reason printed.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class DisniRpcTest extends RpcSuite {
    @BeforeAll
    static void disni() {
        RequiresDisni.assume();
    }

    @Override
    protected Fabric fabric() {
        return new DisniFabric();
    }

    @Override
    protected void kill(Node node) {
        node.close();
    }

    /** A disni node listens on a port rdma_cm chooses: a node opened later cannot be given an address first. */
    @Override
    protected String reserveAddress(NodeOptions.Builder options, Path scratch) {
        Assumptions.abort("disni: a node listens on the port rdma_cm chooses, so no address can be reserved for a"
            + " node opened later");
        return null;
    }

    /** DiSNI builds its work requests as Java objects on the posting thread. */
    @Override
    protected boolean writePathAllocates() {
        return true;
    }
}
