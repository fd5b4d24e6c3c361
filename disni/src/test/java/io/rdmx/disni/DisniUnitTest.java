package io.rdmx.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.RdmaCmEvent;
import io.rdmx.transport.Access;
import io.rdmx.transport.Availability;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Status;
import io.rdmx.transport.internal.RdmaCmFlow;
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
        String failure = DisniFabric.loadFailure();
        if (failure != null) {
            assertTrue(a.reason().contains(failure), a.reason());
            assertTrue(failure.contains("--add-exports")
                || failure.contains("libdisni") && failure.contains("java.library.path"), failure);
            RdmxException e = assertThrows(RdmxException.class,
                () -> f.open(NodeOptions.builder().name("nodisni").build()));
            assertTrue(e.getMessage().contains(failure), e.getMessage());
            // nothing else broke: another provider still opens
            assertTrue(Fabrics.get("loopback").availability().usable());
        }
    }

    @Test
    void withoutTheExportOfSunNioChDisniIsUnusableAndTheReasonNamesTheJvmOption() {
        Module unnamed = DisniUnitTest.class.getModule();
        String why = DisniFabric.missingExport(unnamed);
        if (Object.class.getModule().isExported("sun.nio.ch", unnamed)) {
            assertEquals(null, why);
        } else {
            assertTrue(why.contains("--add-exports java.base/sun.nio.ch=ALL-UNNAMED"), why);
        }
        assertEquals(null, DisniFabric.missingExport(Object.class.getModule()), "java.base itself");
    }

    @Test
    void aRefusedCqSizeIsFollowedByTheLargestAllOnesSizeBelowIt() {
        assertEquals(65535, DisniNode.smallerCq(65536));
        assertEquals(32767, DisniNode.smallerCq(65535));
        assertEquals(16383, DisniNode.smallerCq(32767));
        assertEquals(32767, DisniNode.smallerCq(40000));
        assertEquals(0, DisniNode.smallerCq(1));
    }

    /** DiSNI's own Java, no libdisni needed: its setters of the READ depths throw, so connParam sets neither. */
    @Test
    void theConnectionParametersAreOnesDisniAccepts() throws Exception {
        var p = DisniCmFlow.connParam();
        assertEquals(7, p.getRetry_count());
        assertEquals(7, p.getRnr_retry_count());
    }

    /**
     * SPI access to {@code ibv_access_flags} (DiSNI's constants are plain Java): REMOTE_READ only where asked, and a
     * read-only buffer (a file region) never with LOCAL_WRITE, which ibv_reg_mr refuses on a read-only mapping.
     */
    @Test
    void accessBitsMapToIbvAccessFlags() {
        int lw = IbvMr.IBV_ACCESS_LOCAL_WRITE;
        assertEquals(lw, DisniNode.accessFlags(0, false));
        assertEquals(lw | IbvMr.IBV_ACCESS_REMOTE_WRITE, DisniNode.accessFlags(Access.ALL, false));
        assertEquals(lw | IbvMr.IBV_ACCESS_REMOTE_READ,
            DisniNode.accessFlags(Access.LOCAL_WRITE | Access.REMOTE_READ, false));
        assertEquals(IbvMr.IBV_ACCESS_REMOTE_READ, DisniNode.accessFlags(Access.REMOTE_READ, true));
        assertEquals(0, DisniNode.accessFlags(0, true));
        assertThrows(IllegalArgumentException.class, () -> DisniNode.accessFlags(Access.ALL, true));
    }

    @Test
    void softRoceStatusesOfATooSmallReceiveMapAsOnHardware() {
        assertEquals(Status.LOCAL_LENGTH_ERROR, WorkQueues.status(DisniNode.failure(2, true, true, null)));
        assertEquals(Status.REMOTE_INVALID_REQUEST,
            WorkQueues.status(DisniNode.failure(11, true, false, Opcode.SEND)));
        assertEquals(Status.TRANSPORT_ERROR, WorkQueues.status(DisniNode.failure(11, true, false, Opcode.WRITE)));
        assertEquals(Status.TRANSPORT_ERROR, WorkQueues.status(DisniNode.failure(2, false, true, null)));
        assertEquals(Status.REMOTE_ACCESS_ERROR, WorkQueues.status(DisniNode.failure(10, true, false, Opcode.WRITE)));
    }

    @Test
    void workCompletionStatusesMapToTheSpi() {
        assertEquals(Status.REMOTE_ACCESS_ERROR, WorkQueues.status(DisniNode.failure(10)));
        assertEquals(Status.REMOTE_INVALID_REQUEST, WorkQueues.status(DisniNode.failure(9)));
        assertEquals(Status.LOCAL_LENGTH_ERROR, WorkQueues.status(DisniNode.failure(1)));
        assertEquals(Status.FLUSHED, WorkQueues.status(DisniNode.failure(5)));
        assertEquals(Status.TRANSPORT_ERROR, WorkQueues.status(DisniNode.failure(12)));
    }

    /** The shared setup flow numbers rdma_cm's events as DiSNI's EventType ordinals do (DiSNI's own Java). */
    @Test
    void theSetupFlowsEventNumbersAreDisnisOrdinals() {
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_ADDR_RESOLVED.ordinal(), RdmaCmFlow.ADDR_RESOLVED);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_ROUTE_RESOLVED.ordinal(), RdmaCmFlow.ROUTE_RESOLVED);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_REQUEST.ordinal(), RdmaCmFlow.CONNECT_REQUEST);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_REJECTED.ordinal(), RdmaCmFlow.REJECTED);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_ESTABLISHED.ordinal(), RdmaCmFlow.ESTABLISHED);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_DISCONNECTED.ordinal(), RdmaCmFlow.DISCONNECTED);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_DEVICE_REMOVAL.ordinal(), RdmaCmFlow.DEVICE_REMOVAL);
        assertEquals(RdmaCmEvent.EventType.RDMA_CM_EVENT_TIMEWAIT_EXIT.ordinal(), RdmaCmFlow.TIMEWAIT_EXIT);
    }
}
