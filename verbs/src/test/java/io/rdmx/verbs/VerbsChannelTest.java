package io.rdmx.verbs;

import io.rdmx.channel.ChannelSuite;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;

/** The ring-channel suite on real verbs (Soft-RoCE in CI); skipped with the reason where no device is usable. */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class VerbsChannelTest extends ChannelSuite {
    @BeforeAll
    static void rdma() {
        RequiresRdma.assume();
    }

    @Override
    protected Fabric fabric() {
        return new VerbsFabric();
    }

    @Override
    protected void kill(Node node) {
        ((VerbsNode) node).kill();
    }
}
