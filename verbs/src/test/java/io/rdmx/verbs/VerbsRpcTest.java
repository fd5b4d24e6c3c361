package io.rdmx.verbs;

import io.rdmx.rpc.RpcSuite;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.internal.RdmaDevices;
import io.rdmx.transport.testsuite.TwoLinks;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;

/**
 * Generic RPC, unchanged, on real verbs (Soft-RoCE: {@code scripts/softroce-test.sh} runs it between two links of
 * one host through another host, {@link TwoLinks}); skipped with the reason where no RDMA device is usable.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class VerbsRpcTest extends RpcSuite {
    @BeforeAll
    static void rdma() {
        RequiresRdma.assume();
    }

    @Override
    protected Fabric fabric() {
        return new VerbsFabric();
    }

    /** A crashed process's RDMA ids are destroyed by the kernel, which disconnects its peers: so does kill. */
    @Override
    protected void kill(Node node) {
        ((VerbsNode) node).kill();
    }

    /** With {@link TwoLinks} set, the servers' nodes on one link and the clients' on the other. */
    @Override
    protected NodeOptions.Builder options(String role) {
        return TwoLinks.bind(super.options(role), !"c".equals(role));
    }

    /**
     * A port free for TCP on the servers' address: rdma_cm's port space for its TCP-like ids is its own, so this
     * is a likely free port, not a held one, as for the tcp provider.
     */
    @Override
    protected String reserveAddress(NodeOptions.Builder options, Path scratch) throws Exception {
        String host = TwoLinks.address(true).orElse(null);
        if (host == null) { // the address a node opened without one binds to, picked as the node picks it
            host = RdmaDevices.select(null, System.getProperty(RdmaDevices.DEVICE_PROP), RdmaDevices.list())
                .getHostAddress();
        }
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName(host))) {
            port = s.getLocalPort();
        }
        String address = host + ":" + port;
        options.bindAddress(address);
        return address;
    }
}
