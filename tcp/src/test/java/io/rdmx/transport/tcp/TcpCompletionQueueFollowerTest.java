package io.rdmx.transport.tcp;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.testsuite.CompletionQueueFollowerSuite;

/** The completion queue's leader/follower input on tcp's selector engine. */
class TcpCompletionQueueFollowerTest extends CompletionQueueFollowerSuite {
    @Override
    protected Fabric fabric() {
        return new TcpFabric();
    }
}
