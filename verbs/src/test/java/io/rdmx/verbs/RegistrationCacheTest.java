package io.rdmx.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Access;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Region;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The registration cache on a real device (Soft-RoCE in CI); skipped with the reason where none is usable. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RegistrationCacheTest {
    @BeforeAll
    static void rdma() {
        RequiresRdma.assume();
    }

    @Test
    void localRegionsAreReusedZeroedAndRemoteOnesNever() throws Exception {
        VerbsNode n = (VerbsNode) new VerbsFabric().open(NodeOptions.builder().name("cache").build());
        try {
            RegistrationCache cache = n.registrationCache();
            Region a = n.register(8192, Access.LOCAL_WRITE);
            long regs = cache.registrations();
            int lkey = a.localKey();
            long address = a.address();
            a.buffer().putLong(0, 42);
            assertTrue(a.release());
            assertEquals(8192, cache.cachedBytes());
            Region b = n.register(8192, Access.LOCAL_WRITE);
            assertEquals(1, cache.hits());
            assertEquals(regs, cache.registrations(), "served without ibv_reg_mr");
            assertEquals(lkey, b.localKey());
            assertEquals(address, b.address());
            assertEquals(0, b.buffer().getLong(0), "reused memory is zeroed");
            Region other = n.register(4096, Access.LOCAL_WRITE);
            assertEquals(regs + 1, cache.registrations(), "another length is a new registration");
            Region remote = n.register(8192, Access.ALL);
            int rkey = remote.remoteKey();
            assertTrue(remote.release());
            assertEquals(0, cache.cachedBytes(), "remotely writable regions are deregistered at once");
            Region again = n.register(8192, Access.ALL);
            assertNotEquals(rkey, again.remoteKey(), "a new registration has a new remote key");
            assertEquals(regs + 3, cache.registrations());
            b.release();
            other.release();
            again.release();
        } finally {
            n.close();
        }
        assertEquals(0, n.registrationCache().cachedBytes(), "closing the node empties the cache");
        assertThrows(RdmxException.class, () -> n.register(64, Access.ALL));
    }
}
