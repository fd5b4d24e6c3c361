package io.rdmx.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Availability;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Status;
import io.rdmx.transport.internal.WorkQueues;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** What the DiSNI provider does without libdisni: it is listed, says why it is unusable, fails to open clearly. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DisniUnitTest {
    @Test
    void listedWithAReasonAndOpenFailsClearlyWithoutLibdisni() {
        DisniFabric f = (DisniFabric) Fabrics.get("disni");
        Availability a = f.availability();
        assertTrue(a.reason().startsWith("disni: ") || a.usable(), a.reason());
        if (DisniFabric.loadFailure() != null) {
            assertTrue(a.reason().contains("libdisni") && a.reason().contains("java.library.path"), a.reason());
            RdmxException e = assertThrows(RdmxException.class,
                () -> f.open(NodeOptions.builder().name("nodisni").build()));
            assertTrue(e.getMessage().contains("libdisni"), e.getMessage());
            // nothing else broke: another provider still opens
            assertTrue(Fabrics.get("loopback").availability().usable());
        }
    }

    @Test
    void workCompletionStatusesMapToTheSpi() {
        assertEquals(Status.REMOTE_ACCESS_ERROR, WorkQueues.status(DisniNode.failure(10)));
        assertEquals(Status.REMOTE_INVALID_REQUEST, WorkQueues.status(DisniNode.failure(9)));
        assertEquals(Status.LOCAL_LENGTH_ERROR, WorkQueues.status(DisniNode.failure(1)));
        assertEquals(Status.FLUSHED, WorkQueues.status(DisniNode.failure(5)));
        assertEquals(Status.TRANSPORT_ERROR, WorkQueues.status(DisniNode.failure(12)));
    }
}
