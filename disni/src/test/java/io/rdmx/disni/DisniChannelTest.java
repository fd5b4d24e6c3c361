package io.rdmx.disni;

import io.rdmx.channel.ChannelSuite;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;

/**
 * The ring-channel suite, unchanged, on DiSNI (as {@code verbs} runs it): where libdisni loads and an RDMA device
 * is usable ({@code scripts/softroce-test.sh} with {@code RDMX_SOFTROCE_LIBDISNI}); skipped elsewhere with the
 * reason printed.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class DisniChannelTest extends ChannelSuite {
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
}
