package io.rdmx.transport.shm;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.testsuite.CompletionQueueFollowerSuite;

/** The completion queue's leader/follower input on shm's Unix-domain sockets. */
class ShmCompletionQueueFollowerTest extends CompletionQueueFollowerSuite {
    @Override
    protected Fabric fabric() {
        return new ShmFabric();
    }
}
